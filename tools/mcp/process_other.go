//go:build !unix

package mcp

import (
	"os/exec"
	"time"

	"github.com/go-harness/harness/internal/proctree"
)

// start starts a server as a plain process: this system has no way to
// contain what it starts, and a stop ends the server's own process only.
func start(_ *proctree.Containment, x proctree.Command) (running, error) {
	cmd := exec.Command(x.Argv[0], x.Argv[1:]...)
	cmd.Dir, cmd.Env = x.Dir, x.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = x.Stdin, x.Stdout, x.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &plain{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

type plain struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *plain) MainDone() <-chan struct{} { return p.done }

func (p *plain) How() string {
	return "none (this system has no containment: only the server's own process is stopped)"
}

func (p *plain) Stop(grace time.Duration) proctree.Outcome {
	select {
	case <-p.done:
		return proctree.Outcome{}
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return proctree.Outcome{Signal: "SIGKILL"}
}
