//go:build unix && !linux

package shell

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Without PID namespaces and /proc, the tools follow the command's
// process group only: a process that starts a session or group of its
// own is not found, and the result text says which containment was in
// force.

func probeContainment(c *config) *containment {
	reason := "this system has none"
	if c.noNamespace != nil {
		reason = c.noNamespace.Error()
	}
	return &containment{kind: containGroup, reason: reason}
}

func startContained(c *containment, argv []string, dir string, env []string, stdout, stderr *os.File, extra []*os.File) (*proc, error) {
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Dir: dir, Env: env, Stdout: stdout, Stderr: stderr,
		ExtraFiles: extra, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, cont: c, how: c.String(), main: cmd.Process.Pid, mainDone: make(chan struct{}), gone: make(chan struct{})}
	go p.waitMain()
	return p, nil
}

// members stands for the process group as a whole while any process of
// it runs: without /proc its processes cannot be listed.
func (p *proc) members(full bool) []member {
	if err := syscall.Kill(-p.main, 0); err != nil && err != syscall.EPERM {
		return nil
	}
	return []member{{pid: p.main, name: "process group"}}
}

func (p *proc) terminate(ms []member) { _ = signalGroup(p.main, syscall.SIGTERM) }

func (p *proc) finish() []member {
	deadline := time.Now().Add(killWait)
	for len(p.members(true)) > 0 {
		_ = signalGroup(p.main, syscall.SIGKILL)
		if time.Now().After(deadline) {
			return p.members(true)
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-p.gone
	return nil
}
