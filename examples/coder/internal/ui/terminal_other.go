//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package ui

import (
	"errors"
	"os"
)

// keyMode is not available here: the prompt loop reads whole lines as
// the terminal delivers them.
func keyMode(int) (func(), error) {
	return nil, errors.New("line editing is not supported on this system")
}

// NotifyResize does nothing: the width is read at start only.
func NotifyResize(chan<- os.Signal) {}
