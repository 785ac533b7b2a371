package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// Model is a language model the loop can call. One Stream call is one
// attempt: retrying is the loop's job, so an implementation must not
// retry on its own.
type Model interface {
	// Info describes the model.
	Info() ModelInfo
	// Stream sends req and yields the answer as it arrives. A failure is
	// yielded once, as a non-nil error (preferably a *ModelError), after
	// which the sequence ends. The sequence must end promptly when ctx
	// is cancelled or the consumer stops, leaving nothing running.
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// ModelInfo describes a model.
type ModelInfo struct {
	// Name is the provider's model id.
	Name string `json:"name"`
	// ContextWindow is the context size in tokens; 0 when unknown.
	ContextWindow int `json:"context_window,omitempty"`
	// Input lists the input modalities the model declares. Text is
	// assumed; a modality not listed is treated as unsupported.
	Input []harness.Modality `json:"input,omitempty"`
}

// Accepts reports whether the model declares input of modality m.
func (i ModelInfo) Accepts(m harness.Modality) bool {
	return m == harness.ModalityText || slices.Contains(i.Input, m)
}

// Request is one model call.
type Request struct {
	// System is the system prompt.
	System string
	// Messages is the conversation, oldest first.
	Messages []harness.Message
	// Tools are the tools the model may call, in a stable order.
	Tools []tools.Spec
	// Attachments resolves the image references in Messages; nil when
	// the loop has no attachment store.
	Attachments tools.AttachmentStore
}

// ChunkType says which field of a [Chunk] is set.
type ChunkType uint8

// Chunk types.
const (
	// ChunkText carries a piece of answer text in Text.
	ChunkText ChunkType = iota + 1
	// ChunkReasoning carries a piece of reasoning in Text.
	ChunkReasoning
	// ChunkToolCall carries a piece of a tool call in ToolCall.
	ChunkToolCall
	// ChunkUsage carries the token usage of the call in Usage.
	ChunkUsage
	// ChunkFinish carries the finish reason in Finish; it is the last
	// chunk of a complete answer.
	ChunkFinish
)

// Chunk is one piece of a streamed answer.
type Chunk struct {
	Type     ChunkType
	Text     string
	ToolCall ToolCallDelta
	Usage    harness.Usage
	Finish   string
}

// ToolCallDelta is a piece of a tool call. Pieces with the same Index
// belong to one call: ID and Name arrive in some piece (usually the
// first), Arguments are concatenated in order.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Finish reasons a model reports.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool_calls"
	FinishLength    = "length"
	// FinishAborted marks an answer cut short by cancellation; the loop
	// logs it, models never report it.
	FinishAborted = "aborted"
)

// ErrorCode classifies model failures so a program can branch on them.
type ErrorCode string

// Model error codes. They are stable.
const (
	// CodeAuth: the key is missing, wrong or lacks access (401, 403).
	CodeAuth ErrorCode = "auth"
	// CodeInsufficientBalance: the account has no credit left (402).
	CodeInsufficientBalance ErrorCode = "insufficient_balance"
	// CodeInvalidRequest: the provider refused the request (400, 422).
	CodeInvalidRequest ErrorCode = "invalid_request"
	// CodeContextWindowExceeded: the request is larger than the model's
	// context window.
	CodeContextWindowExceeded ErrorCode = "context_window_exceeded"
	// CodeRateLimit: too many requests (429); RetryAfter may say when.
	CodeRateLimit ErrorCode = "rate_limit"
	// CodeServer: the provider failed (5xx) or is overloaded.
	CodeServer ErrorCode = "server"
	// CodeTransport: the connection failed or stalled.
	CodeTransport ErrorCode = "transport"
	// CodeEmptyResponse: the answer had no text and no tool calls.
	CodeEmptyResponse ErrorCode = "empty_response"
	// CodeTruncatedStream: the stream ended without a finish reason.
	CodeTruncatedStream ErrorCode = "truncated_stream"
	// CodeContentFilter: the provider withheld the answer.
	CodeContentFilter ErrorCode = "content_filter"
	// CodeAborted: the call was cancelled.
	CodeAborted ErrorCode = "aborted"
	// CodeInternal: the harness recovered from a panic (an
	// *InternalError): a bug, not a problem with the model or the request.
	CodeInternal ErrorCode = "internal"
	// CodeUnknown: anything else.
	CodeUnknown ErrorCode = "unknown"
)

// ModelError is a classified model failure.
type ModelError struct {
	Code ErrorCode
	// Status is the HTTP status, when there was one.
	Status int
	// Message is the provider's explanation, or the harness's when the
	// provider gave none. It never contains credentials.
	Message string
	// RetryAfter is the provider's hint for when to try again.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

func (e *ModelError) Error() string {
	s := "model: " + string(e.Code)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ModelError) Unwrap() error { return e.Err }

// ErrorCode returns the code as a string.
func (e *ModelError) ErrorCode() string { return string(e.Code) }

// Retryable reports whether trying the same request again may succeed.
func (e *ModelError) Retryable() bool {
	switch e.Code {
	case CodeRateLimit, CodeServer, CodeTransport, CodeEmptyResponse, CodeTruncatedStream:
		return true
	}
	return false
}

// CodeOf returns the model error code of err: CodeInternal for an
// *InternalError in its chain, the code of a *ModelError in its chain,
// CodeAborted for context cancellation, CodeUnknown otherwise, and "" for
// nil.
func CodeOf(err error) ErrorCode {
	if err == nil {
		return ""
	}
	var ie *InternalError
	if errors.As(err, &ie) {
		return CodeInternal
	}
	var me *ModelError
	if errors.As(err, &me) {
		return me.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return CodeAborted
	}
	return CodeUnknown
}
