// Package sessiontest checks that a session.Store keeps the contract the
// agent loop relies on, in the way testing/fstest checks an fs.FS.
//
//	func TestMyStore(t *testing.T) {
//		sessiontest.TestStore(t, func(t *testing.T) session.Store { return newMyStore(t) })
//	}
package sessiontest
