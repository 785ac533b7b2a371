//go:build !unix

package shell

import (
	"errors"
	"os"
	"syscall"
)

const supported = false

var errUnsupported = errors.New("shell: process groups are not supported on this platform")

func groupAttr() *syscall.SysProcAttr { return nil }

func terminateGroup(pgid int) error { return errUnsupported }
func killGroup(pgid int) error      { return errUnsupported }
func interruptGroup(pgid int) error { return errUnsupported }
func groupAlive(pgid int) bool      { return false }
func pidAlive(pid int) bool         { return false }

func exitSignal(st *os.ProcessState) string { return "" }
