package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// Session is one conversation: its log, its history and the state its
// tools keep. Turns run one at a time.
type Session struct {
	loop     *Loop
	log      session.Log
	state    *tools.State
	logger   *slog.Logger
	warnings []session.Warning

	// logMu keeps the history in log order.
	logMu sync.Mutex
	hist  *session.History
	// usage and cost are what the logged model calls used and cost (by
	// the loop's prices): the session's own, its compactions' and its
	// sub-agents'.
	usage harness.Usage
	cost  float64

	// context is what the context policy keeps between requests; the
	// running turn alone uses it.
	context contextState

	mu      sync.Mutex
	model   model.Model
	running bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{}
	// closeLog asks the running turn to close the log when it ends:
	// Close gave up waiting for it.
	closeLog bool

	// pol is the session's permission policy (the loop's, with the
	// rules its answers remembered); paused is the pause the last turn
	// ended in, if any. Both are guarded by mu.
	pol    *permission.Policy
	paused *pause
	// interrupted is the last turn, when a crash cut it off (see
	// Continue); guarded by mu.
	interrupted *interruption
	// raised are the budgets answers raised above the loop's; guarded
	// by mu.
	raised Budgets
	// accepting says the running turn still takes steered messages;
	// steers are those it has not read yet, queue the messages waiting
	// as turns. All are guarded by mu.
	accepting bool
	steers    []string
	queue     []string
	// todo is the model's current plan (the todo tool); guarded by mu.
	todo []harness.TodoItem
	// narrow is what tools narrowed the running turn to (narrow.go);
	// life is the Lifecycle calls' state (lifecycle.go), used by the
	// running turn only; approveMu serializes approvals asked from
	// running calls (Recheck).
	narrow    narrowState
	life      lifeState
	approveMu sync.Mutex

	// abandoned holds the tool calls the dispatcher stopped waiting for
	// that are still running.
	abMu      sync.Mutex
	abandoned map[*runningCall]struct{}

	// bg is what the session keeps of its background sub-agents
	// (subagent_bg.go).
	bg bgState
}

// Header returns the session's log header: its id (Header().ID), working
// directory, parent and creation time.
func (s *Session) Header() session.Header { return s.log.Header() }

// Warnings returns what was skipped or repaired when the session was
// loaded for resuming.
func (s *Session) Warnings() []session.Warning { return s.warnings }

// Messages returns the conversation so far, as the model is sent it.
func (s *Session) Messages() []harness.Message {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.hist.Messages()
}

// Usage returns the token usage of the session's logged model calls:
// its own steps', its compactions' summarizing calls and its sub-agents'
// (the calls Cost prices). It is derived from the log when resumed and
// summed as turns run, so it equals the sum of its turns' TurnEnd.Usage,
// and of what background sub-agents spent between turns.
func (s *Session) Usage() harness.Usage {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.usage
}

// Cost returns what the session's logged model calls cost by the loop's
// price table (WithPrices), in its currency: derived from the log when
// resumed, and summed as turns run. Compactions' summarizing calls and
// the calls of the session's sub-agents count (the log records both).
func (s *Session) Cost() float64 {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.cost
}

// Model returns the model the session calls.
func (s *Session) Model() model.Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetModel switches the model for the following turns. It fails with
// an error matching harness.CodeBusy while a turn runs.
func (s *Session) SetModel(m model.Model) error {
	if m == nil {
		return errors.New("agent: SetModel: nil model")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return errBusy()
	}
	s.model = m
	return nil
}

// Run runs one turn on the user's prompt and yields its events as they
// happen. See RunContent.
func (s *Session) Run(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	return s.RunContent(ctx, []harness.Block{harness.TextBlock(prompt)})
}

// RunContent runs one turn on user content (text, and images already in
// the attachment store) and yields its events as they happen.
//
// The turn calls the model, runs the tools it asks for, and repeats while the
// model asks for tools, up to the step limit. Events are yielded with a nil
// error, except the last, which is always a *TurnEnd: it comes with the error
// that ended the turn, if any (context.Canceled when ctx was cancelled, a
// *harness.Error with a model code when the model failed for good, an
// *harness.Error when the harness recovered from a panic). Stopping the
// iteration early cancels the turn; the cancellation is logged and the session
// stays usable. No panic of the harness, the model adapter, the tools or the
// session store reaches the loop over the events; a panic in the loop's own
// body is passed on unchanged.
func (s *Session) RunContent(ctx context.Context, content []harness.Block) iter.Seq2[Event, error] {
	return s.runTurn(ctx, func(t *turn) { t.run(content) })
}

