package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
)

// startupWait bounds how long a new shell may take to answer its first
// marker.
const startupWait = 30 * time.Second

// shell is one persistent bash: a long-lived process that reads command
// lines from a pipe (descriptor 3, read as its script) and writes its
// output, stdout and stderr together, to another pipe.
type shell struct {
	id string
	m  *shells

	// Fixed when the shell opens.
	argv    []string
	env     []string
	dir     string // OS directory it starts in
	ns      string // the same in the file system's namespace
	store   tools.OutputStore
	session string

	mu       sync.Mutex
	gen      int // process generation; output of older ones is ignored
	p        *proc
	script   *os.File
	watched  chan struct{} // closed when the current process is fully gone
	scan     *scanner      // set while a command runs
	command  string
	cmdStart time.Time
	window   *capture
	cwd      string
	last     *finished // the last command that finished, until reported
	death    string    // why the shell is not running, until a send restarts it
	closed   bool
	changed  chan struct{}
	lastUse  time.Time
	idle     *time.Timer
	done     chan struct{} // closed when close has finished
}

// finished is the outcome of a command.
type finished struct {
	command string
	code    int
	elapsed time.Duration
}

// start starts a bash process for the shell and waits for it to answer.
// It returns the bootstrap output (a sandbox's warnings, say). Called
// with sh.mu held.
func (sh *shell) startLocked() (string, error) {
	if sh.closed {
		return "", errors.New("the shell was closed")
	}
	scriptR, scriptW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		scriptR.Close()
		scriptW.Close()
		return "", err
	}
	p, err := startProc(sh.argv, sh.dir, sh.env, outW, outW, scriptR)
	scriptR.Close()
	outW.Close()
	if err != nil {
		scriptW.Close()
		outR.Close()
		return "", err
	}
	sh.gen++
	gen := sh.gen
	sh.p, sh.script = p, scriptW
	sh.watched = make(chan struct{})
	sh.death = ""
	sh.cwd = sh.dir
	read := make(chan struct{})
	go sh.readLoop(gen, outR, read)
	go sh.watch(gen, p, outR, read, sh.watched)

	// Keep descriptor 3 (the script) from the commands, keep a copy of
	// stdout for markers, and let SIGINT stop a command but not the shell.
	boot := fmt.Sprintf("exec 3<&- %d>&1; trap : INT\n", markerFD)
	nonce := newNonce()
	sh.scan = newScanner(nonce)
	sh.command = ""
	sh.cmdStart = time.Now()
	wait := startupWait
	if _, err := io.WriteString(scriptW, boot+commandLine(":", nonce)); err != nil {
		// The shell is gone already; wait for the watcher to say how.
		wait = drainDelay + sh.m.cfg.grace
	}
	sh.waitLocked(context.Background(), wait)
	out := sh.takeLocked(sh.m.cfg.outputLimit)
	if sh.scan != nil || sh.death != "" {
		sh.scan = nil
		why := sh.death
		if why == "" {
			why = fmt.Sprintf("it did not answer within %s", durText(wait))
			_ = killGroup(p.pgid) // the watcher notes the death
		}
		return out, fmt.Errorf("the shell did not start: %s", why)
	}
	sh.last = nil
	return out, nil
}

