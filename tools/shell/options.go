package shell

import (
	"errors"
	"strings"
	"time"

	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// Option configures the shell tools.
type Option func(*options)

// options is the configuration the options build, with what the checks
// after them need to know.
type options struct {
	*shellkit.Config
	// timeoutSet, sendWaitSet and readWaitSet report defaults set by an
	// option, which must not exceed their maximum.
	timeoutSet, sendWaitSet, readWaitSet bool
}

func newConfig(opts []Option) *shellkit.Config {
	c := &options{Config: shellkit.Defaults()}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	// A default the caller did not set follows a lower maximum the caller
	// did set; a default the caller set above the maximum is a mistake.
	c.Timeout = c.defaultUnder("WithTimeouts", "Command timeout", c.Timeout, c.timeoutSet, c.MaxTimeout)
	c.SendWait = c.defaultUnder("WithTimeouts", "Send wait", c.SendWait, c.sendWaitSet, c.MaxWait)
	c.ReadWait = c.defaultUnder("WithTimeouts", "Read wait", c.ReadWait, c.readWaitSet, c.MaxWait)
	return c.Config
}

// defaultUnder returns the default d, kept at or below max.
func (c *options) defaultUnder(opt, what string, d time.Duration, set bool, max time.Duration) time.Duration {
	if d <= max {
		return d
	}
	if set {
		c.Fail("shell: %s: the %s (%s) is above the maximum (%s)", opt, what, d, max)
	}
	return max
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
	return func(c *options) {
		for _, v := range p.Env {
			if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
				c.Fail("shell: WithProcess: Process.Env entry %q: an entry has the form NAME=value", v)
				return
			}
		}
		if p.Shell != "" {
			c.Shell = p.Shell
		}
		if p.BaseEnv != nil {
			c.BaseEnv = append(make([]string, 0, len(p.BaseEnv)), p.BaseEnv...)
		}
		c.Env = append(c.Env, p.Env...)
		for _, n := range p.PassEnv {
			if n == "" || strings.ContainsAny(n, "= ") || strings.Contains(strings.TrimSuffix(n, "*"), "*") {
				c.Fail("shell: WithProcess: Process.PassEnv entry %q: give a variable name, or a prefix ending in *", n)
				return
			}
		}
		c.PassEnv = append(c.PassEnv, p.PassEnv...)
		if p.Sandbox != nil {
			c.Sandbox = p.Sandbox
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
	return func(c *options) {
		if t.Command < 0 || t.MaxCommand < 0 || t.KillGrace < 0 || t.Idle < 0 || t.Send < 0 || t.Read < 0 || t.MaxWait < 0 {
			c.Fail("shell: WithTimeouts(%+v): timeouts must not be negative (zero keeps a default)", t)
			return
		}
		if t.Command > 0 {
			c.Timeout, c.timeoutSet = t.Command, true
			if t.MaxCommand == 0 {
				c.MaxTimeout = max(c.MaxTimeout, t.Command)
			}
		}
		if t.MaxCommand > 0 {
			c.MaxTimeout = t.MaxCommand
		}
		if t.KillGrace > 0 {
			c.Grace = t.KillGrace
		}
		if t.Idle > 0 {
			c.Idle = t.Idle
		}
		if t.Send > 0 {
			c.SendWait, c.sendWaitSet = t.Send, true
		}
		if t.Read > 0 {
			c.ReadWait, c.readWaitSet = t.Read, true
		}
		if t.MaxWait > 0 {
			c.MaxWait = t.MaxWait
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
	return func(c *options) {
		if l.Output < 0 || l.Output > 0 && l.Output < spillwriter.MinThreshold || l.Saved < 0 || l.Shells < 0 || l.Jobs < 0 {
			c.Fail("shell: WithLimits(%+v): limits must not be negative and Output is at least %d bytes (zero keeps a default)", l, spillwriter.MinThreshold)
			return
		}
		if l.Output > 0 {
			c.OutputLimit = l.Output
		}
		if l.Saved > 0 {
			c.MaxSpill = l.Saved
		}
		if l.Shells > 0 {
			c.MaxShells = l.Shells
		}
		if l.Jobs > 0 {
			c.MaxJobs = l.Jobs
		}
	}
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

// withoutNamespace keeps commands out of PID namespaces, giving reason
// as the cause; for tests of the other containment.
func withoutNamespace(reason string) Option {
	return func(c *options) { c.NoNamespace = errors.New(reason) }
}
