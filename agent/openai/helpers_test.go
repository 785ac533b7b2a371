package openai_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

const testKey = "sk-test-0123456789abcdef"

// captured is one request the fake provider received.
type captured struct {
	Header http.Header
	Path   string
	Body   []byte
}

// JSON decodes the request body.
func (c captured) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(c.Body, &m), "request body: %s", c.Body)
	return m
}

// Messages returns the request's messages.
func (c captured) Messages(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range c.JSON(t)["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// reply answers one request.
type reply func(w http.ResponseWriter, r *http.Request)

// provider is a fake OpenAI-compatible endpoint that answers requests
// with scripted replies, in order, and records them.
type provider struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	replies  []reply
	requests []captured
}

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	p := &provider{t: t, replies: replies}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.requests = append(p.requests, captured{Header: r.Header.Clone(), Path: r.URL.Path, Body: body})
	var rep reply
	if len(p.replies) > 0 {
		rep, p.replies = p.replies[0], p.replies[1:]
	}
	p.mu.Unlock()
	if r.URL.Path != "/chat/completions" {
		http.Error(w, `{"error":{"message":"no such path"}}`, http.StatusNotFound)
		return
	}
	if rep == nil {
		w.Header().Set("Retry-After-Ms", "1")
		http.Error(w, `{"error":{"message":"the script has no more replies"}}`, http.StatusTeapot)
		return
	}
	rep(w, r)
}

func (p *provider) Requests() []captured {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]captured(nil), p.requests...)
}

// model returns a model on the fake provider, its idle connections closed
// when the test ends.
func (p *provider) model(opts ...openai.Option) *openai.Model {
	p.t.Helper()
	m, err := openai.New(p.srv.URL, testKey, "deepseek-flash", opts...)
	require.NoError(p.t, err)
	p.t.Cleanup(m.CloseIdleConnections)
	return m
}

// sse replies with an event stream of the given chunks, then [DONE].
func sse(chunks ...string) reply {
	return sseRaw(streamBody(chunks...) + "data: [DONE]\n\n")
}

// sseRaw replies with an event stream whose body is raw.
func sseRaw(raw string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, raw)
	}
}

func streamBody(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

// errorReply replies with status and body; Retry-After-Ms keeps retrying
// tests fast.
func errorReply(status int, body string, headers ...string) reply {
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

// chunk returns a chat.completion.chunk with one choice whose delta is
// delta and whose finish reason is finish ("" for null).
func chunk(delta map[string]any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "deepseek-flash",
		"choices": []any{choice},
	})
}

func text(s string) string { return chunk(map[string]any{"content": s}, "") }
func reasoning(s string) string {
	return chunk(map[string]any{"reasoning_content": s, "content": nil}, "")
}
func finish(reason string) string {
	return chunk(map[string]any{}, reason)
}

// role is the first chunk DeepSeek sends: the role, empty content and
// an empty reasoning piece.
func role() string {
	return chunk(map[string]any{"role": "assistant", "content": "", "reasoning_content": ""}, "")
}

// toolDelta returns a chunk with one tool-call piece; id and name may be
// empty on later pieces.
func toolDelta(index int, id, name, args string) string {
	tc := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		tc["id"] = id
		tc["type"] = "function"
	}
	if name != "" {
		tc["function"].(map[string]any)["name"] = name
	}
	return chunk(map[string]any{"tool_calls": []any{tc}}, "")
}

// usage returns DeepSeek's final usage chunk (no choices).
func usage(prompt, completion, hit, miss, reasoningTokens int) string {
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "deepseek-flash",
		"choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss,
			"completion_tokens_details": map[string]any{"reasoning_tokens": reasoningTokens},
		},
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}

// drain runs one Stream call and returns its chunks and error; it fails
// the test if anything follows an error or the finish chunk.
func drain(t *testing.T, m agent.Model, ctx context.Context, req *agent.Request) ([]agent.Chunk, error) {
	t.Helper()
	var out []agent.Chunk
	var failed error
	for c, err := range m.Stream(ctx, req) {
		require.Nil(t, failed, "nothing may follow an error")
		if err != nil {
			failed = err
			continue
		}
		if len(out) > 0 {
			require.NotEqual(t, agent.ChunkFinish, out[len(out)-1].Type, "the finish chunk is last")
		}
		out = append(out, c)
	}
	return out, failed
}

// assemble joins chunks the way the loop does.
func assemble(chunks []agent.Chunk) *agent.Assembler {
	a := &agent.Assembler{}
	for _, c := range chunks {
		a.Add(c)
	}
	return a
}

func userText(s string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.Block{session.TextBlock(s)}}
}

func modelErr(t *testing.T, err error) *agent.ModelError {
	t.Helper()
	require.Error(t, err)
	me, ok := err.(*agent.ModelError)
	require.True(t, ok, "want *agent.ModelError, got %T: %v", err, err)
	return me
}

// memAttachments is an in-memory tools.AttachmentStore.
type memAttachments struct {
	mu   sync.Mutex
	data map[string][]byte
}

func newAttachments() *memAttachments { return &memAttachments{data: map[string][]byte{}} }

func (s *memAttachments) Put(ctx context.Context, b []byte) (string, error) {
	sum := sha256.Sum256(b)
	d := "sha256:" + hex.EncodeToString(sum[:])
	s.mu.Lock()
	s.data[d] = append([]byte(nil), b...)
	s.mu.Unlock()
	return d, nil
}

func (s *memAttachments) Get(ctx context.Context, digest string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[digest]
	if !ok {
		return nil, fmt.Errorf("attachment %s not found", digest)
	}
	return append([]byte(nil), b...), nil
}

var _ tools.AttachmentStore = (*memAttachments)(nil)

// jsonReply replies with a JSON document, as a non-streaming endpoint
// does.
func jsonReply(body string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// completion returns a non-streamed chat.completion with reasoning, text
// and tool calls ({id, name, arguments}).
func completion(reasoningText, content, finish string, calls [][3]string) string {
	msg := map[string]any{"role": "assistant", "content": content}
	if reasoningText != "" {
		msg["reasoning_content"] = reasoningText
	}
	if len(calls) > 0 {
		var tcs []any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
		}
		msg["tool_calls"] = tcs
	}
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "deepseek-flash",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
			"prompt_cache_hit_tokens": 4, "prompt_cache_miss_tokens": 6},
	})
}
