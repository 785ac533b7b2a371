package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is one request the server received.
type Request struct {
	Header http.Header
	Path   string
	Body   []byte
}

// JSON decodes the request body, failing the test if it is not JSON.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, r.Body)
	}
	return m
}

// Messages returns the request's messages.
func (r Request) Messages(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	msgs, _ := r.JSON(t)["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Text returns the request's messages encoded as one string, for Contains
// checks.
func (r Request) Text(t testing.TB) string {
	t.Helper()
	b, err := json.Marshal(r.Messages(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Reply answers one request.
type Reply func(w http.ResponseWriter, r *http.Request)

// Server is a fake OpenAI-compatible endpoint. It answers requests to
// /chat/completions with its scripted replies, in order, and records every
// request. When the script runs out it answers 400 with a JSON error, so a
// test that makes one call too many fails clearly instead of retrying.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// New starts a server, closed when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to give the adapter.
func (s *Server) URL() string { return s.srv.URL }

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
	var rep Reply
	if len(s.replies) > 0 {
		rep, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if r.URL.Path != "/chat/completions" {
		Error(http.StatusNotFound, `{"error":{"message":"no such path"}}`)(w, r)
		return
	}
	if rep == nil {
		Error(http.StatusBadRequest, `{"error":{"message":"the test script has no more replies"}}`)(w, r)
		return
	}
	rep(w, r)
}

// SSE replies with an event stream of the chunks, then [DONE].
func SSE(chunks ...string) Reply { return SSERaw(StreamBody(chunks...) + "data: [DONE]\n\n") }

// SSERaw replies with an event stream whose body is raw.
func SSERaw(raw string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, raw)
	}
}

// StreamBody returns the SSE lines of the chunks, without [DONE].
func StreamBody(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

// Error replies with status and body, plus header name/value pairs.
// Retry-After-Ms: 1 keeps retrying tests fast.
func Error(status int, body string, headers ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "1")
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// JSON replies with a JSON document, as a non-streaming endpoint does.
func JSON(body string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// Model is the model name the builders put in chunks.
const Model = "test-model"

// Chunk returns a chat.completion.chunk with one choice whose delta is
// delta and whose finish reason is finish ("" for null).
func Chunk(delta any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	return MustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": Model,
		"choices": []any{choice},
	})
}

// Role is the first chunk DeepSeek sends: the role, empty content and an
// empty reasoning piece.
func Role() string {
	return Chunk(map[string]any{"role": "assistant", "content": "", "reasoning_content": ""}, "")
}

// Text is a chunk with a piece of answer text.
func Text(s string) string { return Chunk(map[string]any{"content": s}, "") }

// Reasoning is a chunk with a piece of reasoning.
func Reasoning(s string) string {
	return Chunk(map[string]any{"reasoning_content": s, "content": nil}, "")
}

// Finish is a chunk with only a finish reason.
func Finish(reason string) string { return Chunk(map[string]any{}, reason) }

// ToolDelta is a chunk with one tool-call piece; id and name may be empty
// on later pieces.
func ToolDelta(index int, id, name, args string) string {
	tc := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		tc["id"] = id
		tc["type"] = "function"
	}
	if name != "" {
		tc["function"].(map[string]any)["name"] = name
	}
	return Chunk(map[string]any{"tool_calls": []any{tc}}, "")
}

// ToolCall is a chunk with one whole tool call, args encoded as JSON.
func ToolCall(index int, id, name string, args any) string {
	return ToolDelta(index, id, name, MustJSON(args))
}

// Usage is DeepSeek's final usage chunk (no choices), with its cache
// counters and reasoning tokens.
func Usage(prompt, completion, hit, miss, reasoning int) string {
	return MustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": Model,
		"choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss,
			"completion_tokens_details": map[string]any{"reasoning_tokens": reasoning},
		},
	})
}

// MustJSON encodes v; it is for test fixtures, where v always encodes.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return string(b)
}
