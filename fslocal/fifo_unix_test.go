//go:build unix

package fslocal_test

import (
	"os"
	"syscall"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

// maxRSSKiB returns a finished process's peak resident set, in KiB on
// Linux.
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