// readLoop reads the shell's output until the pipe closes.
func (sh *shell) readLoop(gen int, out *os.File, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 32<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 {
			sh.onOutput(gen, buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (sh *shell) notifyLocked() {
	close(sh.changed)
	sh.changed = make(chan struct{})
}

func (sh *shell) onOutput(gen int, p []byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if gen != sh.gen {
		return
	}
	defer sh.notifyLocked()
	if sh.scan == nil {
		_, _ = sh.window.Write(p)
		return
	}
	m, rest, err := sh.scan.feed(p, func(b []byte) { _, _ = sh.window.Write(b) })
	switch {
	case err != nil:
		// Not a marker after all: show it and keep waiting.
		_, _ = sh.window.Write(sh.scan.held)
		sh.scan.held, sh.scan.in = nil, false
	case m != nil:
		sh.scan = nil
		sh.cwd = m.Dir
		sh.last = &finished{command: sh.command, code: m.Status, elapsed: time.Since(sh.cmdStart)}
		_, _ = sh.window.Write(rest)
	}
}

// watch waits for the process to end, stops what it left running, and
// marks the shell as not running.
func (sh *shell) watch(gen int, p *proc, out *os.File, read, watched chan struct{}) {
	defer close(watched)
	p.reapGroup(sh.m.cfg.grace)
	select {
	case <-read:
	case <-time.After(drainDelay):
		out.Close()
		<-read
	}
	out.Close()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if gen != sh.gen {
		return
	}
	sh.script.Close()
	if sh.scan != nil {
		_, _ = sh.window.Write(sh.scan.flush())
	}
	code, signal := p.exitInfo()
	how := "exited"
	switch {
	case code != nil:
		how = fmt.Sprintf("exited with code %d", *code)
	case signal != "":
		how = "was killed by " + signal
	}
	if sh.scan != nil && sh.command != "" {
		sh.death = fmt.Sprintf("The shell %s while running %s", how, quoteCommand(sh.command))
	} else {
		sh.death = fmt.Sprintf("The shell %s", how)
	}
	sh.scan = nil
	sh.p = nil
	sh.notifyLocked()
}

// takeLocked renders the output since the last look, cut to budget
// bytes, and starts a new window.
func (sh *shell) takeLocked(budget int) string {
	w := sh.window
	sh.window = newCapture(sh.m.ctx, sh.m.cfg.outputLimit, sh.store, w.owner, sh.m.cfg.maxSpill)
	s := w.view(max(budget, 1000))
	if s.Total == 0 {
		w.finish(false)
		return ""
	}
	var b strings.Builder
	writeStream(&b, s, w.finish(s.Omitted > 0), "output")
	return b.String()
}

// touch records a use and pushes the idle deadline back.
func (sh *shell) touchLocked(call *tools.Call) {
	sh.lastUse = time.Now()
	if sh.idle != nil {
		sh.idle.Reset(sh.m.cfg.idle)
	}
	sh.window.setOwner(owner(call))
}

// waitLocked waits until the running command ends, d passes or ctx ends.
// It is called and returns with sh.mu held.
func (sh *shell) waitLocked(ctx context.Context, d time.Duration) {
	if sh.scan == nil || d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for sh.scan != nil {
		ch := sh.changed
		sh.mu.Unlock()
		select {
		case <-ch:
			sh.mu.Lock()
		case <-timer.C:
			sh.mu.Lock()
			return
		case <-ctx.Done():
			sh.mu.Lock()
			return
		}
	}
}

// sleepLocked waits d (or until ctx ends) with sh.mu released, so that
// output keeps arriving.
func (sh *shell) sleepLocked(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	sh.mu.Unlock()
	defer sh.mu.Lock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// interruptLocked sends SIGINT to the shell's process group, which stops
// the running command (the shell itself traps it), and waits up to the
// kill grace for the command to end.
func (sh *shell) interruptLocked() {
	if sh.p == nil || sh.scan == nil {
		return
	}
	_ = interruptGroup(sh.p.pgid)
	sh.waitLocked(context.Background(), sh.m.cfg.grace)
}

// statusLocked renders the lines that end every result: how the last
// command ended or that it still runs, and the current directory.
func (sh *shell) statusLocked(b *strings.Builder) (status string, code *int) {
	ensureNewline(b)
	switch {
	case sh.death != "":
		status = statusKilled
		fmt.Fprintf(b, "[%s. Its variables, functions and background processes are gone. The next shell_send starts a fresh shell in %s.]\n", sh.death, sh.ns)
		if sh.last != nil {
			c := sh.last.code
			code = &c
			sh.last = nil
		}
	case sh.scan != nil:
		status = statusRunning
		fmt.Fprintf(b, "[still running after %s: call shell_read (session_id %q) to wait for more output, or shell_close to stop it]\n",
			durText(time.Since(sh.cmdStart)), sh.id)
	case sh.last != nil:
		status = statusExited
		c := sh.last.code
		code = &c
		fmt.Fprintf(b, "[exit code %d · %s]\n", c, durText(sh.last.elapsed))
		sh.last = nil
	default:
		status = statusExited
		b.WriteString("[no command running]\n")
	}
	cwd := sh.cwd
	if sh.death != "" {
		cwd = sh.ns
	}
	fmt.Fprintf(b, "[cwd %s]", cwd)
	return status, code
}

func quoteCommand(c string) string {
	first, _, multi := strings.Cut(strings.TrimSpace(c), "\n")
	if len(first) > 60 {
		first = textcut.Prefix(first, 57)
		multi = true
	}
	if multi {
		first += " ..."
	}
	return "`" + first + "`"
}

// shells is the table of an agent session's persistent shells. Closing it
// (when the session closes) closes every shell and stops its whole
// process group.
type shells struct {
	cfg    *config
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	open   map[string]*shell
	order  []string
	gone   map[string]string // closed ids and why, for better errors
	next   int
	closed bool
}

// maxGone bounds how many closed ids are remembered.
const maxGone = 64

func newShells(cfg *config) *shells {
	ctx, cancel := context.WithCancel(context.Background())
	return &shells{cfg: cfg, ctx: ctx, cancel: cancel, open: map[string]*shell{}, gone: map[string]string{}}
}

func (m *shells) get(id string) (*shell, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sh, ok := m.open[id]; ok {
		return sh, nil
	}
	if why, ok := m.gone[id]; ok {
		return nil, &harness.Error{Code: CodeUnknownSession, Message: fmt.Sprintf("Shell %s is closed (%s). Open a new one with shell_open; its state starts fresh.", id, why)}
	}
	known := "No shell is open."
	if len(m.order) > 0 {
		known = "Open shells: " + strings.Join(m.order, ", ") + "."
	}
	return nil, &harness.Error{Code: CodeUnknownSession, Message: fmt.Sprintf("There is no shell %q. %s Open one with shell_open.", id, known)}
}

// forget removes a shell from the table, remembering why it went.
func (m *shells) forget(sh *shell, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open[sh.id] != sh {
		return
	}
	delete(m.open, sh.id)
	m.order = slices.DeleteFunc(m.order, func(id string) bool { return id == sh.id })
	if len(m.gone) >= maxGone {
		clear(m.gone)
	}
	m.gone[sh.id] = why
}

// closeShell stops the shell's process group and waits for it. It is
// safe to call more than once and from several goroutines.
func (m *shells) closeShell(sh *shell, why string) {
	m.forget(sh, why)
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		<-sh.done
		return
	}
	sh.closed = true
	if sh.idle != nil {
		sh.idle.Stop()
	}
	p, watched := sh.p, sh.watched
	sh.mu.Unlock()
	if p != nil {
		p.stop(m.cfg.grace)
	}
	if watched != nil {
		<-watched
	}
	close(sh.done)
}

// reapIdle closes a shell that has not been used for the idle timeout.
func (m *shells) reapIdle(sh *shell) {
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return
	}
	if left := m.cfg.idle - time.Since(sh.lastUse); left > 0 {
		sh.idle.Reset(left)
		sh.mu.Unlock()
		return
	}
	sh.mu.Unlock()
	m.closeShell(sh, fmt.Sprintf("closed after %s without use", durText(m.cfg.idle)))
}

// Close closes every shell and waits for their processes to end.
func (m *shells) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	open := make([]*shell, 0, len(m.open))
	for _, id := range m.order {
		open = append(open, m.open[id])
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, sh := range open {
		wg.Go(func() {
			m.closeShell(sh, "the agent session closed")
			sh.mu.Lock()
			w := sh.window
			sh.mu.Unlock()
			w.finish(false)
		})
	}
	wg.Wait()
	m.cancel()
	return nil
}

// len returns the number of open shells.
func (m *shells) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.open)
}
