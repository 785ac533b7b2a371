package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// turn is the state of one running turn.
//
// A turn logs the user's message (run) and takes steps (loop): each step
// calls the model (callModel, after the context policy made room: see
// relieve) and dispatches the calls of its answer (dispatch.go), until
// the model answers without calls, the step limit is reached, the turn is
// cancelled, or a call waits for approval (pause.go). finish logs the end
// and yields the TurnEnd. Every event goes to the host through emit.
type turn struct {
	s *Session
	l *Loop
	// model is the model the turn calls: chain[cur], the first until a
	// failure makes the turn fall back to the next (see fallBack).
	model  model.Model
	chain  []model.Model
	cur    int
	ctx    context.Context
	cancel context.CancelFunc
	yield  func(Event, error) bool
	// observers see each event of the turn (TurnObserver).
	observers []func(Event)

	stopped bool // the host stopped iterating
	inHost  bool // the host's loop body is running (or panicked)
	ended   bool // finish has started: the end is being logged
	endSent bool // TurnEnd was yielded
	steps   int
	usage   harness.Usage
	cost    float64
	// base is what the turn spent before the pause it continues, for its
	// budget.
	base spend
	// preset holds the decisions of a paused step being resolved.
	preset map[string]*session.PermissionDecided
	// tools are the step's tools: taken when it starts, fixed until it
	// ends.
	tools *toolset
	// output is the structured answer the turn asks for, if any.
	output *outputSpec
	// sub is what the turn's sub-agents spent, and their events' way to
	// the host.
	sub *subTurn
}

// run starts a turn on the user's content: it logs the content (and the
// system prompt, when it changed) and takes the turn's steps.
func (t *turn) run(content []harness.Block) {
	t.s.mu.Lock()
	t.s.interrupted = nil // a new turn: the interrupted one stays as it is
	t.s.mu.Unlock()
	t.s.logMu.Lock()
	logged := t.s.hist.SystemPrompt()
	t.s.logMu.Unlock()
	var first []session.Payload
	if sys := t.l.cfg.system; sys != logged {
		first = append(first, &session.SystemPrompt{Text: sys})
	}
	first = append(first, t.projectContext()...)
	first = append(first, &session.UserMessage{Content: content})
	if first = t.promptHooks(first, content); first == nil {
		return // a hook refused the prompt; the turn has ended
	}
	if pol := t.s.policy(); pol != nil && pol.Mode() == permission.ModePlan {
		first = append(first, &session.Reminded{Reminder: harness.Reminder{Source: "plan_mode", Text: planReminder}})
	}
	if err := t.abandonPause(); err != nil {
		t.finish(session.ReasonError, fmt.Errorf("agent: logging the abandoned calls: %w", err))
		return
	}
	if err := t.s.append(t.ctx, first...); err != nil {
		t.finish(session.ReasonError, fmt.Errorf("agent: logging the user message: %w", err))
		return
	}
	t.jobNotices(0)
	t.loop()
}

// planReminder tells the model it is planning.
const planReminder = "Plan mode is on: this session is read-only. Calls that change files, run commands or have other side effects are denied. " +
	"Read and search what you need, then present your plan to the user and wait for approval before making changes."

// loop runs steps until the turn ends.
func (t *turn) loop() {
	for {
		if err := t.ctx.Err(); err != nil {
			t.finish(session.ReasonCancelled, err)
			return
		}
		if t.steps >= t.l.cfg.maxSteps {
			t.finish(session.ReasonStepLimit, nil)
			return
		}
		if _, err := t.takeSteers(t.steps+1, false); err != nil {
			t.finish(session.ReasonError, err)
			return
		}
		if t.checkBudget() || t.awaitJobs() {
			return
		}
		t.steps++
		step := t.steps
		t.tools = t.l.currentTools()
		msg, finish, err := t.callModel(step)
		if err != nil {
			if t.ctx.Err() != nil {
				t.finish(session.ReasonCancelled, t.ctx.Err())
			} else {
				t.finish(session.ReasonError, err)
			}
			return
		}
		calls := msg.ToolCalls()
		if len(calls) == 0 {
			t.emit(&StepEnd{Step: step, Finish: finish})
			if t.output != nil {
				repair, err := t.output.check(msg.Text())
				if err != nil {
					t.finish(session.ReasonError, err)
					return
				}
				if repair != nil {
					// One more step, to repair the structured answer.
					if err := t.s.append(t.ctx, &session.Reminded{Reminder: *repair}); err != nil {
						t.finish(session.ReasonError, fmt.Errorf("agent: logging the repair request: %w", err))
						return
					}
					t.emit(&ReminderAdded{Step: step, Reminder: *repair})
					continue
				}
			}
			if t.stopHooks(step, msg) {
				continue // a stop hook keeps the turn going
			}
			// A message steered in while the model answered: one more step.
			more, err := t.takeSteers(step+1, true)
			if err != nil {
				t.finish(session.ReasonError, err)
				return
			}
			if more {
				continue
			}
			if t.awaitJobs() {
				return // background sub-agents wait for answers
			}
			t.finish(session.ReasonCompleted, nil)
			return
		}
		if err := t.dispatch(step, calls); err != nil {
			switch {
			case errors.Is(err, errPaused):
				t.emit(&StepEnd{Step: step, Finish: finish})
				t.finish(t.pauseReason(), nil)
			case t.ctx.Err() != nil:
				t.finish(session.ReasonCancelled, t.ctx.Err())
			default:
				t.finish(session.ReasonError, err)
			}
			return
		}
		t.emit(&StepEnd{Step: step, Finish: finish, ToolCalls: len(calls)})
	}
}

