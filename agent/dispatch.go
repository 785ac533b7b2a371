package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
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
		call := &tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Step: step, Index: i, Env: env}
		prepared[i] = call
		if results[i] = t.s.checkLoaded(t.stepTools(), call); results[i] == nil {
			results[i] = t.stepTools().reg.Check(call)
		}
	}
	if err := t.decide(step, calls, prepared, results); err != nil {
		return err
	}
	// ask_user calls no one can answer now wait, after the step's other
	// calls, for the turn to pause.
	var waiting, external []harness.ToolCall
	for i := 0; i < len(calls); {
		if results[i] == nil && t.deferExternal(prepared[i]) { // external.go
			external = append(external, calls[i])
			i++
			continue
		}
		if results[i] == nil && t.deferInput(prepared[i]) {
			if _, err := questionsOf(calls[i]); err != nil {
				results[i] = harness.ErrorResult(harness.CodeInvalidArguments, "%s", upperFirst(err.Error()))
			} else {
				waiting = append(waiting, calls[i])
				i++
				continue
			}
		}
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
			t.emit(&ToolCallRefused{Step: step, Call: calls[i], Code: results[i].Code})
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
	if len(external) > 0 && t.ctx.Err() == nil {
		return t.pauseExternal(step, external) // external.go; ask_user calls wait after them
	}
	if len(waiting) > 0 && t.ctx.Err() == nil {
		return t.pauseInput(step, waiting)
	}
	if err := t.notRunExternal(step, external); err != nil { // cancelled: external.go
		return err
	}
	for _, c := range waiting { // cancelled: they are never asked
		res := harness.ErrorResult(harness.CodeNotRun, "This %s call was not run: the turn was cancelled before the user was asked.", c.Name)
		if err := t.finishCall(step, c, res, 0); err != nil {
			return err
		}
	}
	t.observe(step, env, prepared, results)
	t.jobNotices(step)
	t.announce(step, results)
	return nil
}

// decide makes the decision for each call the registry accepted, before
// anything of the step runs. Denied calls get their result in results;
// when some call needs an answer that no approver gives, the questions
// are logged and errPaused is returned: nothing of the step runs.
func (t *turn) decide(step int, calls []harness.ToolCall, prepared []*tools.Call, results []*harness.ToolResult) error {
	if t.s.policy() == nil && t.preset == nil && !t.s.narrowed() {
		return nil
	}
	var asked []session.PendingCall
	var requests []permission.Request
	made := map[string]*session.PermissionDecided{}
	for i, call := range prepared {
		if results[i] != nil {
			continue
		}
		if d, ok := t.preset[call.ID]; ok {
			if d.Outcome != string(permission.Allow) {
				results[i] = denialResult(call.Name, d.Reason, d.By, d.Feedback)
			}
			continue
		}
		d, ok := t.s.decideCall(call) // the policy, and the turn's narrowings
		if !ok {
			continue // a pause logged by a loop with permissions, resolved by one without
		}
		rec := &session.PermissionDecided{Step: step, CallID: call.ID, Name: call.Name, Outcome: string(d.Outcome),
			Rule: d.Rule, Mode: string(d.Mode), Reason: d.Reason, By: byMode}
		if d.Rule != "" {
			rec.By = byRule
		}
		if d.Outcome == permission.Ask {
			req := permission.Request{Call: calls[i], Decision: d, Render: call.Spec.Render, Digest: callDigest(calls[i])}
			switch {
			case t.l.cfg.approver == nil && t.l.cfg.depth > 0 && !t.l.cfg.jobs.background:
				// A sub-agent cannot pause its parent's turn: the policy's
				// ask becomes its denial, saying what would allow it.
				rec.Outcome, rec.Reason = string(permission.Deny), subAgentAskReason(d)
				t.s.logger.Warn("a sub-agent's call needs approval and the loop has no approver; it is denied (set agent.WithApprover, or an allow rule, to let sub-agents make such calls)",
					"tool", call.Name, "call", call.ID, "suggest", d.Suggest)
			case t.l.cfg.approver == nil:
				asked = append(asked, session.PendingCall{CallID: call.ID, Name: call.Name, Preview: d.Preview, Rule: d.Rule, Reason: d.Reason, Suggest: d.Suggest, Digest: req.Digest})
				requests = append(requests, req)
				continue
			default:
				ans, err := askApprover(t.ctx, t.l.cfg.approver, req)
				if t.ctx.Err() != nil {
					return t.ctx.Err()
				}
				rec.By, rec.Outcome = byApprover, string(permission.Deny)
				switch {
				case err != nil:
					rec.Feedback = "the approver failed: " + err.Error()
				case ans.Allow:
					rec.Outcome = string(permission.Allow)
					rec.By = byUser
				default:
					rec.By, rec.Feedback = byUser, ans.Feedback
				}
				if err == nil && ans.Remember != "" {
					if rerr := t.s.remember(ans.Remember); rerr != nil {
						t.s.logger.Warn("a remembered rule does not parse; it is not kept", "rule", ans.Remember, "error", rerr)
					} else {
						rec.Remember = ans.Remember
					}
				}
			}
		}
		if err := t.s.append(t.ctx, rec); err != nil {
			return fmt.Errorf("agent: logging a permission decision: %w", err)
		}
		made[call.ID] = rec
		if rec.By != byMode || rec.Outcome != string(permission.Allow) {
			t.emit(decisionEvent(rec, calls[i]))
		}
		if rec.Outcome != string(permission.Allow) {
			results[i] = denialResult(call.Name, rec.Reason, rec.By, rec.Feedback)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	return t.pauseStep(step, asked, requests, made)
}

// Who decided a call.
const (
	byRule     = "rule"
	byMode     = "mode"
	byUser     = "user"
	byApprover = "approver"
)

// askApprover asks a, recovering a panic as an error.
func askApprover(ctx context.Context, a permission.Approver, req permission.Request) (ans permission.Answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the approver panicked: %v", p)
		}
	}()
	return a(ctx, req)
}

