package agent

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// Event is something a host can show while a turn runs. The concrete
// types are the structs of this file; switch on them:
//
//	for ev, err := range sess.Run(ctx, "fix the test") {
//		switch e := ev.(type) {
//		case *agent.TextDelta:
//			fmt.Print(e.Text)
//		case *agent.ToolCallEnd:
//			render(e.Result.Render)
//		}
//		if err != nil { ... }
//	}
//
// Only this package defines events; [MarshalEvent] writes each one's
// type name in "type".
type Event interface {
	kind() string
}

// TextDelta is a piece of the model's answer.
type TextDelta struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// ReasoningDelta is a piece of the model's reasoning.
type ReasoningDelta struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// ToolCallStart says a tool call is about to run: it was allowed and
// has its slot among the step's parallel calls. A call that will not run
// gets ToolCallRefused instead, and one cancelled before it started
// only its ToolCallEnd.
type ToolCallStart struct {
	Step int              `json:"step"`
	Call harness.ToolCall `json:"call"`
	// Render is the intent the tool declares, so a host can open the
	// right card before the result arrives.
	Render harness.RenderKind `json:"render,omitempty"`
}

// ToolCallRefused says a call will not run: the permission policy, the
// approver or the user denied it (Code "denied"; a PermissionDecision
// came before it with who and why), or the registry refused it (an
// unknown tool, arguments that do not match its schema). It comes
// instead of ToolCallStart, which only a call that runs gets; the
// result the model reads follows in ToolCallEnd.
type ToolCallRefused struct {
	Step int              `json:"step"`
	Call harness.ToolCall `json:"call"`
	// Code is the code of the call's error result: "denied", or the
	// registry's ("unknown_tool", "invalid_arguments", ...).
	Code harness.Code `json:"code"`
}

// ToolCallProgress is what a running call reported since the last such
// event: output as it arrives (bash) or a position and message (an MCP
// server's progress). Pieces the host has not taken yet are merged, so a
// slow host sees fewer, larger events, and never stalls the tool; output
// beyond the bound kept per call is dropped from the front and counted
// in Dropped. It is for display only: the session log does not keep it
// and the model sees the result in ToolCallEnd.
type ToolCallProgress struct {
	Step   int    `json:"step"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Output is the output since the last event; Progress, Total and
	// Message the latest position reported (see tools.Progress).
	Output   string  `json:"output,omitempty"`
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
	// Dropped counts the bytes of output left out before Output because
	// the host fell behind.
	Dropped int64 `json:"dropped,omitempty"`
}

// ToolCallEnd carries a call's result, render data included.
type ToolCallEnd struct {
	Step     int                 `json:"step"`
	Call     harness.ToolCall    `json:"call"`
	Result   *harness.ToolResult `json:"result"`
	Duration time.Duration       `json:"duration_ns"`
}

// ModelUsage reports the token usage of one model call.
type ModelUsage struct {
	Step  int           `json:"step"`
	Model string        `json:"model"`
	Usage harness.Usage `json:"usage"`
	// Cost is what the call cost by the loop's price table
	// (WithPrices), in its currency; 0 without one.
	Cost float64 `json:"cost,omitempty"`
}

// Retry says a model call failed and will be tried again after Delay.
// Text and reasoning already streamed in this step are void: the answer
// starts over.
type Retry struct {
	Step    int           `json:"step"`
	Attempt int           `json:"attempt"`
	Delay   time.Duration `json:"delay_ns"`
	Err     error         `json:"-"`
}

// ModelFallback says the model call of a step failed for good (its
// retries spent) in a way another model may not, and the next model of
// the fallback chain (model.Fallback) answers the same request: the
// turn's remaining steps call it too, and its answers are logged and
// priced as its own. Text and reasoning already streamed in this step
// are void.
type ModelFallback struct {
	Step int `json:"step"`
	// From is the model that failed, To the one that answers next.
	From string `json:"from"`
	To   string `json:"to"`
	// Err is the failure that made the turn fall back.
	Err error `json:"-"`
}

// ReminderAdded says the harness added advisory text for the model after
// a step's tool results.
type ReminderAdded struct {
	Step int `json:"step"`
	harness.Reminder
}

// ContextPruned says earlier tool results were replaced by placeholders.
type ContextPruned struct {
	Step            int      `json:"step"`
	Calls           []string `json:"calls"`
	EstimatedTokens int64    `json:"estimated_tokens"`
}

// ContextCompacted says older history was replaced by a summary.
type ContextCompacted struct {
	Step          int   `json:"step"`
	Messages      int   `json:"messages"`
	SourceTokens  int64 `json:"source_tokens"`
	SummaryTokens int64 `json:"summary_tokens"`
}

// PermissionDecision reports the decision on a call, before it runs or
// instead of running it: every denial, every answer, and every call an
// allow rule let through. Calls the mode lets run without a question
// (calls without side effects, everything in bypass mode) are logged but
// yield no event.
type PermissionDecision struct {
	Step int              `json:"step"`
	Call harness.ToolCall `json:"call"`
	// Outcome is allow or deny.
	Outcome permission.Outcome `json:"outcome"`
	// By is who decided: rule, mode, user or approver.
	By       string `json:"by"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	// Remember is the rule the answer added to the session's allow list.
	Remember string `json:"remember,omitempty"`
}

