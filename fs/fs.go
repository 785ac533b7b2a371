package fs

import "context"

// FileSystem is the file access a session's tools go through.
type FileSystem interface {
	// Stat describes the file at path.
	Stat(ctx context.Context, path string) (FileInfo, error)
}

// FileInfo describes a file.
type FileInfo struct {
	Path    string
	Size    int64
	IsDir   bool
	Version string
}

// LocalPather is implemented by file systems backed by the OS file system.
// LocalPath maps a path of the file system's namespace to the OS path it
// names, refusing paths that leave the file system's root. Tools that run
// OS processes (bash) use it to confine a working directory.
type LocalPather interface {
	LocalPath(path string) (string, error)
}
