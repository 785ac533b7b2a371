package fs

import (
	"context"
	"io"
	iofs "io/fs"
	"time"
)

// FileSystem is the file access a session's tools go through. Paths are
// absolute, slash-separated paths in the file system's namespace; an
// implementation cleans them and refuses relative ones with
// harness.CodeInvalidPath. Every error is a *harness.Error with a stable
// code, built with [NewError].
//
// Implementations must be safe for concurrent use. Write and Edit of one
// path are serialized within the process, so that a read-modify-write
// with a version precondition cannot lose an update.
type FileSystem interface {
	// Stat describes the file or directory at path, following symbolic
	// links. For a regular file, Version identifies its content.
	Stat(ctx context.Context, path string) (FileInfo, error)

	// ReadText returns a window of the lines of the UTF-8 text file at
	// path (see [ScanText] for the rules) and the file's version. It
	// streams: memory stays bounded whatever the file's size, and the
	// total line count is exact.
	ReadText(ctx context.Context, path string, w Window) (*Text, error)

	// ReadBytes returns the whole content of the regular file at path if it has
	// at most maxBytes bytes. A larger file is refused with
	// harness.CodeTooLarge by its size before anything is read; a file that
	// grows past maxBytes while it is read is refused too. It never truncates.
	ReadBytes(ctx context.Context, path string, maxBytes int64) ([]byte, FileInfo, error)

	// Write replaces or creates the file at path with data, atomically:
	// readers see the old content or the new, never a mix. Missing parent
	// directories are created. The precondition is checked under the
	// path's lock.
	Write(ctx context.Context, path string, data []byte, opts WriteOptions) (*WriteResult, error)

	// Edit replaces literal text in the UTF-8 text file at path (see
	// [ApplyEdit]) and writes the result atomically. The precondition is
	// checked before the text is searched, so a stale file is reported as
	// stale, never as "not found" or "ambiguous". A file larger than 64 MiB
	// is refused with harness.CodeTooLarge.
	Edit(ctx context.Context, path string, e Edit, pre Precondition) (*EditResult, error)

	// ReadDir lists the directory at path, sorted by name. Entries are
	// described without following symbolic links and without versions.
	ReadDir(ctx context.Context, path string) ([]FileInfo, error)
}

// FileInfo describes a file or directory.
type FileInfo struct {
	// Path is the clean absolute path in the file system's namespace.
	Path string
	// Size is the length in bytes of a regular file.
	Size int64
	// Mode holds the type and permission bits.
	Mode iofs.FileMode
	// ModTime is the last modification time.
	ModTime time.Time
	// Version identifies the content of a regular file: two reads that
	// return the same version saw the same bytes. It is opaque; compare
	// it only by handing it back in a [Precondition]. Empty for
	// directories and in ReadDir results.
	Version string
}

// Precondition guards a change. The zero value is unconditional.
type Precondition struct {
	// Absent requires that the file does not exist: a create that cannot
	// clobber a file created concurrently. It fails with harness.CodeExists.
	Absent bool
	// Version, when set, requires that the file still has this version
	// (as returned by a read, write or edit). It fails with
	// harness.CodeStale, also when the file no longer exists (the error
	// then also matches io/fs.ErrNotExist through its wrapped error).
	Version string
}

// WriteOptions configure a Write.
type WriteOptions struct {
	// Pre guards the write.
	Pre Precondition
	// KeepStyle makes a write that replaces a file keep that file's line
	// endings and byte order mark: the new content gets the old content's
	// mark if it has none, and CR LF line endings if most of the old
	// content's line endings are CR LF and the new content has no carriage
	// return at all. So a writer that saw the file through a read window
	// (which shows LF and hides the mark) writes it back unchanged.
	KeepStyle bool
}

// WriteResult reports a completed write.
type WriteResult struct {
	// Info describes the file after the write, with its new version.
	Info FileInfo
	// Created reports that the file did not exist before.
	Created bool
	// Unchanged reports that the file already held exactly the bytes to
	// write, so it was left untouched (its metadata too).
	Unchanged bool
	// Previous is the content the write replaced, when there was one of
	// at most 8 MiB; PreviousSize is its size in any case.
	Previous     []byte
	PreviousSize int64
	// Written is what was written: the data, restyled when KeepStyle
	// applied.
	Written []byte
}

// Edit is a literal text replacement.
type Edit struct {
	// Old is the text to find. It must not be empty.
	Old string
	// New replaces it. It must differ from Old.
	New string
	// ReplaceAll replaces every occurrence; otherwise Old must occur
	// exactly once.
	ReplaceAll bool
}

// EditResult reports a completed edit.
type EditResult struct {
	// Info describes the file after the edit, with its new version.
	Info FileInfo
	// Replacements is the number of occurrences replaced.
	Replacements int
	// Old and New are the whole content before and after the edit.
	Old, New []byte
	// Spans locate the replaced regions, in order.
	Spans []Span
}

// Span locates one replacement: Old[OldStart:OldEnd] became
// New[NewStart:NewEnd].
type Span struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// LocalPather is implemented by file systems backed by the OS file system.
// LocalPath maps a path of the file system's namespace to the OS path it
// names, refusing paths that leave the file system's root. Tools that run
// OS processes (bash) use it to confine a working directory.
type LocalPather interface {
	LocalPath(path string) (string, error)
}

// Rooter is implemented by file systems whose namespace has a root other
// than "/" or that want to name it: Root returns the absolute namespace
// path of the root, which is also a good default working directory. The
// root of a file system that does not implement it (or whose Root is
// empty) is "/".
type Rooter interface {
	Root() string
}

// Opener is implemented by file systems that can stream a regular file.
// Open returns the file's content as a stream; the caller closes it.
type Opener interface {
	Open(ctx context.Context, path string) (io.ReadCloser, FileInfo, error)
}

// DirOpener is implemented by file systems that can confine a view to a
// directory cheaply. OpenDir returns a file system with the same
// namespace that accepts only paths at or below dir (others fail with
// harness.CodeOutsideRoot) and resolves them from dir instead of from
// the root, so a tree walk that opens many files of one directory pays
// for the directory's path once. Its Root is dir. The caller closes the
// view when it implements io.Closer; closing it leaves fsys open.
type DirOpener interface {
	OpenDir(ctx context.Context, dir string) (FileSystem, error)
}
