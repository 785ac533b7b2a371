// Package anthropictest is a fake Anthropic Messages API endpoint for
// tests, as openaitest is one for the OpenAI format: [NewServer] starts
// an HTTP server on the loopback interface that answers POST
// /v1/messages (under any prefix) with scripted replies and records
// every request, so a test can drive the anthropic adapter, or a whole
// agent loop, without a network and assert on what was sent.
//
// A [Reply] streams a [Message] as Anthropic does, event for event:
// message_start with the input usage, a ping, each content block as
// content_block_start, its deltas (text_delta, thinking_delta then
// signature_delta, input_json_delta starting with an empty piece) and
// content_block_stop, then message_delta with the stop reason and the
// usage, and message_stop. Raw [Event] values add any other shape (an
// error event mid-stream, an unknown event type); Status and Body make an
// error reply with Anthropic's error document; Handler answers with
// anything else.
//
//	srv := anthropictest.NewServer(anthropictest.Reply{Message: &anthropictest.Message{
//		Blocks: []anthropictest.Block{{Thinking: "Greet.", Signature: "sig"}, {Text: "Hello"}},
//		Usage:  anthropictest.Usage{InputTokens: 12, OutputTokens: 3},
//	}})
//	defer srv.Close()
//
// It imports the standard library only.
package anthropictest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Message is an answer streamed as Anthropic streams one.
type Message struct {
	// Model is the model the answer names; empty is "claude-test".
	Model string
	// Blocks are the answer's content blocks, in order.
	Blocks []Block
	// StopReason is the stop reason; empty is "tool_use" when a block
	// is a tool call and "end_turn" otherwise.
	StopReason string
	// Usage is the usage: the input side goes in message_start, the
	// output side in message_delta.
	Usage Usage
	// Split cuts text, thinking and tool input into deltas of at most
	// this many bytes; 0 is 8.
	Split int
	// NoStop leaves message_delta and message_stop out: a stream cut
	// off.
	NoStop bool
}

// Block is one content block: set one of Text, Thinking (with its
// Signature), Redacted, or ToolUse.
type Block struct {
	Text      string
	Thinking  string
	Signature string
	// Redacted is the data of a redacted_thinking block.
	Redacted string
	ToolUse  *ToolUse
}

// ToolUse is a tool call; Input is its arguments as JSON text.
type ToolUse struct {
	ID, Name, Input string
}

// Usage is an answer's token usage as Anthropic reports it.
type Usage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheCreationInputTokens int64
	CacheReadInputTokens     int64
	// ThinkingTokens goes in output_tokens_details when not 0.
	ThinkingTokens int64
}

// Event is one raw server-sent event.
type Event struct {
	Name string
	Data string
}

// ErrorEvent returns an error event as Anthropic sends one mid-stream,
// such as ErrorEvent("overloaded_error", "Overloaded").
func ErrorEvent(typ, message string) Event {
	return Event{Name: "error", Data: mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})}
}

// ErrorBody returns Anthropic's error document.
func ErrorBody(typ, message string) string {
	return mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}, "request_id": "req_test"})
}

// Reply is one scripted answer. The zero Reply is a 200 stream with no
// events.
type Reply struct {
	// Status is the HTTP status; 0 is 200. A reply with a status of 400
	// or more carries retry-after-ms: 1 unless Header sets it, so that a
	// client's retries do not slow the test.
	Status int
	// Header holds response headers to set, such as retry-after.
	Header http.Header
	// Body, when set or when Status is 400 or more, is sent instead of a
	// stream, with Content-Type application/json.
	Body string
	// Message is streamed as Anthropic streams an answer.
	Message *Message
	// Events are streamed as they are, after Message's.
	Events []Event
	// Handler, when set, answers the request instead of everything
	// above.
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
		h.Set("retry-after-ms", "1")
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
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	w.Write([]byte(rep.Stream()))
}

// Stream returns the reply's event stream as it is sent.
func (rep Reply) Stream() string {
	var b strings.Builder
	if rep.Message != nil {
		for _, ev := range rep.Message.Events() {
			writeEvent(&b, ev)
		}
	}
	for _, ev := range rep.Events {
		writeEvent(&b, ev)
	}
	return b.String()
}

func writeEvent(b *strings.Builder, ev Event) {
	if ev.Name != "" {
		fmt.Fprintf(b, "event: %s\n", ev.Name)
	}
	for _, line := range strings.Split(ev.Data, "\n") {
		fmt.Fprintf(b, "data: %s\n", line)
	}
	b.WriteString("\n")
}