// ApprovalRequest says the turn is pausing: the calls of the step wait
// for answers that Session.Resolve gives, in this process or in another
// one after ResumeSession. The TurnEnd that follows has reason
// awaiting_approval.
type ApprovalRequest struct {
	Step     int                  `json:"step"`
	Requests []permission.Request `json:"requests"`
}

// BudgetReached says the turn reached a budget (Limits.Budget) before a
// model call, with what was spent. Unless Hard, the turn pauses: the
// TurnEnd that follows has reason awaiting_budget, and Session.Answer
// with a raised Answers.Budget continues it. When Hard (a hard ceiling,
// or a sub-agent at what was left of its parent's), the turn stops with
// reason budget_exceeded.
type BudgetReached struct {
	Step  int           `json:"step"`
	Spend session.Spend `json:"spend"`
	Hard  bool          `json:"hard,omitempty"`
}

// InputRequested says the turn is pausing because the model asked the
// user questions (the ask_user tool) and the loop has no answerer: the
// calls wait for Session.Answer with Answers.Input, in this process or
// in another one after ResumeSession. The TurnEnd that follows has
// reason awaiting_input.
type InputRequested struct {
	Step     int            `json:"step"`
	Requests []InputRequest `json:"requests"`
}

// TodoUpdated says the model replaced its plan (the todo tool, see
// WithTodo): Items is the whole plan, in order, to show in place of the
// previous one.
type TodoUpdated struct {
	Step   int                `json:"step"`
	CallID string             `json:"call_id"`
	Items  []harness.TodoItem `json:"items"`
}

// SteerDelivered says a message sent with Session.Steer reached the
// turn: logged as a user message the model reads before the model call
// of Step. Queued says instead that the turn ended before it could read
// the message, which now waits as a queued turn (Session.RunQueued).
type SteerDelivered struct {
	Step   int    `json:"step"`
	Text   string `json:"text"`
	Queued bool   `json:"queued,omitempty"`
}

// StepEnd closes a step: one model call and the tool calls it asked for.
type StepEnd struct {
	Step int `json:"step"`
	// Finish is the model's finish reason.
	Finish string `json:"finish"`
	// ToolCalls is how many tool calls the step ran.
	ToolCalls int `json:"tool_calls"`
}

// SubAgentEvent is an event of a child session, passed on to the host of
// the parent's turn while the task call that started the child runs, or,
// for a background child, while a turn of the parent runs (see
// WithJobEvents for those that come between turns).
type SubAgentEvent struct {
	// Session is the child's session id; Call the parent's task call id.
	Session string `json:"session"`
	Call    string `json:"call"`
	Agent   string `json:"agent"`
	// Depth is 1 for a child of the top session, 2 for a grandchild.
	Depth int `json:"depth"`
	// Job is the id of the job a background child runs as (task with
	// background true); empty for a child in the foreground of its call.
	Job   string `json:"job,omitempty"`
	Event Event  `json:"event"`
}

