//go:build unix

package permission

import (
	"os"
	"syscall"
)

// statID returns the device and inode of a file.
func statID(st os.FileInfo) (dev, ino uint64, ok bool) {
	if sys, isStat := st.Sys().(*syscall.Stat_t); isStat {
		return uint64(sys.Dev), uint64(sys.Ino), true
	}
	return 0, 0, false
}

// stampOf returns what shows that a directory changed.
func stampOf(st os.FileInfo) (dirStamp, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return dirStamp{}, false
	}
	return dirStamp{dev: uint64(sys.Dev), ino: uint64(sys.Ino), mtime: timespecNano(sys, false), ctime: timespecNano(sys, true)}, true
}