// finish logs the end of the turn, syncs the log, and yields TurnEnd.
func (t *turn) finish(reason string, err error) {
	t.ended = true
	queued := t.stopSteering()
	t.checkpoint(session.CheckpointTurnEnd)
	childUsage, childCost := t.sub.spent()
	t.usage.Add(childUsage)
	// The children's model calls were priced in their own sessions; they
	// count in the parent's turn and session as well.
	t.cost += childCost
	t.s.spend(childUsage, childCost)
	// Background children's calls while the turn ran are the session's
	// already.
	bgUsage, bgCost := t.sub.backgroundSpent()
	t.usage.Add(bgUsage)
	t.cost += bgCost
	te := &session.TurnEnded{Reason: reason, Steps: t.steps, Usage: t.usage}
	if err != nil {
		te.Error = &session.ErrorInfo{Code: harness.Code(harness.CodeOf(err)), Message: err.Error()}
	}
	if lerr := t.s.append(t.ctx, te); lerr != nil {
		t.s.logger.Error("logging the end of a turn failed", "error", lerr)
		err = errors.Join(err, lerr)
		reason = session.ReasonError
	} else if serr := t.s.log.Sync(); serr != nil {
		t.s.logger.Error("syncing the session log failed", "error", serr)
		err = errors.Join(err, serr)
		reason = session.ReasonError
	}
	t.s.logger.Debug("turn ended", "reason", reason, "steps", t.steps, "error", err)
	end := &TurnEnd{Reason: reason, Steps: t.steps, Usage: t.usage, Cost: t.cost, Err: err, Queued: queued}
	if t.output != nil && reason == session.ReasonCompleted {
		end.Output = t.output.value
	}
	t.end(end)
}

// end hands the TurnEnd to the observers and, unless the host stopped
// iterating, to the host.
func (t *turn) end(te *TurnEnd) {
	for _, ev := range t.s.bgDetach(t) {
		t.emit(ev) // background children's events that came last
	}
	t.notify(te)
	if !t.stopped {
		t.endSent = true
		t.send(te, te.Err)
	}
}

// emit yields an event; when the host stops iterating, the turn is
// cancelled and nothing more is yielded.
func (t *turn) emit(ev Event) {
	if t.endSent {
		return
	}
	t.notify(ev)
	if t.stopped {
		return
	}
	if !t.send(ev, nil) {
		t.stopped = true
		t.cancel()
	}
}

// send hands one event to the host's loop body. inHost stays set when
// the body panics, so that the turn passes the panic on instead of
// recovering it.
func (t *turn) send(ev Event, err error) bool {
	t.inHost = true
	ok := t.yield(ev, err)
	t.inHost = false
	return ok
}

// notify hands ev to the turn's event observers.
func (t *turn) notify(ev Event) {
	for _, sink := range t.observers {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.s.logger.Error("turn observer panicked", "event", kindOf(ev), "panic", fmt.Sprint(p))
				}
			}()
			sink(ev)
		}()
	}
}

// stepTools returns the step's tools, or the loop's current ones before
// the first step.
func (t *turn) stepTools() *toolset {
	if t.tools == nil {
		t.tools = t.l.currentTools()
	}
	return t.tools
}

// request builds the request for the next model call from the history.
func (t *turn) request() *model.Request {
	// The history's own messages when no call waits for a result: a
	// snapshot the history never changes, not a copy per step.
	t.s.logMu.Lock()
	msgs := t.s.hist.View()
	t.s.logMu.Unlock()
	req := &model.Request{
		System:   t.systemPrompt(),
		Messages: msgs,
		Tools:    t.s.requestTools(t.stepTools()),
		Images:   t.l.cfg.attachments,
	}
	if t.output != nil {
		out := t.output.out
		req.Output = &out
	}
	// The images the model can take, and no more than the budget.
	cache, err := tools.LoadState(t.s.state, imageCacheKey{}, func() *imageCache { return &imageCache{} })
	if err != nil {
		cache = nil
	}
	policy := t.l.cfg.context
	req.Messages = projectImages(req.Messages, slices.Contains(t.model.Info().Input, harness.ModalityImage),
		req.Images != nil, imageBudget{Count: policy.MaxImages, Bytes: policy.MaxImageBytes}, cache)
	return req
}

