package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// Activities runs the steps of a turn against a session store. Every
// method opens the session for appending (one writer per session: a
// second opener waits for the first by retrying), reads what the log
// holds for the turn, and does only what is missing from it.
type Activities struct {
	// Store keeps the session logs: the source of truth.
	Store session.Store
	// Model answers the model calls.
	Model model.Model
	// Tools are the tools the model may call.
	Tools *tools.Registry
	// System is the system prompt, logged when it changes.
	System string
	// Cwd is the working directory of sessions the first turn creates
	// (an absolute path in FS's namespace; "/" when empty).
	Cwd string
	// FS is the file system tools see; nil when none.
	FS fs.FileSystem
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Register registers the workflow and the activities on w.
func (a *Activities) Register(w worker.Registry) {
	w.RegisterWorkflowWithOptions(Turn, workflowOptions())
	w.RegisterActivityWithOptions(a.AppendUser, activityOptions(ActAppendUser))
	w.RegisterActivityWithOptions(a.ModelStep, activityOptions(ActModelStep))
	w.RegisterActivityWithOptions(a.ToolCall, activityOptions(ActToolCall))
	w.RegisterActivityWithOptions(a.EndTurn, activityOptions(ActEndTurn))
}

func (a *Activities) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

func workflowOptions() workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: WorkflowName}
}

func activityOptions(name string) activity.RegisterOptions {
	return activity.RegisterOptions{Name: name}
}

// permanent marks an error that no retry can mend.
func permanent(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), "harness.permanent", nil)
}

// opened is a session open for appending, with what its log holds.
type opened struct {
	log    session.Log
	events []session.Event
	hist   *session.History
}

// open opens the session. A session open elsewhere (another attempt of
// an activity that has not noticed it was given up) is a retryable
// failure: its lock goes with its process or its connection.
func (a *Activities) open(ctx context.Context, id string) (*opened, error) {
	log, tr, err := a.Store.Open(ctx, id)
	if err != nil {
		if errors.Is(err, harness.CodeInvalidID) {
			return nil, permanent("opening session %s: %v", id, err)
		}
		return nil, fmt.Errorf("opening session %s: %w", id, err)
	}
	return &opened{log: log, events: tr.Events, hist: new(session.History).Add(tr.Events...)}, nil
}

func (o *opened) close(err *error) {
	if cerr := o.log.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("closing the session log: %w", cerr)
	}
}

// turnEvents returns the events of the turn-th turn: those from its user
// message on, up to the next user message. ok is false when the log has
// fewer user messages.
func turnEvents(events []session.Event, turn int) (user *session.UserMessage, rest []session.Event, ok bool) {
	n, start := 0, -1
	for i, e := range events {
		if u, isUser := e.Data.(*session.UserMessage); isUser {
			n++
			if n == turn {
				user, start = u, i
			} else if n == turn+1 {
				return user, events[start+1 : i], true
			}
		}
	}
	if start < 0 {
		return nil, nil, false
	}
	return user, events[start+1:], true
}

// heartbeat records heartbeats until the returned stop is called, so the
// server notices within its heartbeat timeout that a worker died.
func heartbeat(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}

func userText(u *session.UserMessage) string {
	var s string
	for _, b := range u.Content {
		if b.Type == harness.BlockText {
			s += b.Text
		}
	}
	return s
}

// AppendUser logs the turn's prompt, creating the session for its first
// turn. A log that already holds the turn's user message with this
// prompt is left as it is.
func (a *Activities) AppendUser(ctx context.Context, in TurnInput) (err error) {
	if in.Turn < 1 {
		return permanent("turn %d of session %s: turns are numbered from 1", in.Turn, in.SessionID)
	}
	if in.Turn == 1 {
		cwd := a.Cwd
		if cwd == "" {
			cwd = "/"
		}
		l, cerr := a.Store.Create(ctx, session.Header{ID: in.SessionID, Cwd: cwd})
		switch {
		case cerr == nil:
			if err := l.Close(); err != nil {
				return err
			}
		case errors.Is(cerr, harness.CodeExists):
		case errors.Is(cerr, harness.CodeInvalidID):
			return permanent("creating session %s: %v", in.SessionID, cerr)
		default:
			return fmt.Errorf("creating session %s: %w", in.SessionID, cerr)
		}
	}
	o, err := a.open(ctx, in.SessionID)
	if err != nil {
		return err
	}
	defer o.close(&err)
	have := o.hist.Turns()
	switch {
	case have >= in.Turn:
		u, _, _ := turnEvents(o.events, in.Turn)
		if got := userText(u); got != in.Prompt {
			return permanent("session %s: turn %d is logged with another prompt (%q); start the next turn with number %d",
				in.SessionID, in.Turn, got, have+1)
		}
		return nil
	case have < in.Turn-1:
		return permanent("session %s has %d turns: turn %d cannot start before turn %d", in.SessionID, have, in.Turn, have+1)
	}
	var payloads []session.Payload
	if te, warnings := o.hist.Repair(); te != nil {
		// The previous turn stopped without an end (its workflow was
		// terminated, say): close it as the agent loop does on resume.
		for _, w := range warnings {
			a.logger().Warn("repairing the previous turn", "session", in.SessionID, "warning", w.String())
		}
		payloads = append(payloads, te)
	}
	if a.System != o.hist.SystemPrompt() {
		payloads = append(payloads, &session.SystemPrompt{Text: a.System})
	}
	payloads = append(payloads, &session.UserMessage{Content: []harness.Block{harness.TextBlock(in.Prompt)}})
	_, err = o.log.Append(ctx, payloads...)
	return err
}

