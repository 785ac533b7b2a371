package agent

import (
	"context"
	"log/slog"

	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// A TurnObserver sees every turn of a loop's sessions (Hooks.Turns). It
// is called when a turn starts, with the turn's context so far, and
// returns the context the turn runs in (nil keeps ctx): the model calls,
// the tool calls and their middleware see its values, so a tracer can
// carry the turn's span in it (package observe does). The function it
// returns, when not nil, then sees each of the turn's events in order,
// the TurnEnd last, even when the host stopped iterating; what it needs
// of the turn (a span, say) it keeps from the call that made it, as a
// closure. Both are called on the turn's goroutine and must return
// promptly; a panic in either is logged and ignored.
type TurnObserver func(ctx context.Context, info TurnInfo) (context.Context, func(Event))

// TurnInfo describes a turn as it starts.
type TurnInfo struct {
	// SessionID is the id of the turn's session.
	SessionID string
	// Turn numbers the session's turns from 1.
	Turn int
	// Model is the name of the model the turn calls.
	Model string
}

// WithPrices sets the price table the loop costs model calls by: the
// ModelUsage and TurnEnd events carry the cost in the table's currency,
// and Session.Cost sums it over the session's logged calls (a resumed
// session included). A call to a model the table does not price costs
// 0. Without it, costs are 0.
func WithPrices(t *pricing.Table) Option { return func(c *config) { c.prices = t } }

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
	askUser  bool       // the ask_user tool (WithAskUser)
	answerer Answerer   // answers it in-process; nil pauses
	todo     bool       // the todo tool (WithTodo)
	sub      *SubAgents // the task tool's agent types; nil without
	deferred *deferral  // WithDeferredTools; nil without
	depth    int        // 0 for a top loop, 1 for a child's
	errs     []error    // invalid option values, reported by New

	contextSources []ContextSource // WithContext
	lifecycle      []Lifecycle     // WithLifecycle
	jobs           jobsConfig      // WithJobs, ReplayJobNotices

	external map[string]bool // WithExternalTools: the tools the host runs
}

// fail records an invalid option value for New to report: a
// *harness.Error with harness.CodeInvalidOption whose message names the
// option and the value.
func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, optionError(format, args...))
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
		store:    session.NewMemory(session.StoreConfig{}),
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

// WithPermissions decides every tool call before it runs by p: allowed
// calls run, denied ones get a result saying what was denied and why,
// and calls that need an answer go to the approver (WithApprover) or,
// without one, pause the turn (see Session.Resolve). Every decision is
// logged. Without this option every call runs.
func WithPermissions(p *permission.Policy) Option { return func(c *config) { c.policy = p } }

// WithApprover sets the synchronous approver asked about calls the
// policy wants an answer for. Without one, such calls pause the turn.
func WithApprover(a permission.Approver) Option { return func(c *config) { c.approver = a } }
