package shell

import (
	"slices"
	"strings"
	"time"

	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// Config configures the shell tools. The zero value is the default: bash
// from PATH, the program's environment without the variables that look
// like credentials, no sandbox, and the time bounds and limits that
// Timeouts and Limits state. An invalid value is reported by every
// tool's Validate method (harness.CodeInvalidOption), which
// tools.NewRegistry calls, so the agent loop refuses the tools.
type Config struct {
	// Shell is the bash executable: a path, or a name looked up in PATH
	// when a command starts ("bash" when empty). The tools rely on bash
	// syntax; another shell will not work.
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
	// session log (never their values). An entry that is not a name or a
	// prefix is an error.
	PassEnv []string
	// Env adds environment variables ("NAME=value") to every process.
	// They override inherited variables and the non-interactive settings
	// the tools force otherwise (PAGER, TERM, ...). An entry without a
	// name and "=" is an error.
	Env []string
	// Sandbox, when set, confines every command (see Bubblewrap). A
	// persistent shell applies the sandbox when it opens and keeps what it
	// got until it closes, even if the sandbox would answer differently
	// later. Without one, commands run unconfined, and the session log
	// says so.
	Sandbox Sandbox
	// Timeouts are the time bounds of the tools; a zero field keeps its
	// default.
	Timeouts Timeouts
	// Limits bound what the tools keep; a zero field keeps its default.
	Limits Limits
}

// Timeouts are the time bounds of the shell tools, in Config. A zero
// field keeps its default; a negative one is an error.
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

// Limits bound what the shell tools keep, in Config. A zero field keeps
// its default; any other value out of range is an error.
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

// resolve checks cfg and returns the configuration the tools run with:
// the defaults, with what cfg sets. Invalid values are collected in its
// Err, which the tools report through Validate.
func (cfg Config) resolve() *shellkit.Config {
	c := shellkit.Defaults()
	cfg.process(c)
	cfg.Timeouts.apply(c)
	cfg.Limits.apply(c)
	return c
}

// process sets how processes start: which bash, with which environment,
// under which sandbox.
func (cfg Config) process(c *shellkit.Config) {
	for _, v := range cfg.Env {
		if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
			c.Fail("shell: Config.Env entry %q: an entry has the form NAME=value", v)
		}
	}
	for _, n := range cfg.PassEnv {
		if n == "" || strings.ContainsAny(n, "= ") || strings.Contains(strings.TrimSuffix(n, "*"), "*") {
			c.Fail("shell: Config.PassEnv entry %q: give a variable name, or a prefix ending in *", n)
		}
	}
	if cfg.Shell != "" {
		c.Shell = cfg.Shell
	}
	if cfg.BaseEnv != nil {
		c.BaseEnv = append(make([]string, 0, len(cfg.BaseEnv)), cfg.BaseEnv...)
	}
	c.Env = slices.Clone(cfg.Env)
	c.PassEnv = slices.Clone(cfg.PassEnv)
	if cfg.Sandbox != nil {
		c.Sandbox = cfg.Sandbox
	}
}

func (t Timeouts) apply(c *shellkit.Config) {
	if t.Command < 0 || t.MaxCommand < 0 || t.KillGrace < 0 || t.Idle < 0 || t.Send < 0 || t.Read < 0 || t.MaxWait < 0 {
		c.Fail("shell: Config.Timeouts %+v: timeouts must not be negative (zero keeps a default)", t)
		return
	}
	if t.Command > 0 {
		c.Timeout = t.Command
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
		c.SendWait = t.Send
	}
	if t.Read > 0 {
		c.ReadWait = t.Read
	}
	if t.MaxWait > 0 {
		c.MaxWait = t.MaxWait
	}
	// A default the host did not set follows a lower maximum the host
	// did set; a default the host set above the maximum is a mistake.
	c.Timeout = underMax(c, "Command timeout", c.Timeout, t.Command > 0, c.MaxTimeout)
	c.SendWait = underMax(c, "Send wait", c.SendWait, t.Send > 0, c.MaxWait)
	c.ReadWait = underMax(c, "Read wait", c.ReadWait, t.Read > 0, c.MaxWait)
}

// underMax returns the default d, kept at or below max.
func underMax(c *shellkit.Config, what string, d time.Duration, set bool, max time.Duration) time.Duration {
	if d <= max {
		return d
	}
	if set {
		c.Fail("shell: Config.Timeouts: the %s (%s) is above the maximum (%s)", what, d, max)
	}
	return max
}

func (l Limits) apply(c *shellkit.Config) {
	if l.Output < 0 || l.Output > 0 && l.Output < spillwriter.MinThreshold || l.Saved < 0 || l.Shells < 0 || l.Jobs < 0 {
		c.Fail("shell: Config.Limits %+v: limits must not be negative and Output is at least %d bytes (zero keeps a default)", l, spillwriter.MinThreshold)
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
