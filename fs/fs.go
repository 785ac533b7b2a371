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