// stepEvents returns the assistant message and the tool events of one
// step of a turn.
type stepLog struct {
	answer   *session.AssistantMessage
	request  bool
	started  map[string]bool
	finished map[string]*session.ToolFinished
}

func scanStep(events []session.Event, step int) stepLog {
	s := stepLog{started: map[string]bool{}, finished: map[string]*session.ToolFinished{}}
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.ModelRequest:
			s.request = s.request || p.Step == step
		case *session.AssistantMessage:
			if p.Step == step && p.Finish != model.FinishAborted {
				s.answer = p
			}
		case *session.ToolStarted:
			if p.Step == step {
				s.started[p.CallID] = true
			}
		case *session.ToolFinished:
			if p.Step == step {
				s.finished[p.CallID] = p
			}
		}
	}
	return s
}

func stepResult(am *session.AssistantMessage) StepResult {
	msg := harness.Message{Role: harness.RoleAssistant, Content: am.Content}
	r := StepResult{Finish: am.Finish, Calls: msg.ToolCalls()}
	for _, b := range am.Content {
		if b.Type == harness.BlockText {
			r.Text += b.Text
		}
	}
	return r
}

// ModelStep makes one model call of a turn and logs the answer. A step
// whose answer is logged already returns it without calling the model.
func (a *Activities) ModelStep(ctx context.Context, in StepInput) (_ StepResult, err error) {
	o, err := a.open(ctx, in.SessionID)
	if err != nil {
		return StepResult{}, err
	}
	defer o.close(&err)
	_, events, ok := turnEvents(o.events, in.Turn)
	if !ok {
		return StepResult{}, permanent("session %s has no turn %d", in.SessionID, in.Turn)
	}
	sl := scanStep(events, in.Step)
	if sl.answer != nil {
		return stepResult(sl.answer), nil
	}
	specs := a.Tools.Specs()
	req := &model.Request{System: o.hist.SystemPrompt(), Messages: o.hist.Messages()}
	for _, s := range specs {
		req.Tools = append(req.Tools, model.Tool{Name: s.Name, Description: s.Description, Parameters: s.InputSchema})
	}
	info := a.Model.Info()
	if !sl.request {
		if _, err := o.log.Append(ctx, &session.ModelRequest{Step: in.Step, Model: info.Name}); err != nil {
			return StepResult{}, err
		}
	}
	stop := heartbeat(ctx)
	asm := &model.Assembler{}
	var serr error
	for c, err := range a.Model.Stream(ctx, req) {
		if err != nil {
			serr = err
			break
		}
		asm.Add(c)
	}
	stop()
	if serr == nil {
		serr = asm.Err()
	}
	if serr != nil {
		if ctx.Err() == nil && !model.Retryable(serr) {
			return StepResult{}, permanent("step %d: the model call failed: %v", in.Step, serr)
		}
		return StepResult{}, fmt.Errorf("step %d: the model call failed: %w", in.Step, serr)
	}
	msg := asm.Message()
	model.FixCallIDs(msg, in.Turn, in.Step, o.hist.CallIDUsed) // as the agent loop does
	finish, _ := asm.Finish()
	am := &session.AssistantMessage{Step: in.Step, Model: info.Name, Content: msg.Content, Finish: finish}
	if u, ok := asm.Usage(); ok {
		am.Usage = &u
	}
	if _, err := o.log.Append(ctx, am); err != nil {
		return StepResult{}, err
	}
	return stepResult(am), nil
}

