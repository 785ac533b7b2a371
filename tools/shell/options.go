package shell

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/internal/toolexec"
)

// Defaults of the shell tools; each can be changed with an Option, whose
// documentation states it.
const (
	// defaultTimeout is how long a one-shot bash command may run when the
	// call names no timeout.
	defaultTimeout = 120 * time.Second
	// defaultMaxTimeout is the longest timeout a call may ask for; longer
	// requests are clamped to it.
	defaultMaxTimeout = 600 * time.Second
	// defaultKillGrace is how long a process group has to exit after
	// SIGTERM before it gets SIGKILL.
	defaultKillGrace = 3 * time.Second
	// defaultOutputLimit is how many bytes of command output one result
	// shows the model. The rest is saved whole in the output store.
	defaultOutputLimit = 20000
	// defaultMaxSpill caps how many bytes of one stream are saved to the
	// output store; the rest is counted but not kept.
	defaultMaxSpill = 2 << 30
	// defaultMaxSessions is how many persistent shells one agent session
	// may have open at once.
	defaultMaxSessions = 8
	// defaultIdleTimeout is how long a persistent shell may go without a
	// call before it is closed.
	defaultIdleTimeout = 30 * time.Minute
	// defaultSendWait is how long shell_send waits for its command to
	// finish before it returns the output so far.
	defaultSendWait = 30 * time.Second
	// defaultReadWait is how long shell_read and bash_output wait for a
	// running command to finish.
	defaultReadWait = 10 * time.Second
	// defaultMaxWait is the longest wait_ms a call may ask for.
	defaultMaxWait = 600 * time.Second
	// defaultMaxJobs is how many background jobs one agent session keeps
	// (running, or finished and not yet read).
	defaultMaxJobs = 8
	// maxCommandBytes is the size limit of one command.
	maxCommandBytes = 1 << 20
)

// Option configures the shell tools.
type Option func(*config)

type config struct {
	shell       string
	env         []string
	passEnv     []string
	baseEnv     []string
	baseEnvSet  bool
	sandbox     Sandbox
	timeout     time.Duration
	maxTimeout  time.Duration
	grace       time.Duration
	outputLimit int
	maxSpill    int64
	maxSessions int
	idle        time.Duration
	sendWait    time.Duration
	readWait    time.Duration
	maxWait     time.Duration
	maxJobs     int
	// timeoutSet, sendWaitSet and readWaitSet report defaults set by an
	// option, which must not exceed their maximum.
	timeoutSet, sendWaitSet, readWaitSet bool
	// err collects invalid option values; every tool's Validate reports
	// it.
	err error
	// startHint is how long a missing start record may last before a
	// result warns that the shell seems not to read its input.
	startHint time.Duration

	// noNamespace, when set, keeps commands out of PID namespaces (the
	// process tree is followed instead) and is the reason given; tests
	// set it to cover that path.
	noNamespace error
	// probe finds, once, which containment works; cont is its answer.
	probe sync.Once
	cont  *containment
}

