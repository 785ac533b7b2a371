package model

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/go-harness/harness"
)

// Model is a language model the loop can call. One Stream call is one
// attempt: retrying is the loop's job, so an implementation must not
// retry on its own.
type Model interface {
	// Info describes the model.
	Info() Info
	// Stream sends req and yields the answer as it arrives. A failure is
	// yielded once, as a non-nil error (preferably a *harness.Error with
	// a model code, see NewError), after which the sequence ends. The
	// sequence must end promptly when ctx is cancelled or the consumer
	// stops, leaving nothing running.
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Info describes a model.
type Info struct {
	// Name is the provider's model id.
	Name string `json:"name"`
	// ContextWindow is the context size in tokens; 0 when unknown.
	ContextWindow int `json:"context_window,omitempty"`
	// Input lists the input modalities the model declares. Text is
	// assumed; a modality not listed is treated as unsupported (see
	// harness.Modality): slices.Contains(Input, harness.ModalityImage).
	Input []harness.Modality `json:"input,omitempty"`
}

// Request is one model call.
type Request struct {
	// System is the system prompt.
	System string
	// Messages is the conversation, oldest first.
	Messages []harness.Message
	// Tools are the tools the model may call, in a stable order.
	Tools []Tool
	// Images resolves the image references in Messages; nil when the
	// loop has no attachment store.
	Images ImageSource
	// Output, when set, asks for a final answer that is one JSON value
	// valid against Output.Schema, as the provider can enforce it (a
	// "json_schema" response format, or "json_object" where that is all
	// it takes). The caller validates the answer.
	Output *Output
}

// Output is the shape a structured final answer must have.
type Output struct {
	// Name names the answer's schema for the provider (snake_case,
	// such as "review_result"); empty means "answer".
	Name string
	// Schema is the JSON Schema of the answer, sent as it is.
	Schema json.RawMessage
}

// Tool is a tool as the model is told about it.
type Tool struct {
	// Name is the name the model calls it by.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the arguments, sent as it is.
	Parameters json.RawMessage
}

// ImageSource returns the bytes of a stored image by its digest
// ("sha256:<hex>"), verified against it. Any attachment store of the
// module satisfies it.
type ImageSource interface {
	Get(ctx context.Context, digest string) ([]byte, error)
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
	// ChunkModel names in Text the model that answers, when it is not
	// the one Info names: a wrapper that fell back to another model, a
	// router, a replay of such an answer. It comes before the answer's
	// other chunks; the loop logs and prices the call as that model's.
	// Adapters of one model never send it.
	ChunkModel
)

// Chunk is one piece of a streamed answer.
type Chunk struct {
	Type ChunkType
	Text string
	// Signature, on a reasoning chunk, ends the reasoning block it
	// belongs to and is the block's signature, to be sent back with it
	// unchanged (harness.Block.Signature). With Redacted set, the chunk
	// is a whole reasoning block the provider encrypted: no Text, and
	// Signature holds the encrypted data.
	Signature string
	Redacted  bool
	ToolCall  ToolCallDelta
	Usage     harness.Usage
	Finish    string
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
