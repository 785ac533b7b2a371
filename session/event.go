package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/go-harness/harness"
)

// Event is one line of a session log after the header.
type Event struct {
	// Seq numbers the events of a session 1, 2, 3, ... without gaps. A
	// log damaged by hand or by a crash may hold gaps or numbers that do
	// not increase; loading warns about them, and appending continues
	// after the highest.
	Seq int64
	// Time is when the event was appended.
	Time time.Time
	// Data is the typed payload; [Event.Type] is the line's "type".
	Data Payload
}

// Type returns the event's type, the "type" of its log line.
func (e Event) Type() string {
	if e.Data == nil {
		return ""
	}
	return e.Data.eventType()
}

// Payload is the typed content of an event: one of this package's
// event types (UserMessage, AssistantMessage, ToolStarted, ToolFinished,
// ModelRequest, Reminded, TurnEnded, SystemPrompt, ToolRecord,
// ModelRetry, ModelFallback, Pruned, Compacted, ApprovalRequested,
// PermissionDecided, ContextLoaded, HookRun, Checkpoint, Paused,
// BudgetSet)
// or Unknown. The set is closed: the log
// format has one owner, this package, and an event of a type it does not
// know is kept as Unknown.
type Payload interface {
	eventType() string
}

// The types of the events that hold text the model saw, as Event.Type
// returns them (search filters by them).
const (
	TypeUser       = "user"        // UserMessage
	TypeAssistant  = "assistant"   // AssistantMessage
	TypeToolResult = "tool_result" // ToolFinished
	TypeReminder   = "reminder"    // Reminded
	TypeSystem     = "system"      // SystemPrompt
)

// The types of the other events.
const (
	typeToolStart    = "tool_start"    // ToolStarted
	typeModelRequest = "model_request" // ModelRequest
	typeTurnEnd      = "turn_end"      // TurnEnded
	typeRecord       = "record"        // ToolRecord
	typeRetry        = "retry"         // ModelRetry
	typeFallback     = "fallback"      // ModelFallback
	typePrune        = "prune"         // Pruned
	typeCompaction   = "compaction"    // Compacted
	typeApproval     = "approval"      // ApprovalRequested
	typePermission   = "permission"    // PermissionDecided
	typePaused       = "paused"        // Paused
	typeBudget       = "budget"        // BudgetSet
)

// UserMessage is input from the user; it starts a turn, unless Steer
// says it was delivered into a running turn.
type UserMessage struct {
	Content []harness.Block `json:"content"`
	// Steer marks a message the user sent while the turn ran, delivered
	// at a safe point: after a step's tool results, before the model
	// call of Step. It is part of that turn, not the start of another.
	Steer bool `json:"steer,omitempty"`
	Step  int  `json:"step,omitempty"`
}

// AssistantMessage is what the model answered in one step.
type AssistantMessage struct {
	Step  int    `json:"step"`
	Model string `json:"model,omitempty"`
	// Content holds reasoning, text and tool call blocks in stream order.
	Content []harness.Block `json:"content"`
	// Finish is the finish reason ("stop", "tool_calls", "length",
	// "aborted", ...).
	Finish string         `json:"finish,omitempty"`
	Usage  *harness.Usage `json:"usage,omitempty"`
}