func newConfig(opts []Option) *config {
	c := &config{
		shell:       "bash",
		timeout:     defaultTimeout,
		maxTimeout:  defaultMaxTimeout,
		grace:       defaultKillGrace,
		outputLimit: defaultOutputLimit,
		maxSpill:    defaultMaxSpill,
		maxSessions: defaultMaxSessions,
		idle:        defaultIdleTimeout,
		sendWait:    defaultSendWait,
		readWait:    defaultReadWait,
		maxWait:     defaultMaxWait,
		maxJobs:     defaultMaxJobs,
		startHint:   notStartedHint,
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	// A default the caller did not set follows a lower maximum the caller
	// did set; a default the caller set above the maximum is a mistake.
	c.timeout = c.defaultUnder("WithTimeouts", "Command timeout", c.timeout, c.timeoutSet, c.maxTimeout)
	c.sendWait = c.defaultUnder("WithTimeouts", "Send wait", c.sendWait, c.sendWaitSet, c.maxWait)
	c.readWait = c.defaultUnder("WithTimeouts", "Read wait", c.readWait, c.readWaitSet, c.maxWait)
	return c
}

// defaultUnder returns the default d, kept at or below max.
func (c *config) defaultUnder(opt, what string, d time.Duration, set bool, max time.Duration) time.Duration {
	if d <= max {
		return d
	}
	if set {
		c.fail("shell: %s: the %s (%s) is above the maximum (%s)", opt, what, d, max)
	}
	return max
}

// fail records an invalid option value; the tools report it through
// Validate.
func (c *config) fail(format string, args ...any) {
	c.err = errors.Join(c.err, toolexec.OptionError(format, args...))
}

// Process is how the shell tools start the processes they run, for
// [WithProcess]. A zero field keeps its default, or what an earlier
// WithProcess set; an invalid value is an error.
type Process struct {
	// Shell is the bash executable: a path, or a name looked up in PATH
	// when a command starts ("bash"). The tools rely on bash syntax;
	// another shell will not work.
	Shell string
	// BaseEnv, when not nil, replaces the inherited environment (the
	// program's own). An empty, non-nil slice starts from nothing but the
	// forced non-interactive settings and Env. It is filtered as the
	// inherited one is (see PassEnv).
	BaseEnv []string
	// PassEnv names variables of the inherited environment (or BaseEnv)
	// that commands get whatever the filter says; a name ending in * is
	// a prefix ("GO*"). The filter: under a sandbox, commands get only an
	// allow-list (PATH, LANG, LANGUAGE, LC_*, TZ, USER, LOGNAME, HOSTNAME,
	// SHELL, TERM) and these; without one, every variable but those that
	// look like credentials (*_API_KEY, *_KEY, *TOKEN*, *SECRET*,
	// *PASSWORD*, *CREDENTIAL*, AWS_*, DATABASE_URL, SSH_AUTH_SOCK, ...),
	// which only these bring back. The names withheld are recorded in the
	// session log (never their values).
	PassEnv []string
	// Env adds environment variables ("NAME=value") to every process,
	// after those of an earlier WithProcess. They override inherited
	// variables and the non-interactive settings the tools force
	// otherwise (PAGER, TERM, ...). An entry without a name and "=" is an
	// error.
	Env []string
	// Sandbox, when set, confines every command. A persistent shell
	// applies the sandbox when it opens and keeps what it got until it
	// closes, even if the sandbox would answer differently later. Without
	// one, commands run unconfined, and the session log says so.
	Sandbox Sandbox
}

// WithProcess sets how the tools start processes: which bash, with which
// environment, under which sandbox. See Process.
func WithProcess(p Process) Option {
	return func(c *config) {
		for _, v := range p.Env {
			if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
				c.fail("shell: WithProcess: Process.Env entry %q: an entry has the form NAME=value", v)
				return
			}
		}
		if p.Shell != "" {
			c.shell = p.Shell
		}
		if p.BaseEnv != nil {
			c.baseEnv = slices.Clone(p.BaseEnv)
			c.baseEnvSet = true
		}
		c.env = append(c.env, p.Env...)
		for _, n := range p.PassEnv {
			if n == "" || strings.ContainsAny(n, "= ") || strings.Contains(strings.TrimSuffix(n, "*"), "*") {
				c.fail("shell: WithProcess: Process.PassEnv entry %q: give a variable name, or a prefix ending in *", n)
				return
			}
		}
		c.passEnv = append(c.passEnv, p.PassEnv...)
		if p.Sandbox != nil {
			c.sandbox = p.Sandbox
		}
	}
}

// Timeouts are the time bounds of the shell tools, for [WithTimeouts]. A
// zero field keeps its default; a negative one is an error.
type Timeouts struct {
	// Command is the timeout of a one-shot bash command whose call names
	// none (120 s), and MaxCommand the longest timeout a call may ask for
	// (600 s; longer requests are clamped to it). A default Command
	// shrinks to a lower MaxCommand, a default MaxCommand grows to a
	// higher Command, and a Command set above a MaxCommand set is an
	// error.
	Command, MaxCommand time.Duration
	// KillGrace is how long a command's processes have between SIGTERM
	// and SIGKILL (3 s).
	KillGrace time.Duration
	// Idle is how long a persistent shell may go without a call before it
	// is closed, whatever it is running (30 minutes).
	Idle time.Duration
	// Send is how long shell_send waits for its command to finish before
	// it returns the output so far (30 s), Read how long shell_read and
	// bash_output wait for a running command (10 s), and MaxWait the
	// largest wait_ms a call may ask for (600 s). A default Send or Read
	// shrinks to a lower MaxWait; one set above a MaxWait is an error.
	Send, Read, MaxWait time.Duration
}

