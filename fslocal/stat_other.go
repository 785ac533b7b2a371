//go:build !linux && !darwin

package fslocal

import "os"

// statMeta has only size and modification time here, which never prove
// equality: every version check falls back to the content sum.
func statMeta(fi os.FileInfo) meta {
	return meta{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