// ToolStarted is logged, and written through, before a call runs: a
// tool's side effects never precede its logged start.
type ToolStarted struct {
	Step   int    `json:"step"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
}

// ToolFinished holds the result of a call.
type ToolFinished struct {
	Step       int                `json:"step"`
	CallID     string             `json:"call_id"`
	Name       string             `json:"name"`
	Result     harness.ToolResult `json:"result"`
	DurationMS int64              `json:"duration_ms"`
}

// ModelRequest is logged before each model call.
type ModelRequest struct {
	Step        int         `json:"step"`
	Model       string      `json:"model"`
	Fingerprint Fingerprint `json:"fingerprint"`
}

// Fingerprint identifies what a model call was sent, part by part, so a
// replay can say which part drifted.
type Fingerprint struct {
	// System, Tools and History are hex SHA-256 digests of the system
	// prompt, the tool schemas and the message history.
	System  string `json:"system"`
	Tools   string `json:"tools"`
	History string `json:"history"`
	// Messages is the number of messages sent.
	Messages int `json:"messages"`
}

// Reminded holds advisory text the harness added after a step's tool
// results (a repeated-call warning, say). The model sees it as user text.
type Reminded struct {
	harness.Reminder
}

// Turn end reasons.
const (
	ReasonCompleted   = "completed"
	ReasonStepLimit   = "step_limit"
	ReasonCancelled   = "cancelled"
	ReasonError       = "error"
	ReasonInterrupted = "interrupted"
	// ReasonAwaitingApproval ends a turn that paused: calls of its last
	// step wait for a decision (see ApprovalRequested). The calls stay
	// open in the history; resolving them continues the same turn.
	ReasonAwaitingApproval = "awaiting_approval"
	// ReasonAwaitingInput ends a turn that paused because the model asked
	// the user questions (the ask_user tool) and no one could answer at
	// once: those calls stay open until the answers come (see Paused).
	ReasonAwaitingInput = "awaiting_input"
	// ReasonAwaitingBudget ends a turn that paused before a model call
	// because a budget of money or tokens was reached (see Paused); it
	// continues when the budget is raised.
	ReasonAwaitingBudget = "awaiting_budget"
	// ReasonAwaitingTool ends a turn that paused because calls of its
	// last step are run by the host, outside the loop (external tools,
	// see Paused): those calls stay open until their results come.
	ReasonAwaitingTool = "awaiting_tool"
	// ReasonBudgetExceeded ends a turn that reached a budget set as a
	// hard ceiling: it does not pause, it stops.
	ReasonBudgetExceeded = "budget_exceeded"
)

// Paused is logged when a turn pauses for something other than
// approval (ApprovalRequested logs those): the answers to the model's
// questions (Reason awaiting_input, the open ask_user calls in Calls) or
// a raised budget (Reason awaiting_budget, what was spent in Spend). The
// TurnEnded that follows has the same reason.
type Paused struct {
	Step   int    `json:"step"`
	Reason string `json:"reason"`
	// Calls are the ids of the calls that wait for the user's answers
	// (awaiting_input) or for the host to run them (awaiting_tool).
	Calls []string `json:"calls,omitempty"`
	// Spend is what had been spent when the budget was reached.
	Spend *Spend `json:"spend,omitempty"`
	// OutputName, OutputSchema and OutputRepaired are the structured
	// answer the paused turn asks for, as in ApprovalRequested.
	OutputName     string          `json:"output_name,omitempty"`
	OutputSchema   json.RawMessage `json:"output_schema,omitempty"`
	OutputRepaired bool            `json:"output_repaired,omitempty"`
}

// Spend is what a turn and its session had spent on model calls (their
// compactions' and sub-agents' included) when a budget was reached:
// cost in the price table's currency, tokens as input plus output.
type Spend struct {
	TurnCost      float64 `json:"turn_cost"`
	TurnTokens    int64   `json:"turn_tokens"`
	SessionCost   float64 `json:"session_cost"`
	SessionTokens int64   `json:"session_tokens"`
	// Reached names the budget reached: "turn_cost", "turn_tokens",
	// "session_cost" or "session_tokens"; Limit is its value.
	Reached string  `json:"reached"`
	Limit   float64 `json:"limit"`
}

// BudgetSet records budgets the user raised to continue a turn paused
// by one (a zero field caps nothing): a resumed session keeps them.
type BudgetSet struct {
	TurnCost      float64 `json:"turn_cost,omitempty"`
	TurnTokens    int64   `json:"turn_tokens,omitempty"`
	SessionCost   float64 `json:"session_cost,omitempty"`
	SessionTokens int64   `json:"session_tokens,omitempty"`
}

// ApprovalRequested is logged when a turn pauses because calls need an
// answer no one could give at once: every call of the step waits, and
// Calls are the questions.
type ApprovalRequested struct {
	Step  int           `json:"step"`
	Calls []PendingCall `json:"calls"`
	// OutputName and OutputSchema are the structured answer the paused
	// turn asks for (a typed turn), so that resolving it, in this
	// process or after resuming, validates its final answer against the
	// same schema; OutputRepaired says its one repair round trip was
	// spent. All are empty for a turn without one, and in logs written
	// before they were recorded.
	OutputName     string          `json:"output_name,omitempty"`
	OutputSchema   json.RawMessage `json:"output_schema,omitempty"`
	OutputRepaired bool            `json:"output_repaired,omitempty"`
}

// PendingCall is one question of an ApprovalRequested.
type PendingCall struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Preview is the call in one line.
	Preview string `json:"preview"`
	// Rule is the rule that asked; empty when the mode did.
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason"`
	// Suggest is a rule that would allow calls like this one.
	Suggest string `json:"suggest,omitempty"`
	// Digest binds the question to the call it asks about: "sha256:" and
	// the hex digest of the call's name, a NUL byte and its arguments as
	// logged. An answer is refused when the logged call no longer has
	// it. Empty in logs written before it was recorded.
	Digest string `json:"digest,omitempty"`
}

