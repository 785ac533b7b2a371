package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai/openaitest"
)

const testKey = "sk-test-0123456789abcdef"

// env returns a getenv that points the CLI at the provider, with extra
// "KEY=value" pairs on top.
func (p *provider) env(extra ...string) func(string) string {
	return envOf(append([]string{
		"HARNESS_BASE_URL=" + p.URL(),
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

// say replies with a complete text answer.
func say(s string) reply {
	return sse(role(), text(s), finish("stop"), usage(100, 10, 0))
}

// call replies with tool calls.
func call(calls ...string) reply {
	return sse(append(append([]string{role()}, calls...), finish("tool_calls"), usage(100, 10, 0))...)
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
	if !slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "-permission-mode") || a == "-approve" || a == "-reject"
	}) {
		// Tests of other features run their calls without questions;
		// the permission tests say what they want.
		args = append([]string{"-permission-mode", "bypass"}, args...)
	}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-diagnostics") }) {
		// A language server takes seconds to load a workspace: only the
		// tests of diagnostics start one.
		args = append([]string{"-diagnostics=false"}, args...)
	}
	code := run(ctx, args, env, stdin, out, errOut, signals{interrupts: interrupts})
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
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sse(append(append([]string{role()}, chunks...), usage(len(body)/4, 10, 0))...).ServeHTTP(w, r)
	}}
}

// The fake provider and the wire-format builders live in
// agent/openai/openaitest; these names keep the tests short.
type reply = openaitest.Reply

// provider is the fake endpoint with the CLI's test helpers.
type provider struct{ *openaitest.Server }

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	srv := openaitest.NewServer(replies...)
	t.Cleanup(srv.Close)
	return &provider{srv}
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

// mustJSON encodes v, a fixture that always encodes.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (p *provider) add(replies ...reply) { p.Add(replies...) }

// The tests write chunks as the JSON the stream carries, so that they
// can also write streams of their own; sse sends such chunks as they are.
func sse(chunks ...string) reply {
	var r reply
	for _, c := range chunks {
		r.Chunks = append(r.Chunks, openaitest.Chunk{Raw: c})
	}
	return r
}

func errorReply(status int, body string) reply { return reply{Status: status, Body: body} }

// wire returns c as a stream carries it: the data of its event.
func wire(c openaitest.Chunk) string {
	rec := httptest.NewRecorder()
	openaitest.Reply{Chunks: []openaitest.Chunk{c}}.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/chat/completions", nil))
	data, _, _ := strings.Cut(strings.TrimPrefix(rec.Body.String(), "data: "), "\n\n")
	return data
}

// role is the opening chunk DeepSeek sends.
func role() string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":""},"finish_reason":null}]}`
}

func text(s string) string        { return wire(openaitest.Chunk{Text: s}) }
func reasoning(s string) string   { return wire(openaitest.Chunk{Reasoning: s}) }
func finish(reason string) string { return wire(openaitest.Chunk{Finish: reason}) }

// toolCall is a chunk with a whole call, its arguments args encoded as
// JSON, or a piece of one when args is a string (the raw argument text).
func toolCall(index int, id, name string, args any) string {
	raw, ok := args.(string)
	if !ok {
		raw = mustJSON(args)
	}
	return wire(openaitest.Chunk{ToolCall: &model.ToolCallDelta{Index: index, ID: id, Name: name, Arguments: raw}})
}

// usage is a final usage chunk with DeepSeek's cache counters.
func usage(prompt, completion, hit int) string {
	return wire(openaitest.Chunk{Usage: &harness.Usage{InputTokens: int64(prompt), OutputTokens: int64(completion),
		CacheHitTokens: int64(hit), CacheMissTokens: int64(prompt - hit)}})
}