// RunOutput runs one turn like Run, asking for a final answer that is one
// JSON value valid against out.Schema: the request carries out (sent as a
// "json_schema" response format where the endpoint takes one, as
// "json_object" elsewhere), and the final answer is validated here
// whatever the endpoint enforced. An answer that does not validate gets
// one repair round trip: a logged reminder, yielded as ReminderAdded,
// tells the model what failed and the turn goes on. A second invalid
// answer ends the turn with reason error and an *harness.Error with code
// CodeInvalidOutput. On success TurnEnd.Output holds the value; the
// answer's text stays in the log as the assistant message it was. A turn
// that pauses for approval logs the schema with its question: resolving
// it (Session.Resolve, after ResumeSession too) goes on asking for the
// same answer, and the TurnEnd the resolution yields holds it.
func (s *Session) RunOutput(ctx context.Context, prompt string, out model.Output) iter.Seq2[Event, error] {
	spec, err := newOutputSpec(out)
	if err != nil {
		return func(yield func(Event, error) bool) {
			yield(&TurnEnd{Reason: session.ReasonError, Err: err}, err)
		}
	}
	content := []harness.Block{harness.TextBlock(prompt)}
	return s.runTurn(ctx, func(t *turn) {
		t.output = spec
		t.run(content)
	})
}

// RunTyped runs one turn on prompt asking for a final answer of type T
// (its JSON Schema inferred from T as tool arguments are), waits for the
// end, and returns the decoded answer with the TurnEnd. The error is the
// turn's (an *harness.Error with CodeInvalidOutput when the answer did
// not validate after one repair), or the schema inference's. When the
// turn pauses for approval the error matches CodeInvalidOutput and says
// so; the TurnEnd of Session.Resolve then holds the answer in Output.
func RunTyped[T any](ctx context.Context, s *Session, prompt string) (T, *TurnEnd, error) {
	var zero T
	out, err := outputFor[T]()
	if err != nil {
		return zero, nil, err
	}
	var end *TurnEnd
	var endErr error
	for ev, err := range s.RunOutput(ctx, prompt, out) {
		if te, ok := ev.(*TurnEnd); ok {
			end, endErr = te, err
		}
	}
	if endErr != nil {
		return zero, end, endErr
	}
	v, err := outputAs[T](end)
	return v, end, err
}

// runTurn runs body as the session's one running turn, a panic in it
// ending the turn (see turn.safely).
func (s *Session) runTurn(ctx context.Context, body func(t *turn)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			err := errClosed()
			yield(&TurnEnd{Reason: session.ReasonError, Err: err}, err)
			return
		case s.running:
			s.mu.Unlock()
			err := errBusy()
			yield(&TurnEnd{Reason: session.ReasonError, Err: err}, err)
			return
		}
		s.running = true
		s.accepting = true
		s.done = make(chan struct{})
		models := turnModels(s.model, s.loop.cfg.modelMiddleware)
		m := models[0]
		began, observers := s.beginTurn(context.WithValue(ctx, sessionKey{}, s), m)
		turnCtx, cancel := context.WithCancel(began)
		defer cancel()
		s.cancel = cancel
		s.mu.Unlock()
		defer s.turnEnded()
		t := &turn{s: s, l: s.loop, model: m, chain: models, ctx: turnCtx, cancel: cancel, yield: yield, observers: observers, sub: &subTurn{relay: make(chan Event)}}
		s.bgAttach(t)
		defer s.bgDetach(t)
		t.safely(func() {
			t.checkpoint(session.CheckpointTurnStart)
			body(t)
		})
	}
}

// turnModels returns the models a turn calls: m wrapped in mws, or, when
// m is a fallback chain (model.Chain), each of its models wrapped in
// mws, the primary first. A chain of no models is m itself.
func turnModels(m model.Model, mws []model.Middleware) []model.Model {
	if c, ok := m.(model.Chain); ok {
		if ms := c.Models(); len(ms) > 0 {
			for i := range ms {
				ms[i] = chainModel(ms[i], mws)
			}
			return ms
		}
	}
	return []model.Model{chainModel(m, mws)}
}

