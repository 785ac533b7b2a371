package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-harness/harness/internal/assemble"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/callid"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// turn is the state of one running turn.
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

// send hands one event to the host's loop body. inHost stays set when
// the body panics, so that the turn passes the panic on instead of
// recovering it.
func (t *turn) send(ev Event, err error) bool {
	t.inHost = true
	ok := t.yield(ev, err)
	t.inHost = false
	return ok
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

// runSafely runs the turn and turns a panic of the harness (or of the
// model, store or observers it calls) into the end of the turn: a TurnEnd
// with reason error and an *harness.Error, logged like any other end so
// the session stays usable. A panic in the host's loop body is passed on.
func (t *turn) runSafely(content []harness.Block) { t.safely(func() { t.run(content) }) }

// resumeSafely is runSafely for the continuation of a paused turn.
func (t *turn) resumeSafely(answers map[string]permission.Answer) {
	t.safely(func() { t.resume(answers) })
}

// safely runs body, the turn's run or resumption, as runSafely says.
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

func (t *turn) run(content []harness.Block) {
	var first []session.Payload
	if sys := t.l.cfg.system; sys != t.systemLogged() {
		first = append(first, &session.SystemPrompt{Text: sys})
	}
	first = append(first, &session.UserMessage{Content: content})
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
	t.loop()
}

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
				if again, err := t.checkOutput(step, msg); again {
					continue
				} else if err != nil {
					t.finish(session.ReasonError, err)
					return
				}
			}
			t.finish(session.ReasonCompleted, nil)
			return
		}
		if err := t.dispatch(step, calls); err != nil {
			switch {
			case errors.Is(err, errPaused):
				t.emit(&StepEnd{Step: step, Finish: finish})
				t.finish(session.ReasonAwaitingApproval, nil)
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

func (t *turn) systemLogged() string {
	t.s.logMu.Lock()
	defer t.s.logMu.Unlock()
	return t.s.hist.SystemPrompt()
}

// finish logs the end of the turn, syncs the log, and yields TurnEnd.
func (t *turn) finish(reason string, err error) {
	t.ended = true
	t.checkpoint(session.CheckpointTurnEnd)
	childUsage, childCost := t.sub.spent()
	t.usage.Add(childUsage)
	// The children's model calls were priced in their own sessions; they
	// count in the parent's turn and session as well.
	t.cost += childCost
	t.s.spend(childUsage, childCost)
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
	end := &TurnEnd{Reason: reason, Steps: t.steps, Usage: t.usage, Cost: t.cost, Err: err}
	if t.output != nil && reason == session.ReasonCompleted {
		end.Output = t.output.value
	}
	t.end(end)
}

// end hands the TurnEnd to the observers and, unless the host stopped
// iterating, to the host.
func (t *turn) end(te *TurnEnd) {
	t.notify(te)
	if !t.stopped {
		t.endSent = true
		t.send(te, te.Err)
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
	req := &model.Request{
		System:   t.l.cfg.system,
		Messages: t.s.Messages(),
		Tools:    t.stepTools().model,
		Images:   t.l.cfg.attachments,
	}
	if t.output != nil {
		out := t.output.out
		req.Output = &out
	}
	return t.projectImages(req)
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
		reqBytes := t.requestBytes(req)
		if err := t.s.append(t.ctx, &session.ModelRequest{Step: step, Model: info.Name, Fingerprint: t.s.chain.fingerprint(req)}); err != nil {
			return harness.Message{}, "", fmt.Errorf("agent: logging the model request: %w", err)
		}
		asm, err := t.stream(step, req)
		if err == nil {
			err = asm.Err()
		}
		if err != nil {
			if t.ctx.Err() != nil {
				t.logPartial(step, info.Name, asm)
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
		t.fixCallIDs(step, msg)
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
			t.s.est.calibrate(u.InputTokens, reqBytes)
		}
		if err := t.s.append(t.ctx, am); err != nil {
			return harness.Message{}, "", fmt.Errorf("agent: logging the model's answer: %w", err)
		}
		t.s.track.steps++
		if am.Usage != nil {
			t.emit(&ModelUsage{Step: step, Model: answered, Usage: *am.Usage, Cost: t.price(answered, *am.Usage)})
		}
		return msg, finish, nil
	}
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

// stream runs one model call, yielding text and reasoning as they come.
func (t *turn) stream(step int, req *model.Request) (*assemble.Assembler, error) {
	asm := &assemble.Assembler{}
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

// logPartial logs what a cancelled answer had said, without its
// unfinished tool calls, so the log shows what the user saw.
func (t *turn) logPartial(step int, modelName string, asm *assemble.Assembler) {
	if asm == nil {
		return
	}
	msg := asm.Message()
	var keep []harness.Block
	for _, b := range msg.Content {
		if b.Type != harness.BlockToolCall {
			keep = append(keep, b)
		}
	}
	if len(keep) == 0 {
		return
	}
	am := &session.AssistantMessage{Step: step, Model: modelName, Content: keep, Finish: model.FinishAborted}
	if err := t.s.append(t.ctx, am); err != nil {
		t.s.logger.Error("logging a cancelled answer failed", "error", err)
	}
}

// fixCallIDs gives every call of msg an id new to the session
// (callid.Fix: what is logged is the fixed id).
func (t *turn) fixCallIDs(step int, msg harness.Message) {
	t.s.logMu.Lock()
	defer t.s.logMu.Unlock()
	callid.Fix(msg, t.s.hist.Turns(), step, t.s.hist.CallIDUsed)
}

// toolDuration is how long a call took, for events and the log.
func toolDuration(start time.Time) time.Duration { return time.Since(start) }
