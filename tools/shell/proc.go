package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
)

var errPlatform = errors.New("shell: the shell tools need a Unix-like system")

// errSurvivors is wrapped by the error that closing a session's shells
// or jobs returns when processes they started are still running after
// SIGKILL: processes stuck in the kernel, or, without a PID namespace,
// processes that could not be found to be stopped. The error names them
// and matches harness.CodeNotStopped.
func errSurvivors() error {
	return &harness.Error{Code: harness.CodeNotStopped, Message: "shell: processes survived the stop"}
}

// startError turns a failure to start bash into an error for the model.
func startError(err error) error {
	if errors.Is(err, errPlatform) {
		return &harness.Error{Code: codeUnsupported, Err: err, Message: "Shell commands cannot run on this platform: the shell tools need a Unix-like system with bash."}
	}
	return &harness.Error{Code: codeNoShell, Err: err, Message: fmt.Sprintf("bash could not be started: %v.", err)}
}

// Kinds of containment.
const (
	// containNS: each command runs in a PID namespace of its own, under
	// a small init; ending the init ends every process in it.
	containNS = "pid namespace"
	// containTree: the command's processes are found by following its
	// descendants through /proc, and by a marker in their environment.
	containTree = "process tree"
	// containGroup: only the command's process group is followed.
	containGroup = "process group"
)

// containment says how the processes of a command are held together, so
// that a stop reaches all of them.
type containment struct {
	kind string
	// why a PID namespace is not used, for containTree and containGroup.
	reason string
	// userNS: the PID namespace was made inside a user namespace.
	userNS bool

	// For containNS: the programs the init runs, resolved once.
	bash, sleep, mount string
}

func (c *containment) String() string {
	if c.reason != "" {
		return fmt.Sprintf("%s (no pid namespace: %s)", c.kind, c.reason)
	}
	return c.kind
}

// containment returns how commands are contained, probing the first time.
func (c *config) containment() *containment {
	c.probe.Do(func() { c.cont = probeContainment(c) })
	return c.cont
}

// withoutNamespace keeps commands out of PID namespaces, giving reason
// as the cause; for tests of the other containment.
func withoutNamespace(reason string) Option {
	return func(c *config) { c.noNamespace = errors.New(reason) }
}

// member is one process of a command.
type member struct {
	pid   int
	start uint64 // start time in clock ticks since boot; 0 when unknown
	name  string // the command name the kernel keeps (comm)
}

// survivorList names processes for the model: "pid 12 (sleep), pid 40
// (python3)", cut after a few.
func survivorList(ms []member) string {
	const show = 8
	var parts []string
	for i, m := range ms {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(ms)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("pid %d (%s)", m.pid, m.name))
	}
	return strings.Join(parts, ", ")
}

// stopOutcome says how a stop went.
type stopOutcome struct {
	// signal is "SIGTERM" when every process ended after SIGTERM within
	// the grace period, "SIGKILL" when SIGKILL was needed, and "" when
	// nothing was left to stop.
	signal string
	// survivors are processes still running after SIGKILL.
	survivors []member
}

// survivorsError reports what outlived a stop, or nil.
func (o stopOutcome) survivorsError(what string) error {
	if len(o.survivors) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s left running: %s", errSurvivors(), what, survivorList(o.survivors))
}

// pipes opens n pipes and returns their read ends and their write ends;
// when one cannot be opened it closes those it opened.
func pipes(n int) (r, w []*os.File, err error) {
	r, w = make([]*os.File, n), make([]*os.File, n)
	for i := range n {
		if r[i], w[i], err = os.Pipe(); err != nil {
			for j := range i {
				r[j].Close()
				w[j].Close()
			}
			return nil, nil, err
		}
	}
	return r, w, nil
}

// inOrder returns what ids name in m: the jobs or shells of a table in
// the order they were started.
func inOrder[T any](ids []string, m map[string]T) []T {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		out = append(out, m[id])
	}
	return out
}

