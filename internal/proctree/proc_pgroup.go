//go:build unix && !linux

package proctree

import (
	"os/exec"
	"syscall"
	"time"
)

// Without PID namespaces and /proc, the tools follow the command's
// process group only: a process that starts a session or group of its
// own is not found, and the result text says which containment was in
// force.

func probe(o Options) *Containment {
	reason := "this system has none"
	if o.NoNamespace != nil {
		reason = o.NoNamespace.Error()
	}
	return &Containment{kind: containGroup, reason: reason}
}

func startContained(c *Containment, x Command) (*Proc, error) {
	cmd := &exec.Cmd{Path: x.Argv[0], Args: x.Argv, Dir: x.Dir, Env: x.Env, Stdin: stdinOf(x), Stdout: writer(x.Stdout), Stderr: writer(x.Stderr),
		ExtraFiles: x.Extra, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, cont: c, how: c.String(), main: cmd.Process.Pid, mainDone: make(chan struct{}), gone: make(chan struct{})}
	go p.waitMain()
	return p, nil
}

// members stands for the process group as a whole while any process of
// it runs: without /proc its processes cannot be listed.
func (p *Proc) Members(full bool) []Member {
	if err := syscall.Kill(-p.main, 0); err != nil && err != syscall.EPERM {
		return nil
	}
	return []Member{{PID: p.main, Name: "process group"}}
}

func (p *Proc) terminate(ms []Member) { _ = signalGroup(p.main, syscall.SIGTERM) }

func (p *Proc) finish() []Member {
	deadline := time.Now().Add(killWait)
	for len(p.Members(true)) > 0 {
		_ = signalGroup(p.main, syscall.SIGKILL)
		if time.Now().After(deadline) {
			return p.Members(true)
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-p.gone
	return nil
}

// probeNamespace is probe: there is no cgroup containment here.
func probeNamespace(o Options) *Containment { return probe(o) }
