package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const testKey = "sk-test-0123456789abcdef"

// captured is one request the fake provider received.
type captured struct {
	Header http.Header
	Body   []byte
}

// Messages returns the request's messages as role and text pairs, the
// content of tool calls and results included as JSON.
func (c captured) Messages(t *testing.T) []map[string]any {
	t.Helper()
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(c.Body, &req), "request body: %s", c.Body)
	return req.Messages
}

// Text returns the request's messages as one string, for Contains checks.
func (c captured) Text(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(c.Messages(t))
	require.NoError(t, err)
	return string(b)
}

// reply answers one request.
type reply func(w http.ResponseWriter, r *http.Request)

// provider is a fake OpenAI-compatible endpoint: it answers requests to
// /chat/completions with scripted replies, in order, and records them.
type provider struct {
	srv *httptest.Server

	mu       sync.Mutex
	replies  []reply
	requests []captured
}

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	p := &provider{replies: replies}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// add appends replies to the script.
func (p *provider) add(replies ...reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append(p.replies, replies...)
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.mu.Lock()
	p.requests = append(p.requests, captured{Header: r.Header.Clone(), Body: body})
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
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"the test script has no more replies"}}`)
		return
	}
	rep(w, r)
}

func (p *provider) Requests() []captured {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]captured(nil), p.requests...)
}

// env returns a getenv that points the CLI at the provider, with extra
// "KEY=value" pairs on top.
func (p *provider) env(extra ...string) func(string) string {
	return envOf(append([]string{
		"HARNESS_BASE_URL=" + p.srv.URL,
		"HARNESS_API_KEY=" + testKey,
		"HARNESS_MODEL=test-model",
	}, extra...)...)
}

// envOf returns a getenv over "KEY=value" pairs; nothing else is set.
func envOf(pairs ...string) func(string) string {
	m := map[string]string{}
	for _, kv := range pairs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// sse replies with an event stream of the given chunks, then [DONE], in
// the wire format of OpenAI-compatible providers.
func sse(chunks ...string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range chunks {
			io.WriteString(w, "data: "+c+"\n\n")
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// errorReply replies with an HTTP error in the providers' JSON shape.
func errorReply(status int, body string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// chunk returns a chat.completion.chunk with one choice.
func chunk(delta map[string]any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
		"choices": []any{choice},
	})
}

func role() string {
	return chunk(map[string]any{"role": "assistant", "content": "", "reasoning_content": ""}, "")
}
func text(s string) string { return chunk(map[string]any{"content": s}, "") }
func reasoning(s string) string {
	return chunk(map[string]any{"reasoning_content": s, "content": nil}, "")
}
func finish(reason string) string { return chunk(map[string]any{}, reason) }

// toolCall returns a chunk with one whole tool call.
func toolCall(index int, id, name string, args any) string {
	a, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return chunk(map[string]any{"tool_calls": []any{map[string]any{
		"index": index, "id": id, "type": "function",
		"function": map[string]any{"name": name, "arguments": string(a)},
	}}}, "")
}

// usage returns a final usage chunk with DeepSeek's cache counters.
func usage(prompt, completion, hit int) string {
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
		"choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": prompt - hit,
		},
	})
}

// say replies with a complete text answer.
func say(s string) reply {
	return sse(role(), text(s), finish("stop"), usage(100, 10, 0))
}

// call replies with tool calls.
func call(calls ...string) reply {
	return sse(append(append([]string{role()}, calls...), finish("tool_calls"), usage(100, 10, 0))...)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}

// result is what one run of the CLI did.
type result struct {
	code   int
	stdout string
	stderr string
}

// runCLI runs the program in-process with no interrupts.
func runCLI(t *testing.T, env func(string) string, stdin string, args ...string) result {
	t.Helper()
	return runWith(t, context.Background(), env, strings.NewReader(stdin), nil, args...)
}

func runWith(t *testing.T, ctx context.Context, env func(string) string, stdin io.Reader, interrupts <-chan os.Signal, args ...string) result {
	t.Helper()
	var out, errOut lockedBuffer
	return runTo(ctx, &out, &errOut, env, stdin, interrupts, args...)
}

func runTo(ctx context.Context, out, errOut *lockedBuffer, env func(string) string, stdin io.Reader, interrupts <-chan os.Signal, args ...string) result {
	code := run(ctx, args, env, stdin, out, errOut, interrupts)
	return result{code: code, stdout: cardDurations.ReplaceAllString(out.String(), "$1"), stderr: errOut.String()}
}

// cardDurations matches the duration a card's header shows for a slow
// call; tests drop it, since how slow a call is depends on the machine.
var cardDurations = regexp.MustCompile(`(?m)^([●✗] .*?)(?:  | · )\d+(?:\.\d|m\d\d)s$`)

// waitFor waits until the buffer holds s; it gives up after a minute,
// which only a broken program takes.
func (b *lockedBuffer) waitFor(s string) bool {
	for range 60_000 / 5 {
		if strings.Contains(b.String(), s) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// workspace returns a temporary workspace with the given files.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(dir+"/"+name, []byte(content), 0o644))
	}
	return dir
}

// jsonLines parses stdout of a -json run, one object per line; any line
// that does not parse fails the test.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %d is not JSON: %q", i+1, l)
		require.NotEmpty(t, m["type"], "line %d has no type: %q", i+1, l)
		out = append(out, m)
	}
	return out
}

// sized replies with the chunks and then a usage whose prompt tokens are
// the request's size over four, as real tokenizers roughly count, so the
// loop's context estimate follows the requests' real growth.
func sized(chunks ...string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sse(append(append([]string{role()}, chunks...), usage(len(body)/4, 10, 0))...)(w, r)
	}
}
