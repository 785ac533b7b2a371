package persistent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// startupWait bounds how long a new shell may take to answer its first
// marker.
const startupWait = 30 * time.Second

// shell is one persistent bash: a long-lived process that reads command
// lines from a pipe (descriptor 3, read as its script), writes its
// output, stdout and stderr together, to another pipe, and reports when
// commands end on a third (see protocol.go).
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
	p        *proctree.Proc
	script   *os.File
	outW     *os.File      // the harness's end of the output pipe, for sync records
	outR     *os.File      // the read end of the output pipe, which readLoop reads
	watched  chan struct{} // closed when the current process is fully gone
	scan     *scanner      // set while a command runs: finds its sync record in the output
	run      *running      // set with scan: the command's records
	command  string
	cmdStart time.Time
	window   *shellkit.Capture
	live     func([]byte) // set while a call waits on the running command: its progress report
	cwd      string
	last     *finished // the last command that finished, until reported
	prev     int       // the exit status of the last command, which $? shows the next
	prevRan  string    // __harness_ran as the last end record showed it
	death    string    // why the shell is not running, until a send restarts it
	broken   string    // why the shell's protocol no longer works, if it does not
	junk     []byte    // a partial line of the status channel that is no record
	skipLine bool      // the rest of bash's message line after a record is dropped
	noStdout bool      // the last end record: the shell's stdout no longer leads here
	noStderr bool      // the same for its stderr
	errexit  bool      // the last end record: set -e is on
	opts     string    // the last end record's $SHELLOPTS: those the next line is read with
	fds      *fdProbe  // looks where the shell's stdout and stderr lead; nil when the line checks
	unset    string    // variables of the last line to unset at the start of the next
	closed   bool
	changed  chan struct{}
	lastUse  time.Time
	idle     *time.Timer
	done     chan struct{}    // closed when close has finished
	stopped  proctree.Outcome // how close stopped its processes, set before done closes
}

// finished is the outcome of a command.
type finished struct {
	command string
	code    int
	elapsed time.Duration
	notRun  bool // the shell's eval did not run the command text
	exposed bool // the command could read its own command line
}

// running is the protocol state of the command that runs.
type running struct {
	cmd     command
	marks   *scanner // finds the command's end record on the status channel
	fdTests bool     // the line checks stdout and stderr itself
	fdsDone bool     // the record of those checks came
	exposed bool     // the shell echoed or recorded the line (set -v, set -o history)
	end     *mark    // the end record, once it came
}

// start starts a bash process for the shell and waits for it to answer.
// It returns the bootstrap output (a sandbox's warnings, say). Called
// with sh.mu held.
func (sh *shell) startLocked() (string, error) {
	if sh.closed {
		return "", errors.New("the shell was closed")
	}
	rs, ws, err := shellkit.Pipes(3)
	if err != nil {
		return "", err
	}
	scriptR, outR, markR := rs[0], rs[1], rs[2]
	scriptW, outW, markW := ws[0], ws[1], ws[2]
	// bash starts with the status channel as its stderr; bootLine moves
	// it to its own descriptor. The harness keeps outW to write sync
	// records.
	p, err := sh.m.cfg.Start(sh.argv, sh.dir, sh.env, outW, markW, scriptR)
	scriptR.Close()
	markW.Close()
	if err != nil {
		scriptW.Close()
		outR.Close()
		outW.Close()
		markR.Close()
		return "", err
	}
	sh.gen++
	gen := sh.gen
	sh.p, sh.script, sh.outW, sh.outR = p, scriptW, outW, outR
	sh.watched = make(chan struct{})
	sh.death, sh.broken, sh.junk, sh.skipLine = "", "", nil, false
	sh.prev, sh.prevRan, sh.noStdout, sh.noStderr, sh.errexit = 0, "x", false, false, false
	sh.opts, sh.unset = "", ""
	sh.closeFDsLocked()
	sh.cwd = sh.dir
	read := make(chan struct{})
	go sh.readLoop(gen, outR, read)
	go sh.markLoop(gen, p, markR)
	go sh.watch(gen, p, outR, outW, markR, read, sh.watched)

	// The first command checks nothing: the shell has not been looked
	// at yet, and nothing could have redirected its descriptors.
	line := bootLine() + sh.beginLocked(":", false)
	sh.command = ""
	wait := startupWait
	if _, err := io.WriteString(scriptW, line); err != nil {
		// The shell is gone already; wait for the watcher to say how.
		wait = shellkit.DrainDelay + sh.m.cfg.Grace
	}
	sh.waitLocked(context.Background(), wait)
	out := sh.takeLocked(sh.m.cfg.OutputLimit)
	if sh.scan != nil || sh.death != "" || sh.broken != "" || (sh.last != nil && sh.last.notRun) {
		sh.scan, sh.run = nil, nil
		why := sh.death
		switch {
		case why != "":
		case sh.broken != "":
			why = sh.broken
			_ = p.KillMain() // the watcher stops what it left
		default:
			why = fmt.Sprintf("it did not answer within %s", shellkit.Dur(wait))
			_ = p.KillMain() // the watcher notes the death
		}
		return out, fmt.Errorf("the shell did not start: %s", why)
	}
	sh.last = nil
	// Now that the shell has its descriptors 18 and 19, find it in /proc
	// to look at its stdout and stderr from outside at the end of each
	// command; where it cannot be found, each line checks them itself.
	sh.fds = newFDProbe(p, outR, markR)
	return out, nil
}