// stopAll runs stop for every one of items at once, waits for them all,
// and joins what they report.
func stopAll[T any](items []T, stop func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, v := range items {
		wg.Go(func() { errs[i] = stop(v) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ended describes the stop for the model, as the end of a sentence
// whose subject is the command's processes. partial says that the
// containment may have missed processes.
func (o stopOutcome) ended(partial bool) string {
	var b strings.Builder
	switch o.signal {
	case "SIGTERM":
		b.WriteString("were sent SIGTERM and ended")
	case "SIGKILL":
		b.WriteString("were sent SIGTERM, did not all end in time and were killed with SIGKILL")
	default:
		b.WriteString("had ended")
	}
	if partial {
		b.WriteString(" (all that could be found)")
	}
	if len(o.survivors) > 0 {
		fmt.Fprintf(&b, ", but these still run: %s", survivorList(o.survivors))
	}
	return b.String()
}

// proc is a started command and everything it starts.
type proc struct {
	cmd  *exec.Cmd // the process started: the namespace's init, or the command itself
	cont *containment
	// how describes the containment in force for this command.
	how string
	// main is the pid (as the tools see it) of the command's own
	// process: bash, or the sandbox wrapping it.
	main int

	mainDone chan struct{} // closed when the main process has ended; code and signal are set
	code     *int
	signal   string

	gone    chan struct{} // closed when the started process has been reaped
	waitErr error

	// containNS: the init (the started process) and the process that
	// holds the main process's exit status until it is read.
	init, holder int
	pidNS        string // the namespace, as /proc/PID/ns/pid names it
	// containTree: the marker in the environment of the command's
	// processes, and the processes seen so far.
	marker string
	knownM sync.Mutex
	known  map[int]uint64

	stopM sync.Mutex
	final *stopOutcome // set once nothing of the command is left
}

// startProc starts argv in dir with stdin from /dev/null, stdout and
// stderr on the given files and extra as descriptors 3 and up, contained
// as the configuration's probe found possible.
func startProc(c *config, argv []string, dir string, env []string, stdout, stderr *os.File, extra ...*os.File) (*proc, error) {
	if !supported {
		return nil, errPlatform
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	argv = append([]string{path}, argv[1:]...)
	return startContained(c.containment(), argv, dir, env, stdout, stderr, extra)
}

// exited reports whether the main process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.mainDone:
		return true
	default:
		return false
	}
}

// stop ends every process of the command: SIGTERM to each, SIGKILL to
// what is left after grace, and, in a PID namespace, SIGKILL to its init,
// which ends whatever is still in it. It waits for them to go (or for
// killWait after SIGKILL) and reports how it went. Later calls return
// the first stop's outcome.
func (p *proc) stop(grace time.Duration) stopOutcome {
	p.stopM.Lock()
	defer p.stopM.Unlock()
	if p.final != nil {
		return *p.final
	}
	return p.stopLocked(grace, p.members(true))
}

func (p *proc) stopLocked(grace time.Duration, ms []member) stopOutcome {
	out := stopOutcome{}
	if len(ms) > 0 {
		p.terminate(ms)
		out.signal = "SIGTERM"
		if !p.settle(grace) {
			out.signal = "SIGKILL"
		}
	}
	out.survivors = p.finish()
	p.final = &out
	return out
}

// reapLeftovers waits for the main process to end, then stops what it
// left running. It reports whether anything was left, and how the stop
// went.
func (p *proc) reapLeftovers(grace time.Duration) (bool, stopOutcome) {
	<-p.mainDone
	p.stopM.Lock()
	defer p.stopM.Unlock()
	if p.final != nil {
		return false, *p.final
	}
	ms := p.members(true)
	out := p.stopLocked(grace, ms)
	return len(ms) > 0, out
}

// settle waits until no process of the command is left, or d passes,
// and reports which.
func (p *proc) settle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		// The cheap look first; the full search only when it finds
		// nothing.
		if len(p.members(false)) == 0 && len(p.members(true)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killWait bounds the wait for SIGKILLed processes to disappear; only a
// process stuck in the kernel takes longer.
const killWait = 2 * time.Second

// exitInfo describes how the main process ended: its exit code, or the
// signal that killed it. Both are empty while it runs, and when its
// status could not be learnt.
func (p *proc) exitInfo() (code *int, signal string) {
	select {
	case <-p.mainDone:
		return p.code, p.signal
	default:
		return nil, ""
	}
}
