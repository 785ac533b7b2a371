//go:build linux || darwin || freebsd || netbsd || openbsd

package search

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps a log of size bytes into memory, read-only, when the
// system can: a scan then reads the page cache in place instead of
// copying it into a buffer. ok is false when it cannot, and the log is
// read.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, false
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = unix.Munmap(data) }, true
}
