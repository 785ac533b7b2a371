//go:build linux || darwin

package fslocal

import (
	"os"
	"syscall"
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