// callModel makes one model call, retrying retryable failures, and logs
// the answer.
func (t *turn) callModel(step int) (harness.Message, string, error) {
	policy := t.l.cfg.retry
	relieve, forced, overflowRetried := true, false, false
	for attempt := 0; ; {
		info := t.model.Info()
		req := t.request()
		if relieve {
			req = t.relieve(step, req, forced)
			relieve, forced = false, false
		}
		reqBytes := t.s.context.requestBytes(req)
		// The request's record goes to disk with the answer's, or with
		// whatever the call's failure logs.
		if err := t.s.appendLater(t.ctx, &session.ModelRequest{Step: step, Model: info.Name, Fingerprint: t.s.context.chain.fingerprint(req)}); err != nil {
			return harness.Message{}, "", fmt.Errorf("agent: logging the model request: %w", err)
		}
		asm, err := t.stream(step, req)
		if err == nil {
			err = asm.Err()
		}
		if err != nil {
			if t.ctx.Err() != nil {
				// The log shows what the user saw.
				if am := partialAnswer(step, info.Name, asm); am != nil {
					if err := t.s.append(t.ctx, am); err != nil {
						t.s.logger.Error("logging a cancelled answer failed", "error", err)
					}
				}
				return harness.Message{}, "", t.ctx.Err()
			}
			code := harness.CodeOf(err)
			if code == harness.CodeContextWindowExceeded && !overflowRetried && !t.l.cfg.context.off() {
				// Make room and try once more.
				overflowRetried, relieve, forced = true, true, true
				t.s.logger.Warn("the request exceeded the context window; pruning and compacting, then retrying once", "step", step)
				if lerr := t.s.append(t.ctx, &session.ModelRetry{Step: step, Attempt: attempt + 1, Code: code, Message: failureText(err)}); lerr != nil {
					return harness.Message{}, "", errors.Join(err, lerr)
				}
				t.emit(&Retry{Step: step, Attempt: attempt + 1, Err: err})
				continue
			}
			if !model.Retryable(err) || attempt >= policy.MaxRetries {
				fell, lerr := t.fallBack(step, info.Name, err)
				if lerr != nil {
					return harness.Message{}, "", errors.Join(err, lerr)
				}
				if !fell {
					return harness.Message{}, "", err
				}
				attempt, relieve = 0, true
				continue
			}
			attempt++
			d := policy.delay(attempt, retryAfter(err))
			t.s.logger.Warn("model call failed; retrying", "step", step, "attempt", attempt, "code", code, "delay", d, "error", err)
			if lerr := t.s.append(t.ctx, &session.ModelRetry{Step: step, Attempt: attempt, Code: code, Message: failureText(err), DelayMS: d.Milliseconds()}); lerr != nil {
				return harness.Message{}, "", errors.Join(err, lerr)
			}
			t.emit(&Retry{Step: step, Attempt: attempt, Delay: d, Err: err})
			if serr := sleep(t.ctx, d); serr != nil {
				return harness.Message{}, "", serr
			}
			continue
		}
		msg := asm.Message()
		// What is logged is the fixed id.
		t.s.logMu.Lock()
		model.FixCallIDs(msg, t.s.hist.Turns(), step, t.s.hist.CallIDUsed)
		t.s.logMu.Unlock()
		finish, _ := asm.Finish()
		// The model that answered: the one called, unless it named
		// another (a fallback wrapper used as a plain model, a replay of
		// a fallen-back answer).
		answered := info.Name
		if name := asm.Model(); name != "" {
			answered = name
		}
		am := &session.AssistantMessage{Step: step, Model: answered, Content: msg.Content, Finish: finish}
		if u, ok := asm.Usage(); ok {
			am.Usage = &u
			t.usage.Add(u)
			t.s.context.est.calibrate(u.InputTokens, reqBytes)
		}
		// The answer goes to disk with the next record: the start of its
		// calls, before any runs, or the end of the turn.
		if err := t.s.appendLater(t.ctx, am); err != nil {
			return harness.Message{}, "", fmt.Errorf("agent: logging the model's answer: %w", err)
		}
		t.s.context.track.steps++
		if am.Usage != nil {
			t.emit(&ModelUsage{Step: step, Model: answered, Usage: *am.Usage, Cost: t.price(answered, *am.Usage)})
		}
		return msg, finish, nil
	}
}