// closeFDsLocked stops looking at a shell's descriptors.
func (sh *shell) closeFDsLocked() {
	if sh.fds != nil {
		sh.fds.close()
		sh.fds = nil
	}
}

// beginLocked starts the protocol of a command and returns the line that
// runs it. check says whether the line is to check stdout and stderr
// itself when the harness cannot.
func (sh *shell) beginLocked(text string, check bool) string {
	c := newCommand()
	fdTests := check && sh.fds == nil
	// The options the last record showed are those the shell reads this
	// line with: no command runs after a record.
	exposed := hasOption(sh.opts, "verbose") || hasOption(sh.opts, "history")
	sh.run = &running{cmd: c, marks: newRecordScanner(c.nonce), fdTests: fdTests, exposed: exposed}
	sh.scan = newScanner(c.sync)
	sh.command = text
	sh.cmdStart = time.Now()
	sh.last = nil
	line := commandLine(text, c, sh.prev, fdTests, sh.unset)
	sh.unset = ""
	if fdTests {
		sh.unset = c.fdsVar()
	}
	return line
}

// startedLocked reports whether the shell has read the running command's
// line: the script pipe holds none of it. It is true when that cannot
// be told.
func (sh *shell) startedLocked() bool {
	if sh.script == nil || !rawPipes {
		return true
	}
	rc, err := sh.script.SyscallConn()
	if err != nil {
		return true
	}
	n, ok := 0, false
	if rc.Control(func(fd uintptr) { n, ok = pipeBytes(fd) }) != nil {
		return true
	}
	return !ok || n == 0
}

// readLoop reads the shell's output until the pipe closes. Each read
// and the handling of what it returned happen under sh.mu, so that when
// the lock is held no output is in flight between the pipe and the
// window: the end record can then finish a command at once when the pipe
// is empty (outputDrainedLocked).
func (sh *shell) readLoop(gen int, out *os.File, done chan struct{}) {
	defer close(done)
	rc, err := out.SyscallConn()
	if err != nil || !rawPipes {
		sh.readLoopPlain(gen, out)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		var ended bool
		err := rc.Read(func(fd uintptr) bool {
			sh.mu.Lock()
			defer sh.mu.Unlock()
			n, err := readFD(fd, buf)
			switch {
			case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
				return false // wait until the pipe is readable
			case n > 0:
				sh.onOutputLocked(gen, buf[:n])
			default: // the end of the pipe, or an error
				ended = true
			}
			return true
		})
		if err != nil || ended {
			return
		}
	}
}

