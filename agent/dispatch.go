package agent

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// dispatch runs one step's tool calls. Consecutive concurrency-safe calls
// run in parallel (bounded); any other call is a barrier that runs alone,
// in order. Every start is logged, and written through, before the call
// runs; every result is logged as it arrives. Results reach the model in
// call order whatever order they finished in. An error return means the
// log could not be written; the turn must end.
func (t *turn) dispatch(step int, calls []session.ToolCall) error {
	env := t.s.env(t.model)
	prepared := make([]*tools.Call, len(calls))
	results := make([]*tools.Result, len(calls))
	for i, c := range calls {
		call := &tools.Call{ID: c.ID, Name: c.Name, Arguments: []byte(c.Arguments), Step: step, Index: i, Env: env}
		prepared[i] = call
		results[i] = t.l.reg.Check(call)
	}
	for i := 0; i < len(calls); {
		if t.ctx.Err() != nil {
			// Close the calls that never started, so the log says so.
			for j := i; j < len(calls); j++ {
				res := tools.ErrorResult(tools.CodeNotRun, "This %s call was not run: the turn was cancelled before it started. Nothing was changed by it.", calls[j].Name)
				if err := t.finishCall(step, calls[j], res, 0); err != nil {
					return err
				}
				results[j] = res
			}
			break
		}
		if results[i] != nil { // refused by the registry: nothing to run
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
	res   *tools.Result
	dur   time.Duration
}

// runBatch runs calls in parallel (a batch of one runs alone).
func (t *turn) runBatch(step int, calls []session.ToolCall, prepared []*tools.Call, results []*tools.Result) error {
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
	done := make(chan callDone, len(calls))
	go func() {
		var g errgroup.Group
		g.SetLimit(t.l.cfg.parallel)
		for i, call := range prepared {
			g.Go(func() error {
				start := time.Now()
				res := t.execute(call)
				done <- callDone{index: i, res: res, dur: toolDuration(start)}
				return nil
			})
		}
		_ = g.Wait()
		close(done)
	}()
	var logErr error
	for d := range done {
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

// execute runs one checked call through the middleware chain. A panic in
// middleware or tool becomes an error result.
func (t *turn) execute(call *tools.Call) (res *tools.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = tools.PanicResult(call, p)
		}
	}()
	res = t.l.handler.Handle(t.ctx, call)
	if res == nil {
		res = tools.Normalize(call, nil, nil)
	}
	return res
}

// finishCall logs a result and yields ToolCallEnd. A result too large
// for one event of the session log is logged, shown to the model and
// yielded as a preview instead (see logOversized).
func (t *turn) finishCall(step int, c session.ToolCall, res *tools.Result, dur time.Duration) error {
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
func (t *turn) observe(step int, env *tools.Env, calls []*tools.Call, results []*tools.Result) {
	if len(t.l.cfg.observers) == 0 {
		return
	}
	st := &tools.Step{Env: env, Number: step, Calls: calls, Results: results}
	for _, o := range t.l.cfg.observers {
		for _, r := range t.safeObserve(o, st) {
			if r.Text == "" {
				continue
			}
			if err := t.s.append(t.ctx, &session.Reminder{Source: r.Source, Text: r.Text}); err != nil {
				t.s.logger.Error("logging a reminder failed", "error", err)
				continue
			}
			t.emit(&ReminderAdded{Step: step, Source: r.Source, Text: r.Text})
		}
	}
}

func (t *turn) safeObserve(o tools.StepObserver, st *tools.Step) (out []tools.Reminder) {
	defer func() {
		if p := recover(); p != nil {
			t.s.logger.Error("step observer panicked", "panic", fmt.Sprint(p))
			out = nil
		}
	}()
	return o.ObserveStep(context.WithoutCancel(t.ctx), st)
}
