package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// Reply is one scripted answer, given as a struct literal: the zero Reply
// is a 200 stream with no chunks. Chunks make a streamed answer, Body a
// JSON one (a non-streamed completion, or an error document with a
// Status of 400 or more), Handler anything else.
//
//	openaitest.Reply{Chunks: []openaitest.Chunk{{Text: "Hello"}, {Finish: "stop"}}}
//	openaitest.Reply{Status: 429, Body: `{"error":{"message":"slow down"}}`,
//		Header: http.Header{"Retry-After": {"2"}}}
//
// A Reply is an http.Handler, so a test's own handler can answer with
// one.
type Reply struct {
	// Status is the HTTP status; 0 is 200. A reply with a status of 400
	// or more carries Retry-After-Ms: 1, so that a client's retries of a
	// 429 or 5xx do not slow the test, unless Header sets it.
	Status int
	// Header holds response headers to set, such as Retry-After.
	Header http.Header
	// Chunks are streamed as server-sent events (text/event-stream), one
	// chat.completion.chunk each, followed by [DONE].
	Chunks []Chunk
	// Body, when set or when Status is 400 or more, is sent instead of a
	// stream, as it is, with Content-Type application/json.
	Body string
	// Handler, when set, answers the request instead of everything
	// above: a stream cut off before [DONE], one that stalls, a header a
	// test needs to see arrive late.
	Handler http.HandlerFunc
}

// ServeHTTP writes the reply.
func (rep Reply) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rep.Handler != nil {
		rep.Handler(w, r)
		return
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	h := w.Header()
	if status >= 400 {
		h.Set("Retry-After-Ms", "1")
	}
	for k, vs := range rep.Header {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if rep.Body != "" || status >= 400 {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
		return
	}
	var b bytes.Buffer
	for _, c := range rep.Chunks {
		b.WriteString("data: ")
		b.WriteString(c.data())
		b.WriteString("\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// Chunk is one event of a streamed answer: a chat.completion.chunk as
// DeepSeek and OpenAI send it, with one choice whose delta holds what is
// set of Text, Reasoning and ToolCall, and whose finish reason is Finish
// (null when empty). A chunk with Usage carries it at the top level, as
// the last chunk of a stream does, with no choice unless another field is
// set too.
type Chunk struct {
	// Text is a piece of the answer ("content").
	Text string
	// Reasoning is a piece of reasoning ("reasoning_content", DeepSeek's
	// spelling); "content" is then null unless Text is set.
	Reasoning string
	// ToolCall is a tool call or one piece of it: the first piece carries
	// the ID and the Name, later ones leave them empty and carry more of
	// the Arguments (raw JSON text).
	ToolCall *model.ToolCallDelta
	// Finish is the finish reason: "stop", "tool_calls", "length",
	// "content_filter", ...
	Finish string
	// Usage is the token usage, sent as DeepSeek reports it: prompt and
	// completion tokens, the prompt cache's hits and misses, and the
	// reasoning tokens.
	Usage *harness.Usage
	// Raw, when set, is the event's data exactly as given, the fields
	// above ignored: a chunk of some other shape, an error event, a
	// malformed line.
	Raw string
}

// data is the event's data: the chunk as JSON.
func (c Chunk) data() string {
	if c.Raw != "" {
		return c.Raw
	}
	out := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model"}
	delta := map[string]any{}
	if c.Text != "" {
		delta["content"] = c.Text
	}
	if c.Reasoning != "" {
		delta["reasoning_content"] = c.Reasoning
		if c.Text == "" {
			delta["content"] = nil
		}
	}
	if tc := c.ToolCall; tc != nil {
		fn := map[string]any{"arguments": tc.Arguments}
		call := map[string]any{"index": tc.Index, "function": fn}
		if tc.ID != "" {
			call["id"] = tc.ID
			call["type"] = "function"
		}
		if tc.Name != "" {
			fn["name"] = tc.Name
		}
		delta["tool_calls"] = []any{call}
	}
	choices := []any{}
	if len(delta) > 0 || c.Finish != "" || c.Usage == nil {
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
		if c.Finish != "" {
			choice["finish_reason"] = c.Finish
		}
		choices = append(choices, choice)
	}
	out["choices"] = choices
	if u := c.Usage; u != nil {
		out["usage"] = map[string]any{
			"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
			"prompt_cache_hit_tokens": u.CacheHitTokens, "prompt_cache_miss_tokens": u.CacheMissTokens,
			"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
		}
	}
	b, err := json.Marshal(out)
	if err != nil { // maps of strings and numbers always encode
		return fmt.Sprintf("%q", err.Error())
	}
	return string(b)
}
