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
// Optional capabilities are found by type assertion, as io/fs does: [Opener]
// streams a file, [Rooter] names the root, [LocalPather] maps a path to the
// OS, and [DirOpener] opens a view confined to a directory, which tree walks
// (the search tools) use so that each file's path is not resolved from the
// root again.
//
// Every failure is a *harness.Error with a stable code
// (harness.CodeNotFound, harness.CodeNotText, harness.CodeOutsideRoot,
// harness.CodeStale, harness.CodeEditNotFound, ...), built with
// [NewError]: match it with errors.Is(err, harness.CodeStale), and read
// what the operation was and what the caller needs to explain it (the
// lines of an ambiguous edit, the size limit) from its [*PathError]
// cause with errors.As.
//
// # Path policy
//
// A [PathPolicy] decides which paths may be read or changed; package
// tools/permission derives one from its Read and Edit rules. [Restrict]
// puts it below every tool: the file system it returns answers "not found"
// for a path the policy denies for reading (word for word as for an
// absent path, and ReadDir, views and io/fs walks leave such paths out),
// and refuses changes of a path denied for changing or for reading with
// harness.CodeDenied, naming what denies it. [PolicyOf] tells tools that
// reach files another way (session logs, saved outputs) which policy to
// obey. A file system with links implements [PolicyEnforcer] (fslocal
// does) so that the policy is checked on the path the operating system
// resolved, symbolic links followed and hard links found ([FileID]), at the
// moment each file is opened: a link swapped in after a check is caught.
// A policy that can list what it denies ([DenyLister]) lets a sandbox mask
// the same paths from commands.
//
// A version (FileInfo.Version) identifies a file's content: a read, write or
// edit returns one, and handing it back in a Precondition makes a later change
// fail with harness.CodeStale if the file changed in between, even within the
// same second and at the same size.
//
// The pure functions [ScanText] and [ApplyEdit] are the shared semantics of
// text windows and edits; implementations use them so that every
// FileSystem behaves alike. [Ledger] remembers, per agent session, the
// version of each file the agent has seen, and turns that into the
// preconditions of its writes and edits.
//
// It imports harness (for the error type and codes) only; nothing of
// tools, session or agent. What only implementations share (path checks,
// the write style rule) is in internal/fsimpl, which imports fs.
package fs
