// Package spilltest checks that a spill.Store keeps the contract the spill
// policy, the spill Writer and the read tool rely on, the way
// testing/fstest checks an fs.FS.
//
//	func TestMyStore(t *testing.T) {
//		spilltest.TestStore(t, func(t *testing.T) spill.Store { return newMyStore(t) })
//	}
//
// It imports harness, tools and spill; nothing of session or agent.
package spilltest