// readLoopPlain is readLoop for a file without raw access.
func (sh *shell) readLoopPlain(gen int, out *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 {
			sh.mu.Lock()
			sh.onOutputLocked(gen, buf[:n])
			sh.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// outputDrainedLocked reports that everything the shell wrote into the
// output pipe has been handled: the pipe holds nothing, and readLoop,
// which reads under sh.mu, holds nothing either. It is false when that
// cannot be told.
func (sh *shell) outputDrainedLocked() bool {
	if sh.outR == nil || !rawPipes {
		return false
	}
	rc, err := sh.outR.SyscallConn()
	if err != nil {
		return false
	}
	n, ok := 0, false
	if rc.Control(func(fd uintptr) { n, ok = pipeBytes(fd) }) != nil {
		return false
	}
	return ok && n == 0
}

func (sh *shell) notifyLocked() {
	close(sh.changed)
	sh.changed = make(chan struct{})
}

func (sh *shell) onOutputLocked(gen int, p []byte) {
	if gen != sh.gen {
		return
	}
	defer sh.notifyLocked()
	if sh.scan == nil {
		_, _ = sh.window.Write(p)
		return
	}
	_, rest, ok, err := sh.scan.feed(p, func(b []byte) {
		_, _ = sh.window.Write(b)
		if sh.live != nil {
			sh.live(b)
		}
	})
	switch {
	case err != nil:
		// Not a sync record after all: show it and keep waiting.
		_, _ = sh.window.Write(rest)
	case ok:
		sh.finishLocked()
		_, _ = sh.window.Write(rest)
	}
}

// finishLocked ends the running command when its sync record came, or
// when its end record came with the output pipe drained: all its output
// is in the window now.
func (sh *shell) finishLocked() {
	r := sh.run
	sh.scan, sh.run = nil, nil
	if r == nil || r.end == nil {
		return // the end record comes first, then the sync record if any
	}
	m := r.end
	if m.Dir != "" {
		sh.cwd = m.Dir
	}
	sh.prev = m.Status
	sh.noStdout, sh.noStderr, sh.errexit = !m.Stdout, !m.Stderr, m.errexit()
	sh.opts = m.Opts
	sh.last = &finished{command: sh.command, code: m.Status, elapsed: time.Since(sh.cmdStart), exposed: r.exposed}
	// The command text starts by setting __harness_ran. If the variable
	// still holds what it held before, that never happened; any other
	// value means the text ran, though the command may have changed the
	// variable afterwards.
	notRun := m.Ran == sh.prevRan && m.Ran != r.cmd.ran
	sh.prevRan = m.Ran
	if notRun {
		sh.last.notRun = true
		sh.breakLocked("its eval no longer runs commands (a function named builtin replaced it, enable -n disabled it, or __harness_ran was made read-only)")
	}
}

// markLoop reads the status channel until it closes.
func (sh *shell) markLoop(gen int, p *proctree.Proc, r *os.File) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if w, rec := sh.onRecords(gen, buf[:n]); w != nil {
				// Outside the lock: the output pipe may be full until
				// readLoop has taken its share.
				_, _ = w.Write(rec)
			}
		}
		if err != nil {
			break
		}
	}
	// The channel is closed. When the shell exits, the watcher says so;
	// when it runs on, a command closed the channel.
	t := time.NewTimer(shellkit.DrainDelay)
	defer t.Stop()
	select {
	case <-p.MainDone():
		return
	case <-t.C:
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if gen != sh.gen || sh.p != p || sh.death != "" {
		return
	}
	sh.flushJunkLocked()
	sh.breakLocked(fmt.Sprintf("a command closed or redirected its descriptor %d, on which it reports when commands end", markerFD))
}

