package proctree

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
)

// ErrPlatform is the error of Start on a system without the processes
// and signals it needs (one that is not Unix-like).
var ErrPlatform = errors.New("proctree: processes can be contained only on a Unix-like system")

// errSurvivors is wrapped by the error Outcome.SurvivorsError returns
// when processes are still running after SIGKILL: processes stuck in the
// kernel, or, without a PID namespace, processes that could not be found
// to be stopped. The error names them and matches
// harness.CodeNotStopped.
func errSurvivors() error {
	return &harness.Error{Code: harness.CodeNotStopped, Message: "processes survived the stop"}
}

// Kinds of containment.
const (
	// containNS: each command runs in a PID namespace of its own, under
	// a small init; ending the init ends every process in it.
	containNS = "pid namespace"
	// containCgroup: each command runs in a cgroup of its own, which
	// lists every process it starts; cgroup.kill ends them all.
	containCgroup = "cgroup"
	// containTree: the command's processes are found by following its
	// descendants through /proc, and by a marker in their environment.
	containTree = "process tree"
	// containGroup: only the command's process group is followed.
	containGroup = "process group"
)

// Containment says how the processes of a command are held together,
// so that a stop reaches all of them: found once by Probe, used for
// every Start.
type Containment struct {
	kind string
	// why a PID namespace is not used, for containTree and containGroup.
	reason string
	// userNS: the PID namespace was made inside a user namespace.
	userNS bool

	// For containNS: the programs the init runs, resolved once.
	bash, sleep, mount string

	// For containCgroup: where each command's cgroup is made; and the
	// PID namespace containment for commands that are their own init
	// (Command.Init), probed the first time one is needed.
	cg     *cgroupTree
	nsOnce sync.Once
	nsOpts Options
	nsc    *Containment
}

// initContainment returns the containment for a command that is its
// own init: c itself, or in a cgroup containment, the PID namespace one
// (probed once), which may be the process tree.
func (c *Containment) initContainment() *Containment {
	if c.kind != containCgroup {
		return c
	}
	c.nsOnce.Do(func() { c.nsc = probeNamespace(c.nsOpts) })
	return c.nsc
}

// String describes the containment for a log or a result: "pid
// namespace", or "process tree (no pid namespace: operation not
// permitted)".
func (c *Containment) String() string {
	if c.reason != "" {
		return fmt.Sprintf("%s (no pid namespace: %s)", c.kind, c.reason)
	}
	return c.kind
}

// Namespace reports that commands can run in a PID namespace of their
// own, which no process can leave: every command, or, in a cgroup
// containment, those that are their own init (Command.Init).
func (c *Containment) Namespace() bool { return c.initContainment().kind == containNS }

// UserNamespace reports that the PID namespaces are made inside a user
// namespace (as an unprivileged user).
func (c *Containment) UserNamespace() bool { return c.initContainment().userNS }

// Cgroup reports that each command (but one that is its own init) runs
// in a cgroup of its own.
func (c *Containment) Cgroup() bool { return c.kind == containCgroup }

// Options configure Probe.
type Options struct {
	// Shell is a bash to run a namespace's init with when no "bash" is
	// found on PATH; empty means none.
	Shell string
	// NoNamespace, when set, keeps commands out of PID namespaces and
	// cgroups, with its text as the reason (for tests of the process
	// tree).
	NoNamespace error
	// NoCgroup, when set, keeps commands out of cgroups of their own, so
	// that a PID namespace is tried first (for tests of that path).
	NoCgroup bool
}

// Probe finds out which containment works here, by starting a trivial
// command in a cgroup of its own, then in a PID namespace each way that
// may work (as root, then in a user namespace), and falling back to the
// process tree (or, without /proc, the process group). It takes a few
// milliseconds; call it once.
func Probe(o Options) *Containment { return probe(o) }

// Member is one process of a command.
type Member struct {
	PID   int
	Start uint64 // start time in clock ticks since boot; 0 when unknown
	Name  string // the command name the kernel keeps (comm)
}

// SurvivorList names processes for the model: "pid 12 (sleep), pid 40
// (python3)", cut after a few.
func SurvivorList(ms []Member) string {
	const show = 8
	var parts []string
	for i, m := range ms {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(ms)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("pid %d (%s)", m.PID, m.Name))
	}
	return strings.Join(parts, ", ")
}

// Outcome says how a stop went.
type Outcome struct {
	// Signal is "SIGTERM" when every process ended after SIGTERM within
	// the grace period, "SIGKILL" when SIGKILL was needed, and "" when
	// nothing was left to stop.
	Signal string
	// Survivors are processes still running after SIGKILL.
	Survivors []Member
}

// SurvivorsError reports what outlived a stop, or nil: an error matching
// harness.CodeNotStopped that names what (a job, a shell, a server) and
// its surviving processes.
func (o Outcome) SurvivorsError(what string) error {
	if len(o.Survivors) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s left running: %s", errSurvivors(), what, SurvivorList(o.Survivors))
}

