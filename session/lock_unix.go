//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"

	"github.com/go-harness/harness"
)

// lockFile takes an exclusive advisory lock on f, failing at once with
// harness.CodeLocked when another open file holds it.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
	}); err != nil {
		return err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return storeErr(harness.CodeLocked)
	}
	return lerr
}

// unlockFile lets go of f's lock before f is closed. Closing alone is not
// enough at once: a child process forked meanwhile shares the open file,
// and with it the lock, until it execs, and a log opened again in that
// window would find itself locked out.
func unlockFile(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = syscall.Flock(int(fd), syscall.LOCK_UN)
	})
}
