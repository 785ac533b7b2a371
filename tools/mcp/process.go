package mcp

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// process is a stdio server's process: its standard error is kept (the
// end of it, for error messages) and, on Unix, it runs in a process group
// of its own so that stopping it stops what it started too.
type process struct {
	cmd    *exec.Cmd
	stderr *tail
}

func newProcess(cmd *exec.Cmd, terminate time.Duration) *process {
	p := &process{cmd: cmd, stderr: &tail{max: stderrKeep}}
	cmd.Stderr = p.stderr
	// A grandchild that keeps standard error open must not hold Close.
	cmd.WaitDelay = terminate
	ownGroup(cmd)
	return p
}

// stderrKeep is how much of a server's standard error is kept.
const stderrKeep = 4 << 10

// stop kills whatever is left of the process group once the SDK has
// closed the connection (which ends the server itself).
func (p *process) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	killGroup(p.cmd)
}

// stderrTail is the end of the server's standard error, to append to a
// message, or "".
func (p *process) stderrTail() string {
	if p == nil {
		return ""
	}
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" (its standard error ends: %q)", lastLines(s, 5))
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
