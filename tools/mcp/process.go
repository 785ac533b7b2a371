package mcp

import (
	"context"

	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness/internal/proctree"
)

// process is a stdio server's process and everything it starts,
// contained as the shell tools contain commands (internal/proctree): in
// a PID namespace of its own where the kernel allows it, otherwise
// followed as a process tree, so that stopping the server stops every
// descendant, also one that started a session of its own and ignores
// SIGTERM. The end of its standard error is kept for error messages.
//
// It is also the connection's transport, because the shutdown must own
// the wait for the process: nothing that stops it returns before every
// process of it has ended and been reaped, so a closed server never
// lingers as a child of the host.
type process struct {
	cmd       proctree.Command
	cont      *proctree.Containment // nil where there is none (not Unix)
	stderr    *tail
	terminate time.Duration
	// For the connection: where large results wait for their tools,
	// how large they may be, and where to say what was skipped.
	spools    *spools
	frame     int
	maxResult int64
	logger    *slog.Logger
	server    string

	run running // set by Connect
	// stdin, stdout and errOut are the harness's ends of the server's
	// standard input, output and error, set by Connect.
	stdin, stdout, errOut *os.File
	copied                chan struct{} // closed when standard error is drained

	shutdownOnce, releaseOnce sync.Once
	mu                        sync.Mutex
	outcome                   *proctree.Outcome // how the stop went, once it has
}

// running is a started server: a *proctree.Proc, or on systems without
// containment a plain process.
type running interface {
	MainDone() <-chan struct{}
	Stop(grace time.Duration) proctree.Outcome
	How() string
}

func newProcess(cmd proctree.Command, cont *proctree.Containment, srv *server) *process {
	o := srv.set.opts
	return &process{cmd: cmd, cont: cont, stderr: &tail{max: stderrKeep}, terminate: o.terminate, copied: make(chan struct{}),
		spools: &srv.spools, frame: o.frame, maxResult: o.maxResult, logger: o.logger, server: srv.cfg.Name}
}

// stderrKeep is how much of a server's standard error is kept.
const stderrKeep = 4 << 10

// Connect starts the server and speaks newline-delimited JSON with it
// over its standard input and output (sdk.Transport).
func (p *process) Connect(ctx context.Context) (sdk.Connection, error) {
	var files [6]*os.File // in, out, err: read and write ends
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files[:i] {
				f.Close()
			}
			return nil, err
		}
		files[i], files[i+1] = r, w
	}
	inR, inW, outR, outW, errR, errW := files[0], files[1], files[2], files[3], files[4], files[5]
	x := p.cmd
	x.Stdin, x.Stdout, x.Stderr = inR, outW, errW
	run, err := start(p.cont, x)
	// The server's ends are its own now (or of no one, if it did not start).
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p.run, p.stdin, p.stdout, p.errOut = run, inW, outR, errR
	go func() {
		defer close(p.copied)
		_, _ = io.Copy(p.stderr, errR)
	}()
	return newStdioConn(outR, processInput{p}, p.spools, p.frame, p.maxResult, p.logger, p.server), nil
}

// how describes the containment in force, or "" before the start.
func (p *process) how() string {
	if p == nil || p.run == nil {
		return ""
	}
	return p.run.How()
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
// client: it closes the server's input and waits for it to exit, and
// then (or after the terminate duration) stops whatever of it is left:
// SIGTERM to every process, SIGKILL after another terminate duration.
// It returns once every process of the server has ended.
func (p *process) shutdown() {
	p.shutdownOnce.Do(func() {
		_ = p.stdin.Close()
		t := time.NewTimer(p.terminate)
		select {
		case <-p.run.MainDone():
		case <-t.C:
		}
		t.Stop()
		p.end(p.terminate)
	})
}

// stop ends every process of the server at once (SIGTERM, then SIGKILL
// to what is left), when the connection failed or was closed, and
// returns once they have ended.
func (p *process) stop() {
	if p == nil || p.run == nil {
		return
	}
	p.end(0)
}

// end stops what is left of the server with the given grace period,
// records how it went, and lets go of the pipes.
func (p *process) end(grace time.Duration) {
	out := p.run.Stop(grace)
	p.mu.Lock()
	if p.outcome == nil {
		p.outcome = &out
	}
	p.mu.Unlock()
	p.release()
}

// survivors reports the processes of the server that outlived its stop
// (stuck in the kernel, or, in a process tree, not found), as an error
// matching harness.CodeNotStopped; nil when none did.
func (p *process) survivors(server string) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.outcome == nil {
		return nil
	}
	return p.outcome.SurvivorsError(fmt.Sprintf("the MCP server %s", server))
}

// release closes the harness's ends of the pipes, which also ends reads
// that a process holding them open would block, and waits (briefly) for
// standard error to be drained.
func (p *process) release() {
	p.releaseOnce.Do(func() {
		_ = p.stdin.Close()
		_ = p.stdout.Close()
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-p.copied:
		case <-t.C:
			_ = p.errOut.Close() // a process left outside holds it
			<-p.copied
		}
		t.Stop()
		_ = p.errOut.Close()
	})
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
