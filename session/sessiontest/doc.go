// Package sessiontest checks that a session.Store keeps the contract the
// agent loop relies on, in the way testing/fstest checks an fs.FS.
//
//	func TestMyStore(t *testing.T) {
//		sessiontest.TestStore(t, func(t *testing.T) session.Store { return newMyStore(t) })
//	}
//
// TestStore holds every store to a bound on its log lines
// (the 16 MiB default, or what the store's MaxLineSize method
// reports). A store whose bound can be set is checked closer with
// TestMaxLineSize:
//
//	func TestMyStoreLines(t *testing.T) {
//		sessiontest.TestMaxLineSize(t, func(t *testing.T, max int) session.Store { return newMyStore(t, max) })
//	}
//
// It imports harness and session only, like the log itself.
package sessiontest