// mustJSON encodes the package's own values, which always encode.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Events returns the message's events, in the order Anthropic sends
// them.
func (m *Message) Events() []Event {
	split := m.Split
	if split <= 0 {
		split = 8
	}
	model := m.Model
	if model == "" {
		model = "claude-test"
	}
	ev := func(typ string, fields map[string]any) Event {
		fields["type"] = typ
		return Event{Name: typ, Data: mustJSON(fields)}
	}
	u := m.Usage
	out := []Event{
		ev("message_start", map[string]any{"message": map[string]any{
			"id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": u.InputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens,
				"cache_read_input_tokens": u.CacheReadInputTokens, "output_tokens": 1},
		}}),
		{Name: "ping", Data: `{"type": "ping"}`},
	}
	stop := "end_turn"
	for i, blk := range m.Blocks {
		start := func(cb map[string]any) {
			out = append(out, ev("content_block_start", map[string]any{"index": i, "content_block": cb}))
		}
		delta := func(d map[string]any) {
			out = append(out, ev("content_block_delta", map[string]any{"index": i, "delta": d}))
		}
		switch {
		case blk.ToolUse != nil:
			stop = "tool_use"
			start(map[string]any{"type": "tool_use", "id": blk.ToolUse.ID, "name": blk.ToolUse.Name, "input": map[string]any{}})
			delta(map[string]any{"type": "input_json_delta", "partial_json": ""})
			for _, piece := range pieces(blk.ToolUse.Input, split) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": piece})
			}
		case blk.Redacted != "":
			start(map[string]any{"type": "redacted_thinking", "data": blk.Redacted})
		case blk.Thinking != "" || blk.Signature != "":
			start(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
			for _, piece := range pieces(blk.Thinking, split) {
				delta(map[string]any{"type": "thinking_delta", "thinking": piece})
			}
			if blk.Signature != "" {
				delta(map[string]any{"type": "signature_delta", "signature": blk.Signature})
			}
		default:
			start(map[string]any{"type": "text", "text": ""})
			for _, piece := range pieces(blk.Text, split) {
				delta(map[string]any{"type": "text_delta", "text": piece})
			}
		}
		out = append(out, ev("content_block_stop", map[string]any{"index": i}))
	}
	if m.NoStop {
		return out
	}
	if m.StopReason != "" {
		stop = m.StopReason
	}
	usage := map[string]any{"output_tokens": u.OutputTokens}
	if u.ThinkingTokens != 0 {
		usage["output_tokens_details"] = map[string]any{"thinking_tokens": u.ThinkingTokens}
	}
	out = append(out,
		ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage}),
		ev("message_stop", map[string]any{}),
	)
	return out
}

// pieces cuts s into pieces of at most n bytes, never inside a UTF-8
// sequence.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && s[end]&0xC0 == 0x80 {
			end--
		}
		if end == 0 {
			end = min(n, len(s))
			for end < len(s) && s[end]&0xC0 == 0x80 {
				end++
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// Request is one request the server received.
type Request struct {
	Header http.Header
	Path   string
	Body   []byte
}

// JSON returns the request body decoded, or nil when it is not a JSON
// object.
func (r Request) JSON() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return nil
	}
	return m
}

// Messages returns the request's messages, or nil when it has none.
func (r Request) Messages() []map[string]any {
	var out []map[string]any
	msgs, _ := r.JSON()["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Server is a fake Messages API endpoint. It answers requests to
// /v1/messages (under any prefix) with its scripted replies, in order,
// and records every request. When the script runs out it answers 400
// with an error document; any other path is a 404.
type Server struct {
	// URL is the base URL to give a client ("http://127.0.0.1:port").
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// NewServer starts a server with a script of replies. Close it when the
// test ends.
func NewServer(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down, waiting for requests in flight.
func (s *Server) Close() { s.srv.Close() }

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.requests = append(s.requests, Request{Header: r.Header.Clone(), Path: r.URL.Path, Body: body})
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		s.mu.Unlock()
		Reply{Status: http.StatusNotFound, Body: ErrorBody("not_found_error", "no such path")}.ServeHTTP(w, r)
		return
	}
	if len(s.replies) == 0 {
		s.mu.Unlock()
		Reply{Status: http.StatusBadRequest, Body: ErrorBody("invalid_request_error", "the test script has no more replies")}.ServeHTTP(w, r)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	rep.ServeHTTP(w, r)
}
