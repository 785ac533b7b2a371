package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// dispatch runs one step's tool calls. Consecutive concurrency-safe calls
// run in parallel (bounded); any other call is a barrier that runs alone,
// in order. Every start is logged, and written through, before the call
// runs; every result is logged as it arrives. Results reach the model in
// call order whatever order they finished in. An error return means the
// log could not be written; the turn must end.
func (t *turn) dispatch(step int, calls []harness.ToolCall) error {
	env := t.s.env(t.model)
	prepared := make([]*tools.Call, len(calls))
	results := make([]*harness.ToolResult, len(calls))
	for i, c := range calls {
		call := &tools.Call{ID: c.ID, Name: c.Name, Arguments: []byte(c.Arguments), Step: step, Index: i, Env: env}
		prepared[i] = call
		results[i] = t.stepTools().reg.Check(call)
	}
	if err := t.decide(step, calls, prepared, results); err != nil {
		return err
	}
	for i := 0; i < len(calls); {
		if t.ctx.Err() != nil {
			// Close the calls that never started, so the log says so.
			for j := i; j < len(calls); j++ {
				res := harness.ErrorResult(harness.CodeNotRun, "This %s call was not run: the turn was cancelled before it started. Nothing was changed by it.", calls[j].Name)
				if err := t.finishCall(step, calls[j], res, 0); err != nil {
					return err
				}
				results[j] = res
			}
			break
		}
		if results[i] != nil { // refused by the registry or denied: nothing to run
			t.emit(&ToolCallStart{Step: step, Call: calls[i]})
			if err := t.finishCall(step, calls[i], results[i], 0); err != nil {
				return err
			}
			i++
			continue
		}
		j := i + 1
		if prepared[i].Spec.ConcurrencySafe {
			for j < len(calls) && results[j] == nil && prepared[j].Spec.ConcurrencySafe {
				j++
			}
		}
		if err := t.runBatch(step, calls[i:j], prepared[i:j], results[i:j]); err != nil {
			return err
		}
		i = j
	}
	t.observe(step, env, prepared, results)
	return nil
}

type callDone struct {
	index int
	res   *harness.ToolResult
	dur   time.Duration
}

// runBatch runs calls in parallel (a batch of one runs alone), at most
// the loop's parallel limit at once, started in order. Every call returns
// within its backstop plus the cancel wait (see Limits), so the batch
// never waits on a tool that ignores its context.
func (t *turn) runBatch(step int, calls []harness.ToolCall, prepared []*tools.Call, results []*harness.ToolResult) error {
	t.checkpointCalls(step, prepared)
	starts := make([]session.Payload, len(calls))
	for i, c := range calls {
		starts[i] = &session.ToolStarted{Step: step, CallID: c.ID, Name: c.Name}
	}
	if err := t.s.append(t.ctx, starts...); err != nil {
		return fmt.Errorf("agent: logging tool starts: %w", err)
	}
	for i, c := range calls {
		t.emit(&ToolCallStart{Step: step, Call: c, Render: prepared[i].Spec.Render})
	}
	hub := newProgressHub()
	defer hub.close()
	for i, call := range prepared {
		call.OnProgress = hub.reporter(i, step, call.ID, call.Name)
	}
	done := make(chan callDone, len(calls)) // never blocks a sender
	slots := make(chan struct{}, t.l.cfg.limits.withDefaults().MaxParallel)
	go func() {
		for i, call := range prepared {
			acquired := false
			select {
			case slots <- struct{}{}:
				acquired = true
			case <-t.ctx.Done():
			}
			if t.ctx.Err() != nil {
				// Cancelled before it could start: it never runs.
				if acquired {
					<-slots
				}
				done <- callDone{index: i, res: harness.ErrorResult(harness.CodeNotRun,
					"This %s call was not run: the turn was cancelled before it started. Nothing was changed by it.", call.Name)}
				continue
			}
			go func() {
				defer func() { <-slots }()
				start := time.Now()
				res := t.runCall(call)
				done <- callDone{index: i, res: res, dur: toolDuration(start)}
			}()
		}
	}()
	var logErr error
	flush := func() {
		for _, ev := range hub.take() {
			t.emit(ev)
		}
	}
	for range calls {
		var d callDone
	wait:
		for {
			select {
			case d = <-done:
				break wait
			case <-hub.wake:
				flush()
			case ev := <-t.sub.relay:
				t.emit(ev)
			}
		}
		flush() // what the call reported before it returned comes first
		results[d.index] = d.res
		if logErr == nil {
			logErr = t.finishCall(step, calls[d.index], d.res, d.dur)
			if logErr != nil {
				t.cancel() // stop the rest; they cannot be logged
			}
		}
	}
	return logErr
}