// chainModel wraps m in mws, mws[0] the outermost: it sees the request
// first and the answer last. Nil middlewares are skipped.
func chainModel(m model.Model, mws []model.Middleware) model.Model {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			m = mws[i](m)
		}
	}
	return m
}

// beginTurn lets the observers begin the turn and returns its context and
// the observers of its events.
func (s *Session) beginTurn(ctx context.Context, m model.Model) (context.Context, []func(Event)) {
	obs := s.loop.cfg.turnObservers
	if len(obs) == 0 {
		return ctx, nil
	}
	info := TurnInfo{SessionID: s.Header().ID, Turn: s.turns() + 1, Model: m.Info().Name}
	var sinks []func(Event)
	for _, o := range obs {
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.logger.Error("turn observer panicked as the turn began", "panic", fmt.Sprint(p))
				}
			}()
			c, sink := o(ctx, info)
			if c != nil {
				ctx = c
			}
			if sink != nil {
				sinks = append(sinks, sink)
			}
		}()
	}
	return ctx, sinks
}

// turnEnded marks the session idle, and closes the log when Close gave up
// waiting for the turn.
func (s *Session) turnEnded() {
	s.mu.Lock()
	s.running = false
	s.accepting = false
	if len(s.steers) > 0 { // a turn that ended without finish
		s.queue = append(s.steers, s.queue...)
		s.steers = nil
	}
	s.cancel = nil
	close(s.done)
	closeLog := s.closeLog
	s.mu.Unlock()
	if closeLog {
		if err := s.guarded("close", s.log.Close); err != nil {
			s.logger.Error("closing the session log after the turn ended failed", "error", err)
		}
		return
	}
	s.idle()
}

// idle tells a log that can let go of its file while the session waits
// (session.Releaser, with session.StoreConfig.ReleaseIdle) that it may.
func (s *Session) idle() {
	r, ok := s.log.(session.Releaser)
	if !ok {
		return
	}
	if err := s.guarded("release", r.Release); err != nil {
		s.logger.Warn("letting go of the idle session's log failed", "error", err)
	}
}

// Close cancels a running turn and waits for it to end, releases the
// state of the session's tools, and closes its log. It returns within
// about Limits.CloseWait whatever the tools do: a turn whose tools
// ignore cancellation abandons them (see Limits), and Close then
// fails with an error matching harness.CodeNotStopped that names those
// still running; a turn that
// does not end in time at all makes it fail with an error matching
// harness.CodeNotStopped. Do not
// call it from inside the loop over a turn's events: it would wait the
// whole close wait for a turn that cannot end.
func (s *Session) Close() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = internalError(s.logger, "close", p)
		}
	}()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	defer s.loop.forget(s)
	var errs []error
	stuck := false
	if cancel != nil {
		cancel()
		wait := time.NewTimer(s.loop.cfg.limits.withDefaults().CloseWait)
		select {
		case <-done:
		case <-wait.C:
			stuck = true
		}
		wait.Stop()
	}
	if calls := s.abandonedCalls(); len(calls) > 0 {
		errs = append(errs, errAbandoned(calls))
	}
	if stuck {
		s.mu.Lock()
		select {
		case <-done: // it ended just now
			stuck = false
		default:
			s.closeLog = true
		}
		s.mu.Unlock()
	}
	s.endHooks()
	errs = append(errs, s.guarded("close", s.state.Close))
	if stuck {
		s.logger.Error("the running turn did not stop within the close wait; its log is closed when it ends")
		errs = append(errs, errTurnDidNotStop())
	} else {
		errs = append(errs, s.guarded("close", s.log.Close))
	}
	return errors.Join(errs...)
}

// guarded runs f, returning a panic as an *harness.Error.
func (s *Session) guarded(op string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = internalError(s.logger, op, p)
		}
	}()
	return f()
}

// append logs payloads and applies them to the history, in one order.
// Logging never stops for a cancelled ctx: a cancelled turn still records
// how it ended.
func (s *Session) append(ctx context.Context, payloads ...session.Payload) error {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	events, err := s.log.Append(context.WithoutCancel(ctx), payloads...)
	if err != nil {
		return err
	}
	for _, e := range events {
		s.hist.Add(e)
	}
	return nil
}

