//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package ui

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// keyMode puts the terminal on fd in the mode the line editor needs:
// keys arrive one by one and are not echoed (the editor draws the line,
// and keys typed during a turn stay off the screen), while Ctrl-C still
// raises SIGINT and output still turns "\n" into a line end. It returns
// the function that restores the terminal.
func keyMode(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.IEXTEN
	t.Iflag &^= unix.IXON | unix.ICRNL | unix.INLCR | unix.IGNCR
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}

// NotifyResize delivers SIGWINCH, which a terminal sends when its size
// changes.
func NotifyResize(c chan<- os.Signal) { signal.Notify(c, syscall.SIGWINCH) }