// PermissionDecided records the decision on one call before it runs (or
// does not): the outcome ("allow" or "deny"), who decided ("rule",
// "mode", "user" or "approver"), and a rule the user chose to remember
// for the session, which a resumed session keeps.
type PermissionDecided struct {
	Step     int    `json:"step"`
	CallID   string `json:"call_id"`
	Name     string `json:"name"`
	Outcome  string `json:"outcome"`
	By       string `json:"by"`
	Rule     string `json:"rule,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	Remember string `json:"remember,omitempty"`
}

// TurnEnded closes a turn.
type TurnEnded struct {
	Reason string        `json:"reason"`
	Steps  int           `json:"steps"`
	Usage  harness.Usage `json:"usage"`
	Error  *ErrorInfo    `json:"error,omitempty"`
}

// ErrorInfo is a logged error.
type ErrorInfo struct {
	Code    harness.Code `json:"code,omitempty"`
	Message string       `json:"message"`
}

// SystemPrompt is logged when a session first uses a system prompt and
// whenever it changes.
type SystemPrompt struct {
	Text string `json:"text"`
}

// ToolRecord is a tool-specific record, such as the environment a shell
// session was opened with.
type ToolRecord struct {
	CallID string          `json:"call_id,omitempty"`
	Tool   string          `json:"tool"`
	Name   string          `json:"name"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// ModelRetry is logged when a model call failed and is tried again.
type ModelRetry struct {
	Step    int          `json:"step"`
	Attempt int          `json:"attempt"`
	Code    harness.Code `json:"code"`
	Message string       `json:"message"`
	DelayMS int64        `json:"delay_ms"`
}

// ModelFallback is logged when a model call failed for good (its
// retries spent) with a failure another model may not have, and the next
// model of a fallback chain answers the same request instead. The
// following ModelRequest and AssistantMessage name the model that took
// over.
type ModelFallback struct {
	Step int `json:"step"`
	// From is the model that failed, To the one that answers next.
	From    string       `json:"from"`
	To      string       `json:"to"`
	Code    harness.Code `json:"code"`
	Message string       `json:"message"`
}

// Unknown holds an event of a type this build does not know. It is kept
// so nothing is lost, and skipped when history is derived.
type Unknown struct {
	Type string
	Data json.RawMessage
}

func (*UserMessage) eventType() string       { return TypeUser }
func (*AssistantMessage) eventType() string  { return TypeAssistant }
func (*ToolStarted) eventType() string       { return typeToolStart }
func (*ToolFinished) eventType() string      { return TypeToolResult }
func (*ModelRequest) eventType() string      { return typeModelRequest }
func (*Reminded) eventType() string          { return TypeReminder }
func (*TurnEnded) eventType() string         { return typeTurnEnd }
func (*SystemPrompt) eventType() string      { return TypeSystem }
func (*ToolRecord) eventType() string        { return typeRecord }
func (*ModelRetry) eventType() string        { return typeRetry }
func (*ModelFallback) eventType() string     { return typeFallback }
func (*ApprovalRequested) eventType() string { return typeApproval }
func (*PermissionDecided) eventType() string { return typePermission }
func (*Paused) eventType() string            { return typePaused }
func (*BudgetSet) eventType() string         { return typeBudget }
func (u *Unknown) eventType() string         { return u.Type }

// newPayload returns an empty payload for a known event type.
func newPayload(typ string) (Payload, bool) {
	switch typ {
	case TypeUser:
		return &UserMessage{}, true
	case TypeAssistant:
		return &AssistantMessage{}, true
	case typeToolStart:
		return &ToolStarted{}, true
	case TypeToolResult:
		return &ToolFinished{}, true
	case typeModelRequest:
		return &ModelRequest{}, true
	case TypeReminder:
		return &Reminded{}, true
	case typeTurnEnd:
		return &TurnEnded{}, true
	case TypeSystem:
		return &SystemPrompt{}, true
	case typeRecord:
		return &ToolRecord{}, true
	case typeRetry:
		return &ModelRetry{}, true
	case typeFallback:
		return &ModelFallback{}, true
	case typePrune:
		return &Pruned{}, true
	case typeCompaction:
		return &Compacted{}, true
	case typeApproval:
		return &ApprovalRequested{}, true
	case typePermission:
		return &PermissionDecided{}, true
	case typeContext:
		return &ContextLoaded{}, true
	case typeHook:
		return &HookRun{}, true
	case typeCheckpoint:
		return &Checkpoint{}, true
	case typePaused:
		return &Paused{}, true
	case typeBudget:
		return &BudgetSet{}, true
	}
	return nil, false
}

type envelope struct {
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// MarshalJSON encodes the event as one log line (without the newline).
// HTML characters are not escaped, so the bytes on disk hold text as the
// model saw it wherever JSON allows.
func (e Event) MarshalJSON() ([]byte, error) {
	return appendEvent(nil, e)
}

// appendEvent appends e's line, as MarshalJSON writes it, to dst.
func appendEvent(dst []byte, e Event) ([]byte, error) {
	var enc eventEncoder
	return enc.append(dst, e)
}

// An eventEncoder appends events' lines, as MarshalJSON writes them, to
// byte slices. It writes the small records a step logs (the start of a
// call, the request's fingerprint) itself, and encodes the others with
// one json.Encoder it keeps: a log that encodes many events allocates it
// once. The zero value is ready to use; it is not safe for concurrent
// use.
type eventEncoder struct {
	w   appendWriter
	enc *json.Encoder
}

// append appends e's line to dst.
func (x *eventEncoder) append(dst []byte, e Event) ([]byte, error) {
	if e.Data == nil {
		return dst, fmt.Errorf("session: event %d has no data", e.Seq)
	}
	start := len(dst)
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = e.Time.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","type":`...)
	typ := e.Data.eventType()
	if plainName(typ) {
		dst = append(append(append(dst, '"'), typ...), '"')
	} else {
		q, err := marshalNoEscape(typ)
		if err != nil {
			return dst[:start], err
		}
		dst = append(dst, q...)
	}
	dst = append(dst, `,"data":`...)
	var err error
	switch p := e.Data.(type) {
	case *Unknown:
		data := p.Data
		if len(bytes.TrimSpace(data)) == 0 {
			data = []byte("null")
		}
		dst = append(dst, data...)
	case *ToolStarted:
		dst = appendToolStarted(dst, p)
	case *ModelRequest:
		dst = appendModelRequest(dst, p)
	default:
		dst, err = x.encode(dst, p)
	}
	if err != nil {
		return dst[:start], fmt.Errorf("session: encoding %s event: %w", typ, err)
	}
	return append(dst, '}'), nil
}

// encode appends v as encoding/json writes it, HTML characters not
// escaped, to dst.
func (x *eventEncoder) encode(dst []byte, v any) ([]byte, error) {
	if x.enc == nil {
		x.enc = json.NewEncoder(&x.w)
		x.enc.SetEscapeHTML(false)
	}
	x.w.b = dst
	err := x.enc.Encode(v)
	dst, x.w.b = x.w.b, nil
	if err != nil {
		return dst, err
	}
	return bytes.TrimSuffix(dst, []byte("\n")), nil
}

// appendToolStarted appends p as encoding/json writes it.
func appendToolStarted(dst []byte, p *ToolStarted) []byte {
	dst = append(dst, `{"step":`...)
	dst = strconv.AppendInt(dst, int64(p.Step), 10)
	dst = append(dst, `,"call_id":`...)
	dst = appendString(dst, p.CallID)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, p.Name)
	return append(dst, '}')
}

// appendModelRequest appends p as encoding/json writes it.
func appendModelRequest(dst []byte, p *ModelRequest) []byte {
	dst = append(dst, `{"step":`...)
	dst = strconv.AppendInt(dst, int64(p.Step), 10)
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, p.Model)
	dst = append(dst, `,"fingerprint":{"system":`...)
	dst = appendString(dst, p.Fingerprint.System)
	dst = append(dst, `,"tools":`...)
	dst = appendString(dst, p.Fingerprint.Tools)
	dst = append(dst, `,"history":`...)
	dst = appendString(dst, p.Fingerprint.History)
	dst = append(dst, `,"messages":`...)
	dst = strconv.AppendInt(dst, int64(p.Fingerprint.Messages), 10)
	return append(dst, "}}"...)
}

