package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// process is a stdio server's process: its standard error is kept (the
// end of it, for error messages) and, on Unix, it runs in a process group
// of its own so that stopping it stops what it started too.
//
// It is also the connection's transport, because the shutdown must own
// the wait for the process: the process is reaped as soon as it exits,
// and nothing that stops it returns before that, so a closed server never
// lingers as a child of the host (the SDK's command transport gives up
// waiting after a fixed time and reaps it later).
type process struct {
	cmd       *exec.Cmd
	stderr    *tail
	terminate time.Duration
	// done is closed once cmd.Wait has returned: the process has exited
	// and been reaped.
	done chan struct{}
	// stdin and stdout are the harness's ends of the server's standard
	// input and output, set by Connect.
	stdin, stdout *os.File
	shutdownOnce  sync.Once
	releaseOnce   sync.Once
}

func newProcess(cmd *exec.Cmd, terminate time.Duration) *process {
	p := &process{cmd: cmd, stderr: &tail{max: stderrKeep}, terminate: terminate, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	// A grandchild that keeps standard error open must not hold Close.
	cmd.WaitDelay = terminate
	ownGroup(cmd)
	return p
}

// stderrKeep is how much of a server's standard error is kept.
const stderrKeep = 4 << 10

// Connect starts the server and speaks newline-delimited JSON with it
// over its standard input and output (sdk.Transport). The pipes are the
// harness's own, not exec's StdinPipe and StdoutPipe, which Wait closes:
// the process is waited for from the start, and what it wrote before it
// exited must still be read.
func (p *process) Connect(ctx context.Context) (sdk.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p.cmd.Stdin, p.cmd.Stdout = inR, outW
	err = p.cmd.Start()
	// The server's ends are its own now (or of no one, if it did not start).
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p.stdin, p.stdout = inW, outR
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	tr := &sdk.IOTransport{Reader: io.NopCloser(outR), Writer: processInput{p}}
	return tr.Connect(ctx)
}

// processInput is the server's standard input as the connection writes
// it; closing it shuts the server down.
type processInput struct{ p *process }

func (w processInput) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }

func (w processInput) Close() error {
	w.p.shutdown()
	return nil
}

// shutdown ends the server as the MCP specification asks of a stdio
// client: it closes the server's input and waits for it to exit, sends
// SIGTERM if it has not within the terminate duration, and kills its
// process group if it has not after another one. It returns once the
// process has been reaped.
func (p *process) shutdown() {
	p.shutdownOnce.Do(func() {
		_ = p.stdin.Close()
		if !p.exited(p.terminate) {
			if p.cmd.Process.Signal(syscall.SIGTERM) != nil || !p.exited(p.terminate) {
				killGroup(p.cmd)
				<-p.done
			}
		}
		p.release()
	})
}

// exited reports whether the process exits (and is reaped) within d.
func (p *process) exited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// release closes the harness's ends of the pipes, which also ends a read
// of the server's output that a grandchild holding it open would block.
func (p *process) release() {
	p.releaseOnce.Do(func() {
		_ = p.stdin.Close()
		_ = p.stdout.Close()
	})
}

// stop kills whatever is left of the process group once the SDK has
// closed the connection (which ends the server itself), or at once when
// the connection failed, and returns once the server has been reaped.
func (p *process) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	killGroup(p.cmd)
	<-p.done
	p.release()
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