// decisionEvent is the event of a logged decision on call.
func decisionEvent(d *session.PermissionDecided, call harness.ToolCall) *PermissionDecision {
	return &PermissionDecision{Step: d.Step, Call: call, Outcome: permission.Outcome(d.Outcome), By: d.By, Rule: d.Rule,
		Reason: d.Reason, Feedback: d.Feedback, Remember: d.Remember}
}

// denialResult is what the model reads for a denied call.
func denialResult(name, reason, by, feedback string) *harness.ToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Permission denied: this %s call was not run, and nothing was changed by it. ", name)
	if by == byUser || by == byApprover {
		b.WriteString("The user denied it")
		if reason != "" {
			fmt.Fprintf(&b, " (it needed approval: %s)", reason)
		}
		b.WriteString(".")
	} else if reason != "" {
		b.WriteString(upperFirst(reason) + ".")
	}
	if feedback != "" {
		fmt.Fprintf(&b, " The user said: %q", feedback)
	}
	b.WriteString(" Do not retry the same call: take another approach, or ask the user to change the permissions if it is needed.")
	return &harness.ToolResult{IsError: true, Code: harness.CodeDenied, Content: []harness.Block{harness.TextBlock(b.String())}}
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// subAgentAskReason is the denial reason of a sub-agent's call the policy
// wanted an answer for, with no approver to give it.
func subAgentAskReason(d permission.Decision) string {
	var b strings.Builder
	if d.Reason != "" {
		b.WriteString(d.Reason)
	} else {
		b.WriteString("it needs approval")
	}
	b.WriteString("; a sub-agent cannot pause its parent's turn to wait for an answer: the loop has no approver (the host configures one with agent.WithApprover, or allows calls like this with a permission rule")
	if d.Suggest != "" {
		fmt.Fprintf(&b, " such as %s", d.Suggest)
	}
	b.WriteString("). Do without it, or say in your answer that the parent should make this call")
	return b.String()
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
	hub := newProgressHub()
	defer hub.close()
	for i, call := range prepared {
		call.OnProgress = hub.reporter(i, step, call.ID, call.Name)
	}
	if len(calls) == 1 {
		return t.runAlone(step, calls[0], prepared[0], results, hub)
	}
	done := make(chan callDone, len(calls)) // never blocks a sender
	// started hands the turn each call as it takes its slot, before it
	// runs: ToolCallStart says a call is about to run, never one that
	// waits for a slot and may be cancelled before it starts. It is
	// unbuffered, and the call runs only once the turn acknowledged its
	// start (on begun): the host sees a call start before anything it
	// does, or its end.
	started := make(chan int)
	begun := make(chan struct{})
	slots := make(chan struct{}, t.l.cfg.limits.withDefaults().MaxParallel)
	go func() {
		for i, call := range prepared {
			acquired := false
			select {
			case slots <- struct{}{}:
				acquired = true
			case <-t.ctx.Done():
			}
			announced := false
			if acquired && t.ctx.Err() == nil {
				select {
				case started <- i:
					announced = true
					<-begun
				case <-t.ctx.Done():
				}
			}
			if !announced {
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
				res := t.runCall(call, nil)
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
			case i := <-started:
				t.emit(&ToolCallStart{Step: step, Call: calls[i], Render: prepared[i].Spec.Render})
				begun <- struct{}{}
			case <-hub.wake:
				flush()
			case ev := <-t.sub.relay:
				t.emit(ev)
			case <-t.s.bg.wakeChan():
				t.relayJobEvents()
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

// runAlone runs a batch of one call as runBatch does, without the
// goroutines that order a batch's starts: the turn announces the call,
// runs it (on a goroutine of its own, see runCall) and relays what it
// reports while it waits.
func (t *turn) runAlone(step int, c harness.ToolCall, call *tools.Call, results []*harness.ToolResult, hub *progressHub) error {
	var d callDone
	if t.ctx.Err() != nil {
		// Cancelled before it could start: it never runs.
		d.res = harness.ErrorResult(harness.CodeNotRun,
			"This %s call was not run: the turn was cancelled before it started. Nothing was changed by it.", call.Name)
	} else {
		t.emit(&ToolCallStart{Step: step, Call: c, Render: call.Spec.Render})
		start := time.Now()
		d.res = t.runCall(call, hub)
		d.dur = toolDuration(start)
		for _, ev := range hub.take() { // what the call reported before it returned comes first
			t.emit(ev)
		}
	}
	results[0] = d.res
	return t.finishCall(step, c, d.res, d.dur)
}

// runCall runs one call under its backstop and returns its result. When
// the backstop passes or the turn is cancelled, the call's context is
// cancelled and it gets the cancel wait to return; after that it is
// abandoned: the result says it did not stop, and the goroutine running it
// is left behind, registered with the session until it returns. With a
// hub, the caller is the turn itself: while it waits it hands the host
// what the call reports and what its sub-agents do.
func (t *turn) runCall(call *tools.Call, hub *progressHub) (res *harness.ToolResult) {
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
	go func() {
		growStack()
		rc.finish(t.s, t.execute(ctx, call))
	}()
	var (
		wake  <-chan struct{}
		relay <-chan Event
	)
	if hub != nil {
		wake, relay = hub.wake, t.sub.relay
	}
	// serve waits for the call's result until done or timeout (either
	// may be nil); ok is false when the wait stopped first.
	serve := func(done <-chan struct{}, timeout <-chan time.Time) (*harness.ToolResult, bool) {
		for {
			select {
			case res := <-rc.done:
				return res, true
			case <-done:
				return nil, false
			case <-timeout:
				return nil, false
			case <-wake:
				for _, ev := range hub.take() {
					t.emit(ev)
				}
			case ev := <-relay:
				t.emit(ev)
			}
		}
	}
	if res, ok := serve(ctx.Done(), nil); ok {
		return res
	}
	wait := time.NewTimer(limits.CancelWait)
	defer wait.Stop()
	if res, ok := serve(nil, wait.C); ok {
		return res
	}
	if !rc.abandon(t.s) {
		return <-rc.done // it returned just now
	}
	cancelled := t.ctx.Err() != nil
	t.s.logger.Warn("a tool call did not stop when cancelled and was abandoned; it may still be running",
		"tool", call.Name, "call_id", call.ID, "backstop", limit, "turn_cancelled", cancelled, "waited", limits.CancelWait)
	return abandonedResult(call, limit, cancelled)
}

// callStack is about the stack a tool call's goroutine grows to: 16 KiB
// holds decoding the arguments and a tool's own work without growing again.
const callStack = 12 << 10

// growStack grows the calling goroutine's stack to hold callStack at once,
// while it is shallow. A new goroutine starts with a small stack; left to
// itself, a call's goroutine would double it several times over deep in
// decoding the arguments, each time copying and adjusting every frame
// (a third of the CPU time of a no-op call, in BenchmarkLoopStep).
//
//go:noinline
func growStack() {
	var frame [callStack]byte
	touchStack(frame[:])
}

// touchStack keeps growStack's frame from being optimized away.
//
//go:noinline
func touchStack(b []byte) { b[0] = 0 }

// runningCall is one call's execution, which the dispatcher may abandon.
type runningCall struct {
	tool, id string
	step     int
	done     chan *harness.ToolResult // buffered: the worker never blocks

	mu        sync.Mutex
	finished  bool
	abandoned bool
	since     time.Time
}

// finish hands the worker's result over, or, when the call was abandoned
// meanwhile, lets the session forget it.
func (r *runningCall) finish(s *Session, res *harness.ToolResult) {
	r.mu.Lock()
	r.finished = true
	abandoned := r.abandoned
	r.mu.Unlock()
	if !abandoned {
		r.done <- res
		return
	}
	s.forgetAbandoned(r)
	s.logger.Info("an abandoned tool call finished", "tool", r.tool, "call_id", r.id,
		"after_abandoning", time.Since(r.since).Round(time.Millisecond))
}

// abandon marks the call abandoned and registers it with the session. It
// reports false when the call finished meanwhile; its result is then on
// done.
func (r *runningCall) abandon(s *Session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return false
	}
	r.abandoned, r.since = true, time.Now()
	s.rememberAbandoned(r)
	return true
}

// abandonedCall is a tool call the loop stopped waiting for: it ignored
// the cancellation of its context and may still be running.
type abandonedCall struct {
	Tool   string
	CallID string
	Step   int
	Since  time.Time // when it was abandoned
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
// for one event of the session log is cut to fit (see cutToFit): the
// form logged is what the model sees and the host is shown.
func (t *turn) finishCall(step int, c harness.ToolCall, res *harness.ToolResult, dur time.Duration) error {
	ev := &session.ToolFinished{Step: step, CallID: c.ID, Name: c.Name, Result: *res, DurationMS: dur.Milliseconds()}
	err := t.s.append(t.ctx, ev)
	var tooLarge *session.EventTooLargeError
	if errors.As(err, &tooLarge) {
		// The save outlives a cancelled turn: the result is logged either way.
		owner := tools.Owner{Session: t.s.Header().ID, Tool: c.Name, Call: c.ID}
		cut, cerr := cutToFit(context.WithoutCancel(t.ctx), t.l.cfg.output, owner, ev.Result, tooLarge.Max)
		if cerr != nil {
			return fmt.Errorf("agent: logging a tool result: %w", errors.Join(err, cerr))
		}
		for _, r := range cut.tries {
			logged := *ev
			logged.Result = r
			if err = t.s.append(t.ctx, &logged); err == nil {
				t.s.logger.Warn("a tool result too large for the session log was logged as a preview",
					"tool", c.Name, "call_id", c.ID, "event_bytes", tooLarge.Size, "max_line_size", tooLarge.Max,
					"locator", cut.stored.Locator, "save_error", cut.saveErr)
				res = &r
				break
			}
			if !errors.Is(err, harness.CodeTooLarge) {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("agent: logging a tool result: %w", err)
	}
	t.emit(&ToolCallEnd{Step: step, Call: c, Result: res, Duration: dur})
	t.notePlan(step, c, res)
	return nil
}

// observe lets step observers add reminders after the step's results.
func (t *turn) observe(step int, env *tools.Env, calls []*tools.Call, results []*harness.ToolResult) {
	if len(t.l.cfg.observers) == 0 {
		return
	}
	st := &tools.Step{Env: env, Number: step, Calls: calls, Results: results}
	for _, o := range t.l.cfg.observers {
		for _, r := range observeSafely(context.WithoutCancel(t.ctx), t.s.logger, o, st) {
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

// observeSafely runs a step observer, a panic in it logged and ignored.
func observeSafely(ctx context.Context, logger *slog.Logger, o tools.StepObserver, st *tools.Step) (out []harness.Reminder) {
	defer func() {
		if p := recover(); p != nil {
			logger.Error("step observer panicked", "panic", fmt.Sprint(p))
			out = nil
		}
	}()
	return o(ctx, st)
}