// appendString appends s as a JSON string, as encoding/json writes it
// with HTML characters not escaped: a string of printable ASCII without
// quotes or backslashes (ids, names, digests) as it is, any other through
// encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			q, err := marshalNoEscape(s)
			if err != nil { // a string always encodes
				q = []byte(`""`)
			}
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// plainName reports whether an event type is made of letters, digits and
// '_' only, so that its JSON string is the name in quotes.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// UnmarshalJSON decodes a log line. An unknown type decodes to *Unknown.
//
// A line as this package writes it is decoded by the loader's fast
// decoder; anything else goes through encoding/json, to the same event
// or error. A store reading lines from elsewhere (a database row) may
// call it directly rather than through json.Unmarshal, which would scan
// the whole line once more before calling it.
func (e *Event) UnmarshalJSON(b []byte) error {
	if ev, ok := fastDecodeEvent(b, nil); ok {
		*e = ev
		return nil
	}
	return e.unmarshalStd(b)
}

// unmarshalStd decodes a log line with encoding/json alone.
func (e *Event) unmarshalStd(b []byte) error {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return err
	}
	if env.Type == "" {
		return fmt.Errorf("session: event without a type")
	}
	p, known := newPayload(env.Type)
	if !known {
		p = &Unknown{Type: env.Type, Data: append(json.RawMessage(nil), env.Data...)}
	} else if len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, p); err != nil {
			return fmt.Errorf("session: decoding %s event %d: %w", env.Type, env.Seq, err)
		}
	}
	*e = Event{Seq: env.Seq, Time: env.Time, Data: p}
	return nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
