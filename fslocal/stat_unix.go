//go:build linux || darwin

package fslocal

import (
	"os"
	"syscall"

	"github.com/go-harness/harness/fs"
)

func statMeta(fi os.FileInfo) meta {
	m := meta{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		m.dev, m.ino = uint64(st.Dev), uint64(st.Ino)
		m.ctime = ctime(st)
		m.hasCtime = true
		m.uid, m.gid, m.hasOwner = int(st.Uid), int(st.Gid), true
	}
	return m
}

// fileID returns the identity hard links share.
func fileID(fi os.FileInfo) fs.FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fs.FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Links: uint64(st.Nlink), Changed: ctime(st)}
	}
	return fs.FileID{}
}
