// Package fslocal implements fs.FileSystem over the operating system's file
// system, confined to a root directory. [New] returns an [FS]: the
// contract of package fs with the optional capabilities this
// implementation always has (io.Closer, fs.Rooter, fs.LocalPather,
// fs.Opener, fs.DirOpener); the concrete type is unexported, as os.DirFS's
// is.
//
// The namespace is the OS's own: a file's path is its absolute OS path,
// slash-separated, and only paths at or below the root are accepted, so
// paths the model sees in tool output, in shell output and in error
// messages all agree. The root is also the natural working directory of a
// session (fs.Rooter, which [FS] guarantees).
//
// Confinement: every access goes through an os.Root opened on the root
// directory (or, for a file named directly in a directory view that has
// listed its directory, through that directory's descriptor, by one name
// and never following a link), which refuses to leave it: "..", absolute paths outside, and
// symbolic links that lead out (including one swapped in between a check
// and the access that follows) fail with harness.CodeOutsideRoot. Links that
// stay inside the root, absolute ones included, are followed. Hard links
// and bind mounts that already reach outside the root are not detected.
//
// Path policy: WithPathPolicy (fs.PolicyEnforcer, which fs.Restrict uses)
// returns a view that checks each access against a policy on the path as
// given and as resolved before anything is opened, on the path the kernel
// reports for the opened descriptor (/proc/self/fd on Linux) with the
// file's device, inode and link count before anything is read, and on the
// directory of the temporary file before a change is renamed into place.
// So a symbolic link swapped in between a check and an open, or a hard
// link to a denied file, reads nothing. A change through a directory
// swapped for a link may leave empty directories created on the way.
//
// Writes are atomic: a temporary file in the same directory (mode 0600),
// written and synced, then given the replaced file's mode (and owner, where
// the process may set it), renamed over the target, and the directory
// synced. Create-only writes hard-link the temporary file to its name, so
// a file created concurrently is never clobbered. Changes of one path are
// serialized within the process; the lock is not visible to other
// processes.
//
// Versions combine metadata (device, inode, size, modification and change
// time in nanoseconds) with a 64-bit content sum. When the timestamps are
// older than two seconds the metadata alone proves that a file is
// unchanged, so checking a version costs one fstat; for a file changed
// more recently (whose timestamps could repeat within one tick) the
// content sum decides, which catches a change made in the same second and
// at the same size. A file rewritten with identical bytes keeps matching.
// Files larger than 64 MiB (the largest file Edit loads) are not summed
// when read, so reading a huge log costs about what wc -l does; their
// versions rest on metadata alone, and one changed in the last two
// seconds counts as changed.
//
// It imports harness, fs (the contract it implements) and internal/fsimpl
// (the path checks and write rules it shares with fs/fstest); nothing of
// tools, session or agent.
package fslocal
