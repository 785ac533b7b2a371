package openai

import "encoding/json"

// The request as Chat Completions takes it. Each type is encoded with
// encoding/json (jsonenc.Marshal: compact, <, > and & left as they are);
// the order of the fields is the order of the keys on the wire, which a
// provider's prefix cache sees, so it never changes.

// chatRequest is the body of a request. Messages and Tools are written
// as segments kept from earlier requests (see requestBody): the body is
// encoded with an empty list in their place and cut there.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools,omitempty"`
	ToolChoice          any             `json:"tool_choice,omitempty"` // "auto", "none", "required" or a namedToolChoice
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens           int64           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64           `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Thinking            *thinkingSwitch `json:"thinking,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
}

type namedToolChoice struct {
	Type     string       `json:"type"` // "function"
	Function functionName `json:"function"`
}

type functionName struct {
	Name string `json:"name"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// thinkingSwitch turns thinking on or off where the dialect takes the
// object form.
type thinkingSwitch struct {
	Type string `json:"type"` // "enabled" or "disabled"
}

type responseFormat struct {
	Type       string      `json:"type"` // "json_object" or "json_schema"
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// chatTool is a function the model may call.
type chatTool struct {
	Type     string       `json:"type"` // "function"
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict,omitempty"`
}

// chatMessage is one message; the fields set depend on its role. Content
// is a string, or, for a user message that carries images, a list of
// textPart and imagePart values. ReasoningContent is DeepSeek's field for
// the reasoning an assistant message goes back with.
type chatMessage struct {
	Role             string         `json:"role"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Content          any            `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type textPart struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type imagePart struct {
	Type     string   `json:"type"` // "image_url"
	ImageURL imageURL `json:"image_url"`
}

type imageURL struct {
	URL string `json:"url"`
}
