//go:build linux

package fslocal

import (
	"os"
	"strconv"
)

// fdPath returns the path the kernel holds for the open file: where the
// file really is, whatever links led to it.
func fdPath(file *os.File) (string, bool) {
	conn, err := file.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	var rerr error
	if err := conn.Control(func(fd uintptr) {
		p, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	}); err != nil || rerr != nil || p == "" || p[0] != '/' {
		return "", false
	}
	return p, true
}
