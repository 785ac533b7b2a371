package shell

import (
	"slices"
	"sync"
	"time"
)

// Defaults of the shell tools; each can be changed with an Option.
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
	// DefaultMaxSessions is how many persistent shells one agent session
	// may have open at once.
	DefaultMaxSessions = 8
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
	// MaxCommandBytes is the size limit of one command.
	MaxCommandBytes = 1 << 20
)

// Option configures the shell tools.
type Option func(*config)

type config struct {
	shell       string
	env         []string
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
		timeout:     DefaultTimeout,
		maxTimeout:  DefaultMaxTimeout,
		grace:       DefaultKillGrace,
		outputLimit: DefaultOutputLimit,
		maxSpill:    DefaultMaxSpill,
		maxSessions: DefaultMaxSessions,
		idle:        DefaultIdleTimeout,
		sendWait:    DefaultSendWait,
		readWait:    DefaultReadWait,
		maxWait:     DefaultMaxWait,
		maxJobs:     DefaultMaxJobs,
		startHint:   notStartedHint,
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.timeout > c.maxTimeout {
		c.timeout = c.maxTimeout
	}
	if c.sendWait > c.maxWait {
		c.sendWait = c.maxWait
	}
	if c.readWait > c.maxWait {
		c.readWait = c.maxWait
	}
	return c
}

// WithShell sets the bash executable: a path, or a name looked up in PATH
// when a command starts. The default is "bash". The tools rely on bash
// syntax; another shell will not work.
func WithShell(path string) Option {
	return func(c *config) {
		if path != "" {
			c.shell = path
		}
	}
}

// WithEnv adds environment variables ("NAME=value") to every process the
// tools start. They override inherited variables and the non-interactive
// settings the tools force otherwise (PAGER, TERM, ...).
func WithEnv(vars ...string) Option {
	return func(c *config) { c.env = append(c.env, vars...) }
}

// WithBaseEnv replaces the inherited environment (the program's own, by
// default) with env. Pass an empty, non-nil slice to start from nothing
// but the forced non-interactive settings and WithEnv.
func WithBaseEnv(env []string) Option {
	return func(c *config) {
		c.baseEnv = slices.Clone(env)
		if c.baseEnv == nil {
			c.baseEnv = []string{}
		}
		c.baseEnvSet = true
	}
}

// WithSandbox runs every command under s. A persistent shell applies the
// sandbox when it opens and keeps what it got until it closes, even if s
// would answer differently later.
func WithSandbox(s Sandbox) Option { return func(c *config) { c.sandbox = s } }

// WithTimeout sets the default and the maximum timeout of one-shot bash
// commands. Zero keeps a default.
func WithTimeout(def, max time.Duration) Option {
	return func(c *config) {
		if def > 0 {
			c.timeout = def
		}
		if max > 0 {
			c.maxTimeout = max
		}
	}
}

// WithKillGrace sets how long a process group has between SIGTERM and
// SIGKILL.
func WithKillGrace(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.grace = d
		}
	}
}

// WithOutputLimit sets how many bytes of output one result shows the
// model (at least 1000). Keep it well under the spill threshold of the
// dispatch middleware, so results are never spilled twice.
func WithOutputLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.outputLimit = max(n, 1000)
		}
	}
}

// WithMaxSpill caps the bytes of one stream saved to the output store.
func WithMaxSpill(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxSpill = n
		}
	}
}

// WithMaxSessions sets how many persistent shells one agent session may
// have open at once.
func WithMaxSessions(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxSessions = n
		}
	}
}

// WithIdleTimeout sets how long a persistent shell may go without a call
// before it is closed, whatever it is running.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.idle = d
		}
	}
}

// WithWait sets the default wait of shell_send, the default wait of
// shell_read and bash_output, and the largest wait_ms a call may ask
// for. Zero keeps a default.
func WithWait(send, read, max time.Duration) Option {
	return func(c *config) {
		if send > 0 {
			c.sendWait = send
		}
		if read > 0 {
			c.readWait = read
		}
		if max > 0 {
			c.maxWait = max
		}
	}
}

// WithMaxJobs sets how many background jobs one agent session keeps.
func WithMaxJobs(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxJobs = n
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