// onRecords takes bytes of the status channel. It returns the sync record
// to write into the output pipe, and where, when the end record came.
func (sh *shell) onRecords(gen int, p []byte) (*os.File, []byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if gen != sh.gen {
		return nil, nil
	}
	defer sh.notifyLocked()
	var w *os.File
	var sync []byte
	for len(p) > 0 {
		if sh.skipLine {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				break
			}
			sh.skipLine, p = false, p[i+1:]
			continue
		}
		r := sh.run
		if r == nil {
			sh.junkLocked(p)
			break
		}
		body, rest, ok, err := r.marks.feed(p, sh.junkLocked)
		if err != nil {
			sh.junkLocked(rest)
			break
		}
		if !ok {
			break
		}
		// bash writes "script: line N: /dev/null/" before the record and
		// ": Not a directory" after it; what came before that on the line
		// is shown.
		if bytes.HasSuffix(sh.junk, []byte(": "+noFile)) {
			i := bytes.LastIndex(sh.junk, []byte(scriptPath+": "))
			if i < 0 {
				i = len(sh.junk) - len(noFile)
			}
			sh.junk = sh.junk[:i]
		}
		sh.flushJunkLocked()
		sh.skipLine = true
		p = rest
		complete, err := sh.recordLocked(r, body)
		if err != nil {
			sh.breakLocked(err.Error())
			break
		}
		if !complete {
			continue
		}
		if sh.outputDrainedLocked() {
			// All the command printed has been handled: no sync record
			// is needed to find its end in the output.
			if held := sh.scan.flush(); len(held) > 0 {
				_, _ = sh.window.Write(held)
				if sh.live != nil {
					sh.live(held)
				}
			}
			sh.finishLocked()
			continue
		}
		w, sync = sh.outW, syncRecord(r.cmd.sync)
	}
	return w, sync
}

// recordLocked takes the body of a record of the running command r. It
// reports whether the command's records are complete with it: the end
// record, and the record of the line's own checks of stdout and stderr
// when it makes them. An error says why the protocol broke.
func (sh *shell) recordLocked(r *running, body []byte) (complete bool, err error) {
	switch {
	case r.end == nil:
		m, err := parseEnd(body)
		if err != nil {
			return false, fmt.Errorf("its end-of-command record %q could not be read", textcut.Prefix(string(body), 200))
		}
		if !r.fdTests && sh.fds != nil {
			// Nothing runs in the shell after its record, so its
			// descriptors are those the command left.
			if stdout, stderr, ok := sh.fds.leads(); ok {
				m.Stdout, m.Stderr = stdout, stderr
			} else {
				sh.closeFDsLocked() // the next lines check themselves
			}
		}
		r.end = m
		return !r.fdTests, nil
	case r.fdTests && !r.fdsDone:
		if err := parseFDs(body, r.end); err != nil {
			return false, fmt.Errorf("its record of where stdout and stderr lead %q could not be read", textcut.Prefix(string(body), 200))
		}
		r.fdsDone = true
		return true, nil
	}
	return false, nil // the command's records came already
}

// junkLocked shows what came on the status channel that is not a record
// (the sandbox's or bash's own messages, say), line by line; a partial
// line waits, since it may be the prefix bash writes before a record.
// The output goes to the window like the shell's output, in the order
// the two pipes are read.
func (sh *shell) junkLocked(b []byte) {
	sh.junk = append(sh.junk, b...)
	if i := bytes.LastIndexByte(sh.junk, '\n'); i >= 0 {
		_, _ = sh.window.Write(sh.junk[:i+1])
		sh.junk = append(sh.junk[:0], sh.junk[i+1:]...)
	}
	if len(sh.junk) > maxMarkBody {
		sh.flushJunkLocked()
	}
}

func (sh *shell) flushJunkLocked() {
	if len(sh.junk) > 0 {
		_, _ = sh.window.Write(sh.junk)
	}
	sh.junk = nil
}

// breakLocked notes that the protocol no longer works: the harness cannot
// tell when commands start or end, or the shell cannot run them. The
// running command, if any, is no longer waited for.
func (sh *shell) breakLocked(why string) {
	if sh.broken == "" {
		sh.broken = why
	}
	if sh.scan != nil {
		_, _ = sh.window.Write(sh.scan.flush())
	}
	sh.scan, sh.run = nil, nil
	sh.notifyLocked()
}

