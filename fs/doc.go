// Package fs defines the FileSystem the agent's file tools work through,
// its version tokens and typed errors, and the observation ledger that
// makes read-before-edit safe.
//
// A [FileSystem] names files by absolute, slash-separated paths in its own
// namespace. It reads text windows (streaming: memory stays bounded on any
// file size and the total line count is exact), reads whole files under a
// hard size cap ([FileSystem.ReadBytes]), writes atomically with a
// [Precondition] (create only if absent, or replace only if the version is
// unchanged), applies literal edits, and lists directories. Package fslocal
// implements it over the OS file system, confined to a root; package
// fs/fstest has an in-memory implementation and the conformance suite any
// implementation must pass. [IOFS] gives any FileSystem an io/fs.FS view.
//
// Every failure is an [*Error] with a stable [Code] (not found, not text,
// outside root, stale version, edit not found, ...). Match it with
// errors.Is against the sentinels (ErrNotFound, ErrStale, ...) or read it
// with errors.As. Its ErrorCode method makes tools report the code.
//
// A version (FileInfo.Version) identifies a file's content: a read, write
// or edit returns one, and handing it back in a Precondition makes a later
// change fail with CodeStale if the file changed in between, even within
// the same second and at the same size.
//
// The pure functions [ScanText] and [ApplyEdit] are the shared semantics of
// text windows and edits; implementations use them so that every
// FileSystem behaves alike. [Ledger] remembers, per agent session, the
// version of each file the agent has seen, and turns that into the
// preconditions of its writes and edits.
package fs
