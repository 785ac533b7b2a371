package shellkit

import (
	"errors"
	"sync"
	"time"

	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Defaults of the shell tools; shell.Config documents each.
const (
	// DefaultTimeout is how long a one-shot bash command may run when the
	// call names no timeout.
	DefaultTimeout = 120 * time.Second
	// DefaultMaxTimeout is the longest timeout a call may ask for; longer
	// requests are clamped to it.
	DefaultMaxTimeout = 600 * time.Second
	// DefaultKillGrace is how long a process group has to exit after
	// SIGTERM before it gets SIGKILL.
	DefaultKillGrace = 3 * time.Second
	// DefaultOutputLimit is how many bytes of command output one result
	// shows the model. The rest is saved whole in the output store.
	DefaultOutputLimit = 20000
	// DefaultMaxSpill caps how many bytes of one stream are saved to the
	// output store; the rest is counted but not kept.
	DefaultMaxSpill = 2 << 30
	// DefaultMaxShells is how many persistent shells one agent session
	// may have open at once.
	DefaultMaxShells = 8
	// DefaultIdleTimeout is how long a persistent shell may go without a
	// call before it is closed.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultSendWait is how long shell_send waits for its command to
	// finish before it returns the output so far.
	DefaultSendWait = 30 * time.Second
	// DefaultReadWait is how long shell_read and bash_output wait for a
	// running command to finish.
	DefaultReadWait = 10 * time.Second
	// DefaultMaxWait is the longest wait_ms a call may ask for.
	DefaultMaxWait = 600 * time.Second
	// DefaultMaxJobs is how many background jobs one agent session keeps
	// (running, or finished and not yet read).
	DefaultMaxJobs = 8
	// NotStartedHint is how long after a command was sent a missing start
	// record of a persistent shell is worth a warning: an idle shell reads
	// a line within milliseconds.
	NotStartedHint = 2 * time.Second
)

// Config is the checked configuration every shell tool runs with: how
// processes start (bash, environment, sandbox, containment), the time
// bounds and the limits. shell.Config is what a host writes; the shell
// package checks it and fills in the defaults. Tools share a Config and
// never change it after they are built.
type Config struct {
	// Shell is the bash executable, a path or a name looked up in PATH.
	Shell string
	// BaseEnv, when not nil, replaces the program's environment as the
	// one commands inherit from (filtered; see Environ).
	BaseEnv []string
	// PassEnv names inherited variables commands get whatever the filter
	// says; a name ending in * is a prefix.
	PassEnv []string
	// Env is set in every process, after the forced settings.
	Env []string
	// Sandbox confines every command; nil runs them unconfined.
	Sandbox Sandbox

	Timeout, MaxTimeout time.Duration // of one-shot commands
	Grace               time.Duration // between SIGTERM and SIGKILL
	Idle                time.Duration // of a persistent shell
	SendWait, ReadWait  time.Duration // defaults of wait_ms
	MaxWait             time.Duration // the largest wait_ms

	OutputLimit int   // bytes of a stream a result shows
	MaxSpill    int64 // bytes of a stream saved
	MaxShells   int   // persistent shells open per session
	MaxJobs     int   // background jobs kept per session

	// Err holds the invalid values of the host's configuration; every
	// tool's Validate reports it.
	Err error
	// StartHint is how long a missing start record may last before a
	// result warns that the shell seems not to read its input.
	StartHint time.Duration
	// NoNamespace, when set, keeps commands out of PID namespaces (the
	// process tree is followed instead) and is the reason given; tests
	// set it to cover that path.
	NoNamespace error
	// NoCgroup, when set, keeps commands out of cgroups of their own, so
	// that a PID namespace is used where one can be made; tests set it to
	// cover that path.
	NoCgroup bool

	// probe finds, once, which containment works; cont is its answer.
	probe sync.Once
	cont  *proctree.Containment
}

// Defaults returns the configuration with every default.
func Defaults() *Config {
	return &Config{
		Shell:       "bash",
		Timeout:     DefaultTimeout,
		MaxTimeout:  DefaultMaxTimeout,
		Grace:       DefaultKillGrace,
		OutputLimit: DefaultOutputLimit,
		MaxSpill:    DefaultMaxSpill,
		MaxShells:   DefaultMaxShells,
		Idle:        DefaultIdleTimeout,
		SendWait:    DefaultSendWait,
		ReadWait:    DefaultReadWait,
		MaxWait:     DefaultMaxWait,
		MaxJobs:     DefaultMaxJobs,
		StartHint:   NotStartedHint,
	}
}

// Fail records an invalid configuration value; the tools report it
// through Validate.
func (c *Config) Fail(format string, args ...any) {
	c.Err = errors.Join(c.Err, toolexec.OptionError(format, args...))
}

// Containment returns how commands are contained, probing the first
// time (see internal/proctree, which the MCP servers' processes share).
func (c *Config) Containment() *proctree.Containment {
	c.probe.Do(func() {
		c.cont = proctree.Probe(proctree.Options{Shell: c.Shell, NoNamespace: c.NoNamespace, NoCgroup: c.NoCgroup})
	})
	return c.cont
}

// Checked makes each tool report the configuration's invalid values
// through Validate.
func (c *Config) Checked(ts ...tools.Tool) []tools.Tool {
	for i, t := range ts {
		ts[i] = toolexec.Checked(t, c.Err)
	}
	return ts
}