// TurnEnd is always the last event of a turn.
type TurnEnd struct {
	// Reason is one of the session.Reason* constants: completed,
	// step_limit, cancelled or error.
	Reason string        `json:"reason"`
	Steps  int           `json:"steps"`
	Usage  harness.Usage `json:"usage"`
	// Output is the validated JSON value of a structured final answer
	// (see Session.RunOutput); nil otherwise. Decode it with json.Unmarshal,
	// or run the turn with RunTyped, which does.
	Output json.RawMessage `json:"output,omitempty"`
	// Cost is what the turn's model calls cost by the loop's price
	// table (WithPrices), in its currency; 0 without one.
	Cost float64 `json:"cost,omitempty"`
	// Queued is how many user messages wait to run as turns
	// (Session.Queue, and steered messages the turn did not read): run
	// them with Session.RunQueued.
	Queued int `json:"queued,omitempty"`
	// Err is the error that ended the turn, when Reason is error or
	// cancelled. The iterator yields it alongside this event.
	Err error `json:"-"`
}

func (*TextDelta) kind() string          { return "text_delta" }
func (*ReasoningDelta) kind() string     { return "reasoning_delta" }
func (*ToolCallStart) kind() string      { return "tool_call_start" }
func (*ToolCallProgress) kind() string   { return "tool_call_progress" }
func (*ToolCallRefused) kind() string    { return "tool_call_refused" }
func (*ToolCallEnd) kind() string        { return "tool_call_end" }
func (*ModelUsage) kind() string         { return "usage" }
func (*Retry) kind() string              { return "retry" }
func (*ModelFallback) kind() string      { return "fallback" }
func (*ReminderAdded) kind() string      { return "reminder" }
func (*ContextPruned) kind() string      { return "context_pruned" }
func (*ContextCompacted) kind() string   { return "context_compacted" }
func (*PermissionDecision) kind() string { return "permission_decision" }
func (*ApprovalRequest) kind() string    { return "approval_request" }
func (*BudgetReached) kind() string      { return "budget_reached" }
func (*InputRequested) kind() string     { return "input_requested" }
func (*TodoUpdated) kind() string        { return "todo_updated" }
func (*SteerDelivered) kind() string     { return "steer_delivered" }
func (*StepEnd) kind() string            { return "step_end" }
func (*SubAgentEvent) kind() string      { return "sub_agent" }
func (*TurnEnd) kind() string            { return "turn_end" }

// kindOf names the type of ev as MarshalEvent writes it; "" for nil.
func kindOf(ev Event) string {
	if ev == nil {
		return ""
	}
	return ev.kind()
}

// MarshalEvent encodes an event as one JSON object with its kind in
// "type" (the type's name in snake_case: "text_delta", "turn_end", ...)
// and, where the event carries an error, "error": {"code", "message"}. It
// is the line format for scripts that follow a turn.
func MarshalEvent(ev Event) ([]byte, error) {
	body, err := marshalPlain(ev)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	kind, _ := marshalPlain(ev.kind())
	fields["type"] = kind
	var evErr error
	switch e := ev.(type) {
	case *SubAgentEvent:
		if e.Event != nil {
			inner, err := MarshalEvent(e.Event)
			if err != nil {
				return nil, err
			}
			fields["event"] = inner
		}
	case *TurnEnd:
		evErr = e.Err
	case *Retry:
		evErr = e.Err
	case *ModelFallback:
		evErr = e.Err
	}
	if evErr != nil {
		info, _ := marshalPlain(session.ErrorInfo{Code: harness.Code(harness.CodeOf(evErr)), Message: evErr.Error()})
		fields["error"] = info
	}
	return marshalPlain(fields)
}

// marshalPlain encodes v as JSON without escaping <, > and & for HTML:
// the lines are read by scripts and people, where "&&" must stay "&&".
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
