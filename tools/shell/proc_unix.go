//go:build unix

package shell

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

const supported = true

// groupAttr starts a process as the leader of a new session, and so of
// a new process group that can be signalled as a whole. A new session has
// no controlling terminal: a program that opens /dev/tty to prompt fails
// at once instead of stopping the group on SIGTTIN.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errors.New("shell: refusing to signal process group <= 1")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// terminateGroup sends SIGTERM to the process group.
func terminateGroup(pgid int) error { return signalGroup(pgid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the process group.
func killGroup(pgid int) error { return signalGroup(pgid, syscall.SIGKILL) }

// interruptGroup sends SIGINT to the process group.
func interruptGroup(pgid int) error { return signalGroup(pgid, syscall.SIGINT) }

// groupAlive reports whether a process of the group still runs. Zombies
// (exited, not yet reaped by their parent) do not count where the
// platform lets us tell them apart.
func groupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return liveMember(pgid)
}

// pidAlive reports whether the process runs (and is not a zombie).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return !zombie(pid)
}

// exitSignal names the signal that ended a process, if one did.
func exitSignal(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return signalName(ws.Signal())
	}
	return ""
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGFPE:
		return "SIGFPE"
	case syscall.SIGILL:
		return "SIGILL"
	}
	return fmt.Sprintf("signal %d (%v)", int(s), s)
}
