package agent

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
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
	limits      CallLimits

	turnObservers   []TurnObserver
	modelMiddleware []model.Middleware
	prices          *pricing.Table

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
	// defaultMaxSteps is the step limit of a turn unless WithMaxSteps
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

// WithSessionStore sets where session logs are kept. The default is an
// in-memory store, which loses sessions when the program exits; use
// session.NewJSONL for logs that can be resumed later.
func WithSessionStore(s session.Store) Option { return func(c *config) { c.store = s } }

// WithFileSystem sets the file system tools work in.
func WithFileSystem(f fs.FileSystem) Option { return func(c *config) { c.fsys = f } }

// WithLogger sets the logger for diagnostics. The default, also for nil,
// discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMaxSteps sets how many model calls one turn may make (default 200:
// generous, so it only stops runaway turns). When a turn reaches it, it
// ends with reason step_limit. It must be positive.
func WithMaxSteps(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.fail("WithMaxSteps(%d): a turn needs at least 1 step", n)
			return
		}
		c.maxSteps = n
	}
}

// WithRetry sets the retry policy for model calls (default: 4 retries,
// starting at 1 s, each delay capped at 60 s). A negative field is an
// error of New.
func WithRetry(p RetryPolicy) Option { return func(c *config) { c.retry = p } }

// WithMiddleware adds dispatch middleware; the first added is the
// outermost.
func WithMiddleware(mws ...tools.Middleware) Option {
	return func(c *config) { c.middleware = append(c.middleware, mws...) }
}

// WithStepObservers adds observers that see each step's calls and results
// and may add reminders.
func WithStepObservers(obs ...tools.StepObserver) Option {
	return func(c *config) { c.observers = append(c.observers, obs...) }
}

// WithOutputStore sets the store tools save large outputs to (spill).
func WithOutputStore(s tools.OutputStore) Option { return func(c *config) { c.output = s } }

// WithAttachments sets the store images are kept in.
func WithAttachments(s tools.AttachmentStore) Option { return func(c *config) { c.attachments = s } }

// RetryPolicy bounds how a failed model call is retried. Only failures
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
		return optionError("WithRetry(%+v): the retries and delays must not be negative", p)
	}
	return nil
}

// defaultRetryPolicy retries 4 times, starting at 1 s, capped at 60 s.
func defaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 4, BaseDelay: time.Second, MaxDelay: time.Minute}
}