// watch waits for the process to end, stops what it left running, and
// marks the shell as not running.
func (sh *shell) watch(gen int, p *proctree.Proc, out, outW, marks *os.File, read, watched chan struct{}) {
	defer close(watched)
	_, stopped := p.ReapLeftovers(sh.m.cfg.Grace)
	outW.Close() // the harness's own writer: now the pipe can reach its end
	select {
	case <-read:
	case <-time.After(shellkit.DrainDelay):
		out.Close()
		<-read
	}
	out.Close()
	marks.Close()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if gen != sh.gen {
		return
	}
	sh.script.Close()
	sh.flushJunkLocked()
	if sh.scan != nil {
		_, _ = sh.window.Write(sh.scan.flush())
	}
	code, signal := p.ExitInfo()
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
	if len(stopped.Survivors) > 0 {
		sh.death += fmt.Sprintf(" (these processes it started still run: %s)", proctree.SurvivorList(stopped.Survivors))
	}
	sh.scan, sh.run = nil, nil
	sh.p = nil
	sh.closeFDsLocked()
	sh.notifyLocked()
}

// takeLocked renders the output since the last look, cut to budget
// bytes, and starts a new window.
func (sh *shell) takeLocked(budget int) string {
	w := sh.window
	sh.window = shellkit.NewCapture(sh.m.ctx, sh.m.cfg.OutputLimit, sh.store, w.Owner(), sh.m.cfg.MaxSpill)
	s, info := w.Take(max(budget, 1000))
	if s.Total == 0 {
		return ""
	}
	var b strings.Builder
	shellkit.WriteStream(&b, s, info, "output")
	return b.String()
}

// touch records a use and pushes the idle deadline back.
func (sh *shell) touchLocked(call *tools.Call) {
	sh.lastUse = time.Now()
	if sh.idle != nil {
		sh.idle.Reset(sh.m.cfg.Idle)
	}
	sh.window.SetOwner(shellkit.Owner(call))
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
	_ = sh.p.Interrupt()
	sh.waitLocked(context.Background(), sh.m.cfg.Grace)
}

// statusLocked renders the lines that end every result: how the last
// command ended or that it still runs, and the current directory.
func (sh *shell) statusLocked(b *strings.Builder) (status string, code *int) {
	shellkit.EnsureNewline(b)
	switch {
	case sh.death != "":
		status = shellkit.StatusKilled
		fmt.Fprintf(b, "[%s. Its variables, functions and background processes are gone. The next shell_send starts a fresh shell in %s.]\n", sh.death, sh.ns)
		if sh.last != nil {
			c := sh.last.code
			code = &c
			sh.last = nil
		}
	case sh.scan != nil:
		status = shellkit.StatusRunning
		elapsed := time.Since(sh.cmdStart)
		if sh.run != nil && elapsed >= sh.m.cfg.StartHint && !sh.startedLocked() {
			// An idle shell starts a command within milliseconds.
			fmt.Fprintf(b, "[the shell has not started the command, %s after it was sent: it seems not to read its input. "+
				"It may be stopped, or a process started by an earlier command may be taking its input. "+
				"Call shell_read (session_id %q) to check again; if this stays so, close the shell with shell_close and open a new one with shell_open]\n",
				shellkit.Dur(elapsed), sh.id)
			break
		}
		fmt.Fprintf(b, "[still running after %s: call shell_read (session_id %q) to wait for more output, or shell_close to stop it]\n",
			shellkit.Dur(elapsed), sh.id)
	case sh.last != nil && sh.last.notRun:
		status = shellkit.StatusExited
		b.WriteString("[the command did not run]\n")
		sh.last = nil
	case sh.last != nil:
		status = shellkit.StatusExited
		c := sh.last.code
		code = &c
		fmt.Fprintf(b, "[exit code %d · %s]\n", c, shellkit.Dur(sh.last.elapsed))
		if sh.last.exposed {
			b.WriteString("[set -v or set -o history was on when the shell read this command, so the command could read its own command line and could have faked the exit code and directory reported here. Turn them off with set +v +o history.]\n")
		}
		sh.last = nil
	case sh.broken != "":
		status = shellkit.StatusExited
		b.WriteString("[exit code unknown]\n")
	default:
		status = shellkit.StatusExited
		b.WriteString("[no command running]\n")
	}
	if sh.death == "" {
		sh.notesLocked(b)
	}
	cwd := sh.cwd
	if sh.death != "" {
		cwd = sh.ns
	}
	fmt.Fprintf(b, "[cwd %s]", cwd)
	return status, code
}