// Ended describes the stop for the model, as the end of a sentence
// whose subject is the command's processes. partial says that the
// containment may have missed processes (Proc.Partial).
func (o Outcome) Ended(partial bool) string {
	var b strings.Builder
	switch o.Signal {
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
	if len(o.Survivors) > 0 {
		fmt.Fprintf(&b, ", but these still run: %s", SurvivorList(o.Survivors))
	}
	return b.String()
}

// Proc is a started command and everything it starts.
type Proc struct {
	cmd  *exec.Cmd // the process started: the namespace's init, or the command itself
	cont *Containment
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
	// containCgroup: the command's cgroup directory.
	cgroup string
	// containTree: the marker in the environment of the command's
	// processes, and the processes seen so far.
	marker string
	knownM sync.Mutex
	known  map[int]uint64

	stopM sync.Mutex
	final *Outcome // set once nothing of the command is left
}

// Command is what Start starts.
type Command struct {
	// Argv is the program and its arguments; Argv[0] is looked up in
	// PATH.
	Argv []string
	// Dir is the working directory; Env the whole environment.
	Dir string
	Env []string
	// Stdin is the command's standard input; nil means /dev/null.
	Stdin *os.File
	// Stdout and Stderr receive its output; nil means /dev/null.
	Stdout, Stderr *os.File
	// Extra are descriptors 3 and up (in a PID namespace under the
	// tools' init, at most one).
	Extra []*os.File
	// Init says that the program is fit to be the init of the command's
	// PID namespace itself: it reaps the orphans of what it starts, and
	// when it ends nothing it started is left (bwrap with --unshare-pid,
	// whose own init ends the sandbox when the command ends; an exec
	// chain that ends in such a program counts). In a PID namespace it is
	// then started as the namespace's first process, without the tools'
	// init and holder: a stop sends SIGTERM to the others and SIGKILL to
	// it. Elsewhere Init changes nothing.
	Init bool
	// NewNet asks for a network namespace of the command's own, with
	// nothing but the loopback device, up: for a command that is its own
	// init, in a PID namespace the tools make as root (Linux). Start
	// fails with ErrNoNewNet where it cannot be made.
	NewNet bool
}

// ErrNoNewNet is the error of Start when Command.NewNet cannot be
// honoured here.
var ErrNoNewNet = errors.New("proctree: a network namespace is made only for a command that is its own init, in a PID namespace made as root")

// stdinOf returns the standard input to give x, as exec.Cmd takes it
// (a nil *os.File in an io.Reader would not be nil).
func stdinOf(x Command) io.Reader {
	if x.Stdin == nil {
		return nil
	}
	return x.Stdin
}

// writer is f as exec.Cmd takes an output: nil for none.
func writer(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

// Start starts x contained as c says. The caller must end what it
// starts with Stop or ReapLeftovers.
func Start(c *Containment, x Command) (*Proc, error) {
	if !supported {
		return nil, ErrPlatform
	}
	if len(x.Argv) == 0 {
		return nil, errors.New("proctree: no program to start")
	}
	path, err := exec.LookPath(x.Argv[0])
	if err != nil {
		return nil, err
	}
	x.Argv = append([]string{path}, x.Argv[1:]...)
	return startContained(c, x)
}

// How describes the containment in force for this command, for a
// result or a log: the Containment's String, and for a PID namespace
// whose /proc is the host's, a note that says so.
func (p *Proc) How() string { return p.how }

// Partial reports that the containment may miss processes: without a
// PID namespace, a process that leaves the tree and clears its
// environment cannot be found.
func (p *Proc) Partial() bool { return p.cont.kind == containTree || p.cont.kind == containGroup }

// Main returns the pid, as this process sees it, of the command's own
// process.
func (p *Proc) Main() int { return p.main }

// MainDone is closed when the command's own process has ended (what it
// started may still run).
func (p *Proc) MainDone() <-chan struct{} { return p.mainDone }

// Exited reports whether the command's own process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.mainDone:
		return true
	default:
		return false
	}
}

// Stop ends every process of the command: SIGTERM to each, SIGKILL to
// what is left after grace, and, in a PID namespace, SIGKILL to its init,
// which ends whatever is still in it. It waits for them to go (or for
// killWait after SIGKILL) and reports how it went. Later calls return
// the first stop's outcome.
func (p *Proc) Stop(grace time.Duration) Outcome {
	p.stopM.Lock()
	defer p.stopM.Unlock()
	if p.final != nil {
		return *p.final
	}
	return p.stopLocked(grace, p.Members(true))
}

func (p *Proc) stopLocked(grace time.Duration, ms []Member) Outcome {
	out := Outcome{}
	if len(ms) > 0 {
		p.terminate(ms)
		out.Signal = "SIGTERM"
		if !p.settle(grace) {
			out.Signal = "SIGKILL"
		}
	}
	out.Survivors = p.finish()
	p.final = &out
	return out
}

// ReapLeftovers waits for the main process to end, then stops what it
// left running. It reports whether anything was left, and how the stop
// went.
func (p *Proc) ReapLeftovers(grace time.Duration) (bool, Outcome) {
	<-p.mainDone
	p.stopM.Lock()
	defer p.stopM.Unlock()
	if p.final != nil {
		return false, *p.final
	}
	ms := p.Members(true)
	out := p.stopLocked(grace, ms)
	return len(ms) > 0, out
}

// settle waits until no process of the command is left, or d passes,
// and reports which.
func (p *Proc) settle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		// The cheap look first; the full search only when it finds
		// nothing.
		if len(p.Members(false)) == 0 && len(p.Members(true)) == 0 {
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

// ExitInfo describes how the main process ended: its exit code, or the
// signal that killed it. Both are empty while it runs, and when its
// status could not be learnt.
func (p *Proc) ExitInfo() (code *int, signal string) {
	select {
	case <-p.mainDone:
		return p.code, p.signal
	default:
		return nil, ""
	}
}