// runCall runs one call under its backstop and returns its result. When
// the backstop passes or the turn is cancelled, the call's context is
// cancelled and it gets the cancel wait to return; after that it is
// abandoned: the result says it did not stop, and the goroutine running it
// is left behind, registered with the session until it returns.
func (t *turn) runCall(call *tools.Call) (res *harness.ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			res = toolexec.PanicResult(call, p)
		}
	}()
	limits := t.l.cfg.limits.withDefaults()
	limit := limits.backstop(call.Spec)
	ctx, cancel := context.WithTimeout(t.ctx, limit)
	defer cancel()
	rc := &runningCall{tool: call.Name, id: call.ID, step: call.Step, done: make(chan *harness.ToolResult, 1)}
	go func() { rc.finish(t.s, t.execute(ctx, call)) }()
	select {
	case res := <-rc.done:
		return res
	case <-ctx.Done():
	}
	wait := time.NewTimer(limits.CancelWait)
	defer wait.Stop()
	select {
	case res := <-rc.done:
		return res
	case <-wait.C:
	}
	if !rc.abandon(t.s) {
		return <-rc.done // it returned just now
	}
	cancelled := t.ctx.Err() != nil
	t.s.logger.Warn("a tool call did not stop when cancelled and was abandoned; it may still be running",
		"tool", call.Name, "call_id", call.ID, "backstop", limit, "turn_cancelled", cancelled, "waited", limits.CancelWait)
	return abandonedResult(call, limit, cancelled)
}

// abandonedResult is the result of a call the dispatcher stopped waiting
// for.
func abandonedResult(call *tools.Call, limit time.Duration, cancelled bool) *harness.ToolResult {
	var b strings.Builder
	code := harness.CodeTimeout
	if cancelled {
		code = harness.CodeAborted
		fmt.Fprintf(&b, "The %s call was cancelled with its turn, but it did not stop when asked: it may still be running in the background.", call.Name)
	} else {
		fmt.Fprintf(&b, "The %s call did not finish within %s, the longest the harness waits for one call, and did not stop when asked: it may still be running in the background.", call.Name, limit)
	}
	if call.Spec.SideEffects {
		b.WriteString(" Its outcome is unknown: check the state it may have changed before relying on it or retrying.")
	} else if !cancelled {
		b.WriteString(" It has no side effects, but retrying it as it is will likely run out of time again: ask for less at once or take another approach.")
	}
	return &harness.ToolResult{IsError: true, Code: code, Content: []harness.Block{harness.TextBlock(b.String())}}
}

// execute runs one checked call through the middleware chain. A panic in
// middleware or tool becomes an error result.
func (t *turn) execute(ctx context.Context, call *tools.Call) (res *harness.ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			res = toolexec.PanicResult(call, p)
		}
	}()
	res = t.l.handler(context.WithValue(ctx, turnKey{}, t), call)
	if res == nil {
		res = toolexec.Normalize(call, nil, nil)
	}
	return res
}

// finishCall logs a result and yields ToolCallEnd. A result too large
// for one event of the session log is logged, shown to the model and
// yielded as a preview instead (see logOversized).
func (t *turn) finishCall(step int, c harness.ToolCall, res *harness.ToolResult, dur time.Duration) error {
	ev := &session.ToolFinished{Step: step, CallID: c.ID, Name: c.Name, Result: *res, DurationMS: dur.Milliseconds()}
	if err := t.s.append(t.ctx, ev); err != nil {
		res, err = t.logOversized(ev, res, err)
		if err != nil {
			return fmt.Errorf("agent: logging a tool result: %w", err)
		}
	}
	t.emit(&ToolCallEnd{Step: step, Call: c, Result: res, Duration: dur})
	return nil
}

// observe lets step observers add reminders after the step's results.
func (t *turn) observe(step int, env *tools.Env, calls []*tools.Call, results []*harness.ToolResult) {
	if len(t.l.cfg.observers) == 0 {
		return
	}
	st := &tools.Step{Env: env, Number: step, Calls: calls, Results: results}
	for _, o := range t.l.cfg.observers {
		for _, r := range t.safeObserve(o, st) {
			if r.Text == "" {
				continue
			}
			if err := t.s.append(t.ctx, &session.Reminded{Reminder: r}); err != nil {
				t.s.logger.Error("logging a reminder failed", "error", err)
				continue
			}
			t.emit(&ReminderAdded{Step: step, Reminder: r})
		}
	}
}

func (t *turn) safeObserve(o tools.StepObserver, st *tools.Step) (out []harness.Reminder) {
	defer func() {
		if p := recover(); p != nil {
			t.s.logger.Error("step observer panicked", "panic", fmt.Sprint(p))
			out = nil
		}
	}()
	return o(context.WithoutCancel(t.ctx), st)
}
