package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness/internal/proctree"
)

// run is how one command hook ran.
type run struct {
	cmd Command
	// exit is the exit status; nil when the command did not exit by
	// itself (killed, timed out, never started).
	exit     *int
	signal   string
	timedOut bool
	flooded  bool
	// stdout and stderr hold at most the runner's output cap each;
	// dropped counts what was left out.
	stdout, stderr               string
	stdoutDropped, stderrDropped int64
	// err is why the command could not run.
	err error
	dur time.Duration
}

// failed describes a run that did not end with an exit status of its
// own, or "".
func (r *run) failed() string {
	switch {
	case r.err != nil:
		return "it could not be started: " + r.err.Error()
	case r.timedOut:
		return fmt.Sprintf("it ran longer than its timeout of %s and was stopped", r.cmd.Timeout)
	case r.flooded:
		return "it wrote far more output than hooks may, and was stopped"
	case r.exit == nil && r.signal != "":
		return "it was killed by " + r.signal
	case r.exit == nil:
		return "its exit status is unknown"
	}
	return ""
}

// Sandbox is what a hook command runs under: the shell tools' sandbox
// (tools/shell's Bubblewrap satisfies it), so that hooks run under the
// same confinement as the commands the agent runs.
type Sandbox interface {
	Wrap(argv []string, dir string) ([]string, error)
	Describe() string
}

// allowedEnv are the variables a hook gets from the host's environment,
// beside those the host passes by name: what programs need to find
// their tools and speak the user's language, nothing that holds a
// credential. A name ending in _* is a prefix.
var allowedEnv = []string{"PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR"}

// forcedEnv keeps hook commands from waiting on a terminal that is not
// there.
var forcedEnv = []string{"PAGER=cat", "GIT_PAGER=cat", "TERM=dumb", "NO_COLOR=1", "GIT_EDITOR=false", "EDITOR=false", "VISUAL=false", "GIT_TERMINAL_PROMPT=0"}

func envAllowed(name string, pass []string) bool {
	for _, p := range append(slices.Clone(allowedEnv), pass...) {
		if p == name || strings.HasSuffix(p, "*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

// environ builds a hook's environment.
func (r *Runner) environ(project string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" && r.cfg.Sandbox == nil || envAllowed(name, r.cfg.PassEnv) {
			env = append(env, kv)
		}
	}
	if r.cfg.Sandbox != nil {
		env = append(env, "HOME=/tmp")
	}
	env = append(env, forcedEnv...)
	env = append(env, "CLAUDE_PROJECT_DIR="+project, "HARNESS_PROJECT_DIR="+project)
	return append(env, r.cfg.Env...)
}

// capture keeps the first max bytes written to it and counts the rest.
type capture struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int64
	total   *counter
}

type counter struct {
	mu    sync.Mutex
	n     int64
	limit int64
	over  chan struct{}
	once  sync.Once
}

func (c *counter) add(n int) {
	c.mu.Lock()
	c.n += int64(n)
	over := c.n > c.limit
	c.mu.Unlock()
	if over {
		c.once.Do(func() { close(c.over) })
	}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	room := c.max - len(c.buf)
	if room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	if len(p) > room {
		c.dropped += int64(len(p) - max(room, 0))
	}
	c.mu.Unlock()
	c.total.add(len(p))
	return len(p), nil
}

func (c *capture) text() (string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(string(c.buf), "\uFFFD"), c.dropped
}

// grace is how long a stopped hook gets between SIGTERM and SIGKILL.
const grace = 500 * time.Millisecond

// exec runs one command hook in dir with input on its standard input.
func (r *Runner) exec(ctx context.Context, c Command, dir, project string, input []byte) (out run) {
	out.cmd = c
	if out.cmd.Timeout <= 0 {
		out.cmd.Timeout = r.cfg.DefaultTimeout
	}
	out.cmd.Timeout = min(out.cmd.Timeout, r.cfg.MaxTimeout)
	start := time.Now()
	defer func() { out.dur = time.Since(start) }()
	bash, err := exec.LookPath("bash")
	if err != nil {
		out.err = err
		return out
	}
	argv := []string{bash, "-c", c.Command}
	if r.cfg.Sandbox != nil {
		if argv, err = r.cfg.Sandbox.Wrap(argv, dir); err != nil {
			out.err = fmt.Errorf("the sandbox refused it: %w", err)
			return out
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		out.err = err
		return out
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		out.err = err
		return out
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		out.err = err
		return out
	}
	proc, err := proctree.Start(r.containment(), proctree.Command{Argv: argv, Dir: dir, Env: r.environ(project), Stdin: inR, Stdout: outW, Stderr: errW})
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		out.err = err
		return out
	}
	total := &counter{limit: int64(r.cfg.MaxOutput) * 16, over: make(chan struct{})}
	so := &capture{max: r.cfg.MaxOutput, total: total}
	se := &capture{max: r.cfg.MaxOutput, total: total}
	var readers sync.WaitGroup
	readers.Go(func() { _, _ = io.Copy(so, outR) })
	readers.Go(func() { _, _ = io.Copy(se, errR) })
	go func() {
		_, _ = inW.Write(input) // a hook that does not read its input closes the pipe: EPIPE is fine
		inW.Close()
	}()

	timer := time.NewTimer(out.cmd.Timeout)
	defer timer.Stop()
	select {
	case <-proc.MainDone():
	case <-timer.C:
		out.timedOut = true
	case <-total.over:
		out.flooded = true
	case <-ctx.Done():
		out.err = context.Cause(ctx)
	}
	if !proc.Exited() {
		proc.Stop(grace)
	}
	// What the hook left running (a daemon it started) ends with it.
	proc.ReapLeftovers(grace)
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		// A process out of reach holds the pipes open: stop reading.
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()
	if !out.timedOut && !out.flooded && out.err == nil {
		out.exit, out.signal = proc.ExitInfo()
	} else if code, sig := proc.ExitInfo(); sig != "" {
		out.signal = sig
		_ = code
	}
	out.stdout, out.stdoutDropped = so.text()
	out.stderr, out.stderrDropped = se.text()
	if errors.Is(out.err, context.Canceled) || errors.Is(out.err, context.DeadlineExceeded) {
		out.err = fmt.Errorf("the turn ended while it ran: %w", out.err)
	}
	return out
}

// containment is found once per runner.
func (r *Runner) containment() *proctree.Containment {
	r.contOnce.Do(func() { r.cont = proctree.Probe(proctree.Options{}) })
	return r.cont
}
