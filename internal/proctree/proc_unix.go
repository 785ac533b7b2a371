//go:build unix

package proctree

import (
	"errors"
	"fmt"
	"syscall"
)

const supported = true

// signalPID sends sig to one process; a process already gone is no
// error.
func signalPID(pid int, sig syscall.Signal) error {
	if pid <= 1 {
		return errors.New("proctree: refusing to signal pid <= 1")
	}
	err := syscall.Kill(pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// signalGroup sends sig to a process group; a group already gone is no
// error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errors.New("proctree: refusing to signal process group <= 1")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Interrupt sends SIGINT to the main process's process group: for a
// persistent shell, the shell (which traps it) and its foreground
// command.
func (p *Proc) Interrupt() error { return signalGroup(p.main, syscall.SIGINT) }

// KillMain sends SIGKILL to the main process alone.
func (p *Proc) KillMain() error { return signalPID(p.main, syscall.SIGKILL) }

// setExit records the main process's wait status.
func (p *Proc) setExit(ws syscall.WaitStatus) {
	switch {
	case ws.Exited():
		c := ws.ExitStatus()
		p.code = &c
	case ws.Signaled():
		p.signal = signalName(ws.Signal())
	}
}

// waitMain waits for the main process, records how it ended, and closes
// mainDone and gone: without a namespace's init, the command is gone
// when its main process is (what it leaves running is reaped apart).
func (p *Proc) waitMain() {
	p.waitErr = p.cmd.Wait()
	if ws, ok := waitStatus(p); ok {
		p.setExit(ws)
	}
	close(p.mainDone)
	close(p.gone)
}

// waitStatus returns the wait status of a process that exec.Cmd waited
// for.
func waitStatus(p *Proc) (syscall.WaitStatus, bool) {
	if p.cmd.ProcessState == nil {
		return 0, false
	}
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, ok
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