// ToolCall runs one tool call of a step, at most once whatever happens
// to the workers:
//
//   - a call whose end is logged returns the logged result, not run again;
//   - a call whose start is logged but not its end was cut off (its
//     worker died): its outcome is unknown, and that is logged and
//     returned, not run again;
//   - otherwise its start is logged (and written through) before it runs,
//     and its result after.
func (a *Activities) ToolCall(ctx context.Context, in CallInput) (_ CallResult, err error) {
	o, err := a.open(ctx, in.SessionID)
	if err != nil {
		return CallResult{}, err
	}
	defer o.close(&err)
	_, events, ok := turnEvents(o.events, in.Turn)
	if !ok {
		return CallResult{}, permanent("session %s has no turn %d", in.SessionID, in.Turn)
	}
	sl := scanStep(events, in.Step)
	if sl.answer == nil || !hasCall(sl.answer, in.Call.ID) {
		return CallResult{}, permanent("session %s, turn %d, step %d: the logged answer has no call %s", in.SessionID, in.Turn, in.Step, in.Call.ID)
	}
	id, name := in.Call.ID, in.Call.Name
	if f := sl.finished[id]; f != nil {
		return CallResult{CallID: id, Name: name, IsError: f.Result.IsError, Code: f.Result.Code}, nil
	}
	if sl.started[id] {
		r := unknownResult(o.hist, in.Call)
		_, err := o.log.Append(ctx, &session.ToolFinished{Step: in.Step, CallID: id, Name: name, Result: r})
		if err != nil {
			return CallResult{}, err
		}
		a.logger().Warn("a tool call was cut off: its outcome is unknown", "session", in.SessionID, "call", id, "tool", name)
		return CallResult{CallID: id, Name: name, IsError: true, Code: r.Code}, nil
	}
	if _, err := o.log.Append(ctx, &session.ToolStarted{Step: in.Step, CallID: id, Name: name}); err != nil {
		return CallResult{}, err
	}
	start := time.Now()
	stop := heartbeat(ctx)
	res := a.run(ctx, o, in)
	stop()
	res.CallID, res.Name = "", ""
	f := &session.ToolFinished{Step: in.Step, CallID: id, Name: name, Result: *res, DurationMS: time.Since(start).Milliseconds()}
	// The call ran: log its result even when the activity's time ran
	// out meanwhile.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := o.log.Append(actx, f); err != nil {
		// The next attempt finds the start without the end: outcome unknown.
		return CallResult{}, err
	}
	return CallResult{CallID: id, Name: name, IsError: res.IsError, Code: res.Code, Ran: true}, nil
}

func hasCall(am *session.AssistantMessage, id string) bool {
	for _, c := range (harness.Message{Content: am.Content}).ToolCalls() {
		if c.ID == id {
			return true
		}
	}
	return false
}

// unknownResult is the result the session's history gives a call whose
// start is logged and whose end is not.
func unknownResult(h *session.History, call harness.ToolCall) harness.ToolResult {
	for _, m := range h.Messages() {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult && b.ToolResult != nil && b.ToolResult.CallID == call.ID &&
				b.ToolResult.Code == harness.CodeOutcomeUnknown {
				r := *b.ToolResult
				r.CallID, r.Name = "", ""
				return r
			}
		}
	}
	r := harness.ErrorResult(harness.CodeOutcomeUnknown,
		"The outcome of this %s call is unknown: the worker running it stopped. Verify its side effects before relying on them.", call.Name)
	return *r
}

// run checks and executes the call, turning failures into error results.
func (a *Activities) run(ctx context.Context, o *opened, in CallInput) (res *harness.ToolResult) {
	h := o.log.Header()
	call := &tools.Call{
		ID: in.Call.ID, Name: in.Call.Name, Arguments: in.Call.Arguments, Step: in.Step, Index: in.Index,
		Env: &tools.Env{
			SessionID: h.ID, Cwd: h.Cwd, FS: a.FS, ModelInput: a.Model.Info().Input, Turn: in.Turn,
			State: &tools.State{}, Logger: a.logger(),
		},
	}
	if bad := a.Tools.Check(call); bad != nil {
		return bad
	}
	defer func() {
		if p := recover(); p != nil {
			res = harness.ErrorResult(harness.CodeToolPanic, "The %s tool failed unexpectedly (%v). The call may have had side effects.", call.Name, p)
		}
	}()
	res, err := call.Tool().Execute(ctx, call)
	if ctx.Err() != nil && call.Spec.SideEffects && (err != nil || res == nil || res.IsError) {
		// Cut off by the activity's end (its time ran out, or the server
		// gave this attempt up): what the call did is not known.
		return harness.ErrorResult(harness.CodeOutcomeUnknown,
			"The outcome of this %s call is unknown: it was cut off while it ran (%v). "+
				"Verify its side effects before relying on them, and retry only work that is safe to repeat.", call.Name, context.Cause(ctx))
	}
	if err != nil {
		code := harness.CodeOf(err)
		if code == harness.CodeUnknown {
			code = harness.CodeToolFailed
		}
		return harness.ErrorResult(code, "%s", err.Error())
	}
	if res == nil {
		return &harness.ToolResult{}
	}
	if res.IsError && res.Code == "" {
		res.Code = harness.CodeToolFailed
	}
	return res
}

// EndTurn logs the end of the turn, once.
func (a *Activities) EndTurn(ctx context.Context, in EndInput) (err error) {
	o, err := a.open(ctx, in.SessionID)
	if err != nil {
		return err
	}
	defer o.close(&err)
	_, events, ok := turnEvents(o.events, in.Turn)
	if !ok {
		return permanent("session %s has no turn %d", in.SessionID, in.Turn)
	}
	var usage harness.Usage
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.TurnEnded:
			return nil
		case *session.AssistantMessage:
			if p.Usage != nil {
				usage.Add(*p.Usage)
			}
		}
	}
	_, err = o.log.Append(ctx, &session.TurnEnded{Reason: in.Reason, Steps: in.Steps, Usage: usage})
	return err
}