// notesLocked adds what the last end record said is wrong with the
// shell, and whether its protocol is broken.
func (sh *shell) notesLocked(b *strings.Builder) {
	if sh.broken != "" {
		fmt.Fprintf(b, "[Shell %s is broken: %s. It can no longer run commands, or report when they end. "+
			"Close it with shell_close and open a new one with shell_open; its variables, functions and background processes are lost.]\n", sh.id, sh.broken)
		return
	}
	var lost string
	switch {
	case sh.noStdout && sh.noStderr:
		lost = "stdout and stderr no longer lead"
	case sh.noStdout:
		lost = "stdout no longer leads"
	case sh.noStderr:
		lost = "stderr no longer leads"
	}
	if lost != "" {
		fmt.Fprintf(b, "[The shell's %s to this tool (a command redirected or closed it, as exec >file does), so what commands print there is not shown. "+
			"Restore both with exec >&%d 2>&%d, or close the shell with shell_close and open a new one.]\n", lost, outputFD, outputFD)
	}
	if sh.errexit {
		b.WriteString("[set -e is on in this shell: the next command that fails ends the shell, and its state is lost. Turn it off with set +e.]\n")
	}
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
// (when the session closes) closes every shell and stops every process
// it started.
type shells struct {
	cfg    *shellkit.Config
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

func newShells(cfg *shellkit.Config) *shells {
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
		return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("Shell %s is closed (%s). Open a new one with shell_open; its state starts fresh.", id, why)}
	}
	known := "No shell is open."
	if len(m.order) > 0 {
		known = "Open shells: " + strings.Join(m.order, ", ") + "."
	}
	return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("There is no shell %q. %s Open one with shell_open.", id, known)}
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

// closeShell stops every process of the shell and waits for them, and
// reports how that went. It is safe to call more than once and from
// several goroutines.
func (m *shells) closeShell(sh *shell, why string) proctree.Outcome {
	m.forget(sh, why)
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		<-sh.done
		return sh.stopped
	}
	sh.closed = true
	if sh.idle != nil {
		sh.idle.Stop()
	}
	p, watched := sh.p, sh.watched
	sh.mu.Unlock()
	var out proctree.Outcome
	if p != nil {
		out = p.Stop(m.cfg.Grace)
	}
	if watched != nil {
		<-watched
	}
	if len(out.Survivors) > 0 {
		m.noteGone(sh, fmt.Sprintf("%s; these processes it started still run: %s", why, proctree.SurvivorList(out.Survivors)))
	}
	sh.stopped = out
	close(sh.done)
	return out
}

// noteGone replaces the reason remembered for a closed shell.
func (m *shells) noteGone(sh *shell, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.gone[sh.id]; ok {
		m.gone[sh.id] = why
	}
}

// reapIdle closes a shell that has not been used for the idle timeout.
func (m *shells) reapIdle(sh *shell) {
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return
	}
	if left := m.cfg.Idle - time.Since(sh.lastUse); left > 0 {
		sh.idle.Reset(left)
		sh.mu.Unlock()
		return
	}
	sh.mu.Unlock()
	m.closeShell(sh, fmt.Sprintf("closed after %s without use", shellkit.Dur(m.cfg.Idle)))
}

// Close closes every shell and waits for their processes to end. It
// returns an error matching harness.CodeNotStopped when processes are still
// running afterwards.
func (m *shells) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	open := shellkit.InOrder(m.order, m.open)
	m.mu.Unlock()
	err := shellkit.StopAll(open, func(sh *shell) error {
		out := m.closeShell(sh, "the agent session closed")
		sh.mu.Lock()
		w := sh.window
		sh.mu.Unlock()
		w.Finish(false)
		return out.SurvivorsError("shell " + sh.id)
	})
	m.cancel()
	return err
}
