package openai_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/tools"
)

const testKey = "sk-test-0123456789abcdef"

// model returns deepseek-flash on the fake provider, configured by cfg
// (at most one) with the base URL, key and model id filled in, its idle
// connections closed when the test ends.
func (p *provider) model(cfg ...openai.Config) model.Model {
	p.t.Helper()
	return p.modelNamed("deepseek-flash", cfg...)
}

// modelNamed is model with the model id id.
func (p *provider) modelNamed(id string, cfg ...openai.Config) model.Model {
	p.t.Helper()
	var c openai.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.BaseURL, c.APIKey, c.Model = p.URL(), testKey, id
	m, err := openai.New(c)
	require.NoError(p.t, err)
	p.t.Cleanup(func() { openai.CloseIdle(m) })
	return m
}

// drain runs one Stream call and returns its chunks and error; it fails
// the test if anything follows an error or the finish chunk.
func drain(t *testing.T, m model.Model, ctx context.Context, req *model.Request) ([]model.Chunk, error) {
	t.Helper()
	var out []model.Chunk
	var failed error
	for c, err := range m.Stream(ctx, req) {
		require.Nil(t, failed, "nothing may follow an error")
		if err != nil {
			failed = err
			continue
		}
		if len(out) > 0 {
			require.NotEqual(t, model.ChunkFinish, out[len(out)-1].Type, "the finish chunk is last")
		}
		out = append(out, c)
	}
	return out, failed
}

// joinChunks joins chunks the way the loop does.
func joinChunks(chunks []model.Chunk) *model.Assembler {
	a := &model.Assembler{}
	for _, c := range chunks {
		a.Add(c)
	}
	return a
}

func userText(s string) harness.Message {
	return harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(s)}}
}

// modelFailure is what a test reads of a model error.
type modelFailure struct {
	Code       harness.Code
	Message    string
	Status     int
	RetryAfter time.Duration
	err        *harness.Error
}

func (f modelFailure) Error() string { return f.err.Error() }

// Retryable reports whether the loop retries the failure: its code is one
// the agent package's retry rule (and the model package's doc) names.
func (f modelFailure) Retryable() bool {
	switch f.Code {
	case harness.CodeRateLimit, harness.CodeServer, harness.CodeTransport,
		harness.CodeEmptyResponse, harness.CodeTruncatedStream:
		return true
	}
	return false
}

// modelErr requires err to be a model error (a *harness.Error, not
// wrapped) and returns what it says, its provider detail included.
func modelErr(t *testing.T, err error) modelFailure {
	t.Helper()
	require.Error(t, err)
	he, ok := err.(*harness.Error)
	require.True(t, ok, "want a *harness.Error, got %T: %v", err, err)
	f := modelFailure{Code: he.Code, Message: he.Message, err: he}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		f.Status, f.RetryAfter = pe.Status, pe.RetryAfter
	}
	return f
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

// The fake provider and the wire-format builders live in
// agent/openai/openaitest; these names keep the tests short.
type (
	reply = openaitest.Reply
	chunk = openaitest.Chunk
)

// provider is the fake endpoint with the adapter's test helpers.
type provider struct {
	*openaitest.Server
	t *testing.T
}

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	srv := openaitest.NewServer(replies...)
	t.Cleanup(srv.Close)
	return &provider{Server: srv, t: t}
}

// captured is a recorded request with the checks these tests use.
type captured struct{ openaitest.Request }

// JSON decodes the request body, failing the test if it is not a JSON
// object.
func (r captured) JSON(t testing.TB) map[string]any {
	t.Helper()
	m := r.Request.JSON()
	if m == nil {
		t.Fatalf("request body is not a JSON object: %s", r.Body)
	}
	return m
}

// Messages returns the request's messages.
func (r captured) Messages(t testing.TB) []map[string]any {
	t.Helper()
	r.JSON(t)
	return r.Request.Messages()
}

// Text returns the request's messages encoded as one string, for
// Contains checks.
func (r captured) Text(t testing.TB) string {
	t.Helper()
	b, err := json.Marshal(r.Messages(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// URL is the base URL to give the adapter.
func (p *provider) URL() string { return p.Server.URL }

// Requests returns the requests received so far, oldest first.
func (p *provider) Requests() []captured {
	var out []captured
	for _, r := range p.Server.Requests() {
		out = append(out, captured{r})
	}
	return out
}

// streamBody returns the SSE lines of the chunks, without [DONE]: the
// stream a Reply with these chunks sends.
func streamBody(chunks ...openaitest.Chunk) string {
	rec := httptest.NewRecorder()
	openaitest.Reply{Chunks: chunks}.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/chat/completions", nil))
	return strings.TrimSuffix(rec.Body.String(), "data: [DONE]\n\n")
}

// mustJSON encodes v, a fixture that always encodes.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// The chunk and reply builders these tests use, over openaitest's
// struct literals.
func sse(chunks ...openaitest.Chunk) reply { return reply{Chunks: chunks} }

// sseRaw sends raw as the whole event stream.
func sseRaw(raw string) reply {
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, raw)
	}}
}

// errorReply replies status with body and header name/value pairs.
func errorReply(status int, body string, headers ...string) reply {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return reply{Status: status, Body: body, Header: h}
}

func jsonReply(body string) reply           { return reply{Body: body} }
func raw(data string) openaitest.Chunk      { return openaitest.Chunk{Raw: data} }
func text(s string) openaitest.Chunk        { return openaitest.Chunk{Text: s} }
func reasoning(s string) openaitest.Chunk   { return openaitest.Chunk{Reasoning: s} }
func finish(reason string) openaitest.Chunk { return openaitest.Chunk{Finish: reason} }
func role() openaitest.Chunk {
	return raw(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":""},"finish_reason":null}]}`)
}

func toolDelta(index int, id, name, args string) openaitest.Chunk {
	return openaitest.Chunk{ToolCall: &model.ToolCallDelta{Index: index, ID: id, Name: name, Arguments: args}}
}

func usage(prompt, completion, hit, miss, reasoning int) openaitest.Chunk {
	return openaitest.Chunk{Usage: &harness.Usage{InputTokens: int64(prompt), OutputTokens: int64(completion),
		CacheHitTokens: int64(hit), CacheMissTokens: int64(miss), ReasoningTokens: int64(reasoning)}}
}