// stream runs one model call, yielding text and reasoning as they come.
func (t *turn) stream(step int, req *model.Request) (*model.Assembler, error) {
	asm := &model.Assembler{}
	for c, err := range t.model.Stream(t.ctx, req) {
		if err != nil {
			return asm, err
		}
		asm.Add(c)
		switch c.Type {
		case model.ChunkText:
			if c.Text != "" {
				t.emit(&TextDelta{Step: step, Text: c.Text})
			}
		case model.ChunkReasoning:
			if c.Text != "" {
				t.emit(&ReasoningDelta{Step: step, Text: c.Text})
			}
		}
		if t.stopped {
			return asm, t.ctx.Err()
		}
	}
	if err := t.ctx.Err(); err != nil {
		return asm, err
	}
	return asm, nil
}

// partialAnswer is what a cancelled answer had said, without its
// unfinished tool calls, as an assistant message to log; nil when it
// said nothing.
func partialAnswer(step int, modelName string, asm *model.Assembler) *session.AssistantMessage {
	if asm == nil {
		return nil
	}
	var keep []harness.Block
	for _, b := range asm.Message().Content {
		if b.Type != harness.BlockToolCall {
			keep = append(keep, b)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return &session.AssistantMessage{Step: step, Model: modelName, Content: keep, Finish: model.FinishAborted}
}

// fallBack moves the turn to the next model of its chain after the
// current one, from, failed for good with err, when err is a failure
// another model may not have (model.FallsBack). It logs and emits the
// switch; the turn keeps the new model for its remaining steps. It
// reports whether it fell back, and an error when logging failed.
func (t *turn) fallBack(step int, from string, err error) (bool, error) {
	next := t.cur + 1
	if next >= len(t.chain) || !model.FallsBack(err) {
		return false, nil
	}
	to := t.chain[next].Info().Name
	code := harness.CodeOf(err)
	t.s.logger.Warn("model call failed for good; falling back to the next model", "step", step, "from", from, "to", to, "code", code, "error", err)
	if lerr := t.s.append(t.ctx, &session.ModelFallback{Step: step, From: from, To: to, Code: code, Message: failureText(err)}); lerr != nil {
		return false, lerr
	}
	t.cur, t.model = next, t.chain[next]
	t.emit(&ModelFallback{Step: step, From: from, To: to, Err: err})
	return true, nil
}

// price returns the cost of a call of modelName with usage u made now,
// and adds it to the turn's and the session's.
func (t *turn) price(modelName string, u harness.Usage) float64 {
	c, _ := t.l.cfg.prices.Cost(modelName, u, time.Now())
	t.cost += c
	t.s.spend(u, c)
	return c
}

// retryAfter returns the provider's hint for when to try again after
// err (a model.ProviderError in its chain), or 0.
func retryAfter(err error) time.Duration {
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// failureText is what the log says about a failed model call: the text
// of the model error in err's chain, or err's own.
func failureText(err error) string {
	var he *harness.Error
	if errors.As(err, &he) {
		return he.Error()
	}
	return err.Error()
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// safely runs body, the turn's run or resumption, and turns a panic of
// the harness (or of the model, store or observers it calls) into the
// end of the turn: a TurnEnd with reason error and an *harness.Error,
// logged like any other end so the session stays usable. A panic in the
// host's loop body is passed on.
func (t *turn) safely(body func()) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if t.inHost {
			panic(p)
		}
		t.endAfterPanic(internalError(t.s.logger, "turn", p))
	}()
	body()
}

// endAfterPanic ends a turn that panicked: it logs the end and yields
// the TurnEnd. When logging the end panics too (a broken store), or the
// panic came from logging it, the TurnEnd is yielded without it.
func (t *turn) endAfterPanic(ie *harness.Error) {
	if t.endSent {
		return
	}
	var err error = ie
	if !t.ended {
		perr := t.finishSafely(ie)
		if perr == nil {
			return
		}
		err = errors.Join(ie, perr)
	}
	if !t.endSent {
		t.end(&TurnEnd{Reason: session.ReasonError, Steps: t.steps, Usage: t.usage, Cost: t.cost, Err: err})
	}
}

// finishSafely is finish with a panic recovered; it returns the error for
// the TurnEnd it could not yield, if it panicked.
func (t *turn) finishSafely(err *harness.Error) (perr *harness.Error) {
	defer func() {
		if p := recover(); p != nil {
			if t.inHost {
				panic(p)
			}
			perr = internalError(t.s.logger, "logging the end of a turn", p)
		}
	}()
	t.finish(session.ReasonError, err)
	return nil
}

// toolDuration is how long a call took, for events and the log.
func toolDuration(start time.Time) time.Duration { return time.Since(start) }