// appendLater logs payloads as append does, except that a log that can
// (a session.Deferrer) writes them with the next record instead of now:
// for records whose loss in a crash the log's promises allow (see
// "Durability" in the package documentation).
func (s *Session) appendLater(ctx context.Context, payloads ...session.Payload) error {
	d, ok := s.log.(session.Deferrer)
	if !ok {
		return s.append(ctx, payloads...)
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	events, err := d.Defer(context.WithoutCancel(ctx), payloads...)
	if err != nil {
		return err
	}
	for _, e := range events {
		s.hist.Add(e)
	}
	return nil
}

func (s *Session) record(ctx context.Context, call *tools.Call, name string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	rec := &session.ToolRecord{Tool: call.Name, CallID: call.ID, Name: name, Data: raw}
	return s.append(ctx, rec)
}

// env builds the tool environment for one step.
func (s *Session) env(model model.Model) *tools.Env {
	cfg := &s.loop.cfg
	return &tools.Env{
		SessionID:   s.Header().ID,
		Cwd:         s.log.Header().Cwd,
		FS:          s.files(),
		ModelInput:  model.Info().Input,
		Turn:        s.turns(),
		State:       s.state,
		Output:      cfg.output,
		Attachments: cfg.attachments,
		Logger:      s.logger,
		Record:      s.recordTool,
	}
}

type filesKey struct{}

// files returns the file system the session's tools work in: the loop's,
// restricted (fs.Restrict) by the path policy of its permission rules,
// anchored at the session's working directory, when the loop has both.
// So every tool, and every host tool that uses Env.FS, obeys the Read and
// Edit rules wherever it touches files.
func (s *Session) files() fs.FileSystem {
	cfg := &s.loop.cfg
	if cfg.fsys == nil || cfg.policy == nil {
		return cfg.fsys
	}
	restrict := func() fs.FileSystem {
		cwd := s.log.Header().Cwd
		if cwd == "" {
			cwd = fsimpl.RootOf(cfg.fsys)
		}
		paths := cfg.policy.Paths(cwd)
		if paths.Empty() {
			return cfg.fsys
		}
		return fs.Restrict(cfg.fsys, paths)
	}
	fsys, err := tools.LoadState(s.state, filesKey{}, restrict)
	if err != nil {
		return restrict() // the session is closing: still restricted
	}
	return fsys
}

func (s *Session) turns() int {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.hist.Turns()
}

// spend adds the usage and the cost of model calls to the session's.
func (s *Session) spend(u harness.Usage, c float64) {
	s.logMu.Lock()
	s.usage.Add(u)
	s.cost += c
	s.logMu.Unlock()
}

// superseded returns the tool results pruning may replace.
func (s *Session) superseded() []session.PrunedCall {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.hist.Superseded()
}

// policy returns the session's policy: the loop's, with the rules the
// session's answers remembered.
func (s *Session) policy() *permission.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pol == nil {
		s.pol = s.loop.cfg.policy
	}
	return s.pol
}

// remember adds a remembered rule to the session's policy.
func (s *Session) remember(rule string) error {
	p := s.policy()
	q, err := p.WithAllow(rule)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.pol = q
	s.mu.Unlock()
	return nil
}

func (s *Session) rememberAbandoned(r *runningCall) {
	s.abMu.Lock()
	defer s.abMu.Unlock()
	if s.abandoned == nil {
		s.abandoned = map[*runningCall]struct{}{}
	}
	s.abandoned[r] = struct{}{}
}

func (s *Session) forgetAbandoned(r *runningCall) {
	s.abMu.Lock()
	defer s.abMu.Unlock()
	delete(s.abandoned, r)
}

// abandonedCalls returns the tool calls the loop abandoned that are still
// running, oldest first; Close reports them (errAbandoned).
func (s *Session) abandonedCalls() []abandonedCall {
	s.abMu.Lock()
	out := make([]abandonedCall, 0, len(s.abandoned))
	for r := range s.abandoned {
		out = append(out, abandonedCall{Tool: r.tool, CallID: r.id, Step: r.step, Since: r.since})
	}
	s.abMu.Unlock()
	slices.SortFunc(out, func(a, b abandonedCall) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.CallID, b.CallID)
	})
	return out
}
