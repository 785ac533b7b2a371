package anthropictest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent/anthropic/anthropictest"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func TestMessageEvents(t *testing.T) {
	m := anthropictest.Message{Blocks: []anthropictest.Block{
		{Thinking: "héllo wörld", Signature: "sig"},
		{Redacted: "data"},
		{Text: "hi"},
		{ToolUse: &anthropictest.ToolUse{ID: "t1", Name: "ls", Input: `{"a":1}`}},
	}, Split: 3, Usage: anthropictest.Usage{InputTokens: 1, OutputTokens: 2, ThinkingTokens: 1}}
	var names []string
	for _, ev := range m.Events() {
		names = append(names, ev.Name)
	}
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)
	stream := anthropictest.Reply{Message: &m}.Stream()
	assert.Contains(t, stream, `"stop_reason":"tool_use"`)
	assert.Contains(t, stream, `"thinking":"hé"`, "pieces never split a UTF-8 sequence")
	assert.Contains(t, stream, `"output_tokens_details":{"thinking_tokens":1}`)
	assert.Contains(t, stream, `"partial_json":""`, "the first input piece is empty, as Anthropic sends it")
}

func TestServer(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Reply{Message: &anthropictest.Message{Blocks: []anthropictest.Block{{Text: "ok"}}}},
		anthropictest.Reply{Status: 529, Body: anthropictest.ErrorBody("overloaded_error", "Overloaded")},
	)
	defer srv.Close()
	resp, body := post(t, srv.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(body, "event: message_start\ndata: "))
	assert.True(t, strings.HasSuffix(body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	resp, body = post(t, srv.URL+"/anthropic/v1/messages", `{}`)
	assert.Equal(t, 529, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("retry-after-ms"))
	assert.Contains(t, body, `"type":"overloaded_error"`)
	resp, _ = post(t, srv.URL+"/v1/messages", `{}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the script ran out")
	resp, _ = post(t, srv.URL+"/elsewhere", `{}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, "m", reqs[0].JSON()["model"])
	assert.Equal(t, []map[string]any{{"role": "user", "content": "hi"}}, reqs[0].Messages())
	assert.Equal(t, "/anthropic/v1/messages", reqs[1].Path)

	ev := anthropictest.ErrorEvent("api_error", "boom")
	assert.Equal(t, "error", ev.Name)
	assert.JSONEq(t, `{"type":"error","error":{"type":"api_error","message":"boom"}}`, ev.Data)
}
