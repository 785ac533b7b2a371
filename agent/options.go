package agent

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// Option configures a Loop.
type Option func(*config)

type config struct {
	model       model.Model
	tools       []tools.Tool
	sources     []tools.Source
	system      string
	store       session.Store
	fsys        fs.FileSystem
	logger      *slog.Logger
	maxSteps    int
	retry       RetryPolicy
	middleware  []tools.Middleware
	observers   []tools.StepObserver
	output      tools.OutputStore
	attachments tools.AttachmentStore
	context     ContextPolicy
	limits      Limits

	turnObservers   []TurnObserver
	modelMiddleware []model.Middleware
	prices          *pricing.Table

	checkpoints *checkpoint.Config // WithCheckpoints; nil when off

	policy   *permission.Policy
	approver permission.Approver
	sub      *SubAgents // the task tool's agent types; nil without
	depth    int        // 0 for a top loop, 1 for a child's
	errs     []error    // invalid option values, reported by New
}

// fail records an invalid option value for New to report: a
// *harness.Error with harness.CodeInvalidOption whose message names the
// option and the value.
func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, optionError(format, args...))
}

func optionError(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "agent: " + fmt.Sprintf(format, args...)}
}

// Defaults.
const (
	// defaultMaxSteps is the step limit of a turn unless Limits.MaxSteps
	// says otherwise: generous, so it only stops runaway turns.
	defaultMaxSteps = 200
	// defaultMaxParallelTools bounds how many concurrency-safe calls of
	// one step run at once.
	defaultMaxParallelTools = 8
)

func defaultConfig() config {
	return config{
		store:    session.NewMemory(),
		logger:   logs.OrDiscard(nil),
		maxSteps: defaultMaxSteps,
		retry:    defaultRetryPolicy(),
	}
}

// WithModel sets the model. It is required.
func WithModel(m model.Model) Option { return func(c *config) { c.model = m } }

// WithTools adds tools. Their schemas are sent to the model in the order
// given.
func WithTools(ts ...tools.Tool) Option {
	return func(c *config) { c.tools = append(c.tools, ts...) }
}

// WithToolSource adds tools whose set can change while the loop runs (the
// tools of MCP servers, say): they follow the WithTools tools, and before
// every step the loop takes the sources' current tools, never within a
// step. A changed set whose tools do not pass the registry's checks is
// logged and the previous set is kept.
func WithToolSource(srcs ...tools.Source) Option {
	return func(c *config) { c.sources = append(c.sources, srcs...) }
}

// WithSystemPrompt sets the system prompt.
func WithSystemPrompt(s string) Option { return func(c *config) { c.system = s } }

// Stores are where a loop keeps what its sessions make, for [WithStores].
// A nil field keeps its default.
type Stores struct {
	// Sessions is where session logs are kept. The default is an
	// in-memory store, which loses sessions when the program exits; use
	// session.NewJSONL for logs that can be resumed later.
	Sessions session.Store
	// Files is the file system tools work in (Env.FS); none by default.
	Files fs.FileSystem
	// Output is the store tools save large outputs to (spill; Env.Output);
	// none by default.
	Output tools.OutputStore
	// Attachments is the store images are kept in (Env.Attachments); none
	// by default.
	Attachments tools.AttachmentStore
}

// WithStores sets the loop's stores: each non-nil field of s replaces the
// default, or what an earlier WithStores set.
func WithStores(s Stores) Option {
	return func(c *config) {
		if s.Sessions != nil {
			c.store = s.Sessions
		}
		if s.Files != nil {
			c.fsys = s.Files
		}
		if s.Output != nil {
			c.output = s.Output
		}
		if s.Attachments != nil {
			c.attachments = s.Attachments
		}
	}
}

// Hooks extend the loop without touching it, for [WithHooks]: each list
// wraps or observes in order, the first the outermost.
type Hooks struct {
	// Tools is dispatch middleware: it wraps every tool call (spill,
	// deadlines, tracing); the first is the outermost.
	Tools []tools.Middleware
	// Steps see each step's calls and results in call order and may add
	// advisory reminders after the step's results (the guard package's
	// repeat and failure guards).
	Steps []tools.StepObserver
	// Model wraps every model call (the summaries of compaction
	// included), the first the outermost: each sees the request before it
	// is sent and the answer as it comes, to redact, audit, inject
	// context or trace (see model.Middleware). The wrapping is applied to
	// the session's model at the start of each turn, so Session.SetModel
	// keeps it.
	Model []model.Middleware
	// Turns see every turn of the loop's sessions begin and each of its
	// events (see TurnObserver); the first begins first, so its context
	// is the parent of the next one's.
	Turns []TurnObserver
}

// WithHooks adds the hooks of h after those an earlier WithHooks added.
func WithHooks(h Hooks) Option {
	return func(c *config) {
		c.middleware = append(c.middleware, h.Tools...)
		c.observers = append(c.observers, h.Steps...)
		c.modelMiddleware = append(c.modelMiddleware, h.Model...)
		for _, o := range h.Turns {
			if o != nil {
				c.turnObservers = append(c.turnObservers, o)
			}
		}
	}
}

// WithLogger sets the logger for diagnostics. The default, also for nil,
// discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// RetryPolicy bounds how a failed model call is retried (Limits.Retry). Only failures
// whose code (harness.CodeOf) is CodeRateLimit, CodeServer,
// CodeTransport, CodeEmptyResponse or CodeTruncatedStream are retried.
type RetryPolicy struct {
	// MaxRetries is how many times one model call is retried; 0 means
	// never.
	MaxRetries int
	// BaseDelay is the delay before the first retry; each further retry
	// doubles it, with jitter.
	BaseDelay time.Duration
	// MaxDelay caps one delay, a provider's Retry-After hint included.
	MaxDelay time.Duration
}

func (p RetryPolicy) validate() error {
	if p.MaxRetries < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
		return optionError("WithLimits: Limits.Retry is %+v; the retries and delays must not be negative", p)
	}
	return nil
}

// defaultRetryPolicy retries 4 times, starting at 1 s, capped at 60 s.
func defaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 4, BaseDelay: time.Second, MaxDelay: time.Minute}
}