// WithTimeouts sets the time bounds of the tools: the non-zero fields of
// t replace the defaults (or what an earlier WithTimeouts set). A
// negative field is an error.
func WithTimeouts(t Timeouts) Option {
	return func(c *config) {
		if t.Command < 0 || t.MaxCommand < 0 || t.KillGrace < 0 || t.Idle < 0 || t.Send < 0 || t.Read < 0 || t.MaxWait < 0 {
			c.fail("shell: WithTimeouts(%+v): timeouts must not be negative (zero keeps a default)", t)
			return
		}
		if t.Command > 0 {
			c.timeout, c.timeoutSet = t.Command, true
			if t.MaxCommand == 0 {
				c.maxTimeout = maxDur(c.maxTimeout, t.Command)
			}
		}
		if t.MaxCommand > 0 {
			c.maxTimeout = t.MaxCommand
		}
		if t.KillGrace > 0 {
			c.grace = t.KillGrace
		}
		if t.Idle > 0 {
			c.idle = t.Idle
		}
		if t.Send > 0 {
			c.sendWait, c.sendWaitSet = t.Send, true
		}
		if t.Read > 0 {
			c.readWait, c.readWaitSet = t.Read, true
		}
		if t.MaxWait > 0 {
			c.maxWait = t.MaxWait
		}
	}
}

// Limits bound what the shell tools keep, for [WithLimits]. A zero field
// keeps its default; any other value out of range is an error.
type Limits struct {
	// Output is how many bytes of each stream one result shows the model
	// (20000; the rest is saved whole in the output store): at least
	// 1024 bytes, the room a head, a tail and the note
	// between them need. Keep it well under the spill threshold of the
	// dispatch middleware, so results are never spilled twice.
	Output int
	// Saved caps the bytes of one stream saved to the output store
	// (2 GiB); past it the output is counted but not kept.
	Saved int64
	// Shells is how many persistent shells one agent session may have
	// open at once (8).
	Shells int
	// Jobs is how many background jobs one agent session keeps, running
	// or finished and not yet read (8).
	Jobs int
}

// WithLimits sets what the tools keep: the non-zero fields of l replace
// the defaults (or what an earlier WithLimits set). A negative field, or
// an Output below 1024, is an error.
func WithLimits(l Limits) Option {
	return func(c *config) {
		if l.Output < 0 || l.Output > 0 && l.Output < spillwriter.MinThreshold || l.Saved < 0 || l.Shells < 0 || l.Jobs < 0 {
			c.fail("shell: WithLimits(%+v): limits must not be negative and Output is at least %d bytes (zero keeps a default)", l, spillwriter.MinThreshold)
			return
		}
		if l.Output > 0 {
			c.outputLimit = l.Output
		}
		if l.Saved > 0 {
			c.maxSpill = l.Saved
		}
		if l.Shells > 0 {
			c.maxSessions = l.Shells
		}
		if l.Jobs > 0 {
			c.maxJobs = l.Jobs
		}
	}
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// Sandbox confines the processes the shell tools start, for instance by
// running them under a container or namespace launcher.
type Sandbox interface {
	// Wrap returns the argument vector to execute in place of argv (whose
	// first element is the bash executable). dir is the OS directory the
	// process starts in. The wrapped process must keep file descriptors 0
	// to 3 as it got them and stay in the process group it starts in.
	Wrap(argv []string, dir string) ([]string, error)
	// Describe summarizes the policy for the session log, such as
	// "bwrap: workspace read-write, network off".
	Describe() string
}
