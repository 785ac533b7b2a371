// Package sessiontest checks that a session.Store keeps the contract the
// agent loop relies on, in the way testing/fstest checks an fs.FS.
//
//	func TestMyStore(t *testing.T) {
//		sessiontest.TestStore(t, func(t *testing.T, maxLineSize int) session.Store {
//			return newMyStore(t, maxLineSize) // 0: the store's default bound
//		})
//	}
//
// TestStore holds every store to a bound on its log lines: by default
// the 16 MiB of the stores of this module, or what the store's
// MaxLineSize method reports. When the store can be given a bound, it is
// also checked closer at a few KiB: an event just below the bound is
// kept, and one above it is refused with its whole batch, whatever its
// type.
//
// It checks the management methods too: Fork (events copied byte for
// byte up to the fork point, the parent untouched, the fork resumable,
// also while the parent is open), Rename and Tag (kept beside the log,
// shown and filtered by List, gone with Delete), and what a Retention
// releases.
//
// TestAttachments checks an attachment store (Put and Get by digest).
// PowerLossAttachments is an in-memory one that also stages and syncs,
// and forgets what was never synced on PowerLoss, for tests of code
// that promises durability.
//
// It imports harness, session and session/search (its suite searches
// every store), and the module's internal helpers.
package sessiontest
