package openaitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent/openai/openaitest"
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

func TestServerScript(t *testing.T) {
	srv := openaitest.NewServer(openaitest.SSE(openaitest.Text("a")))
	defer srv.Close()

	resp, body := post(t, srv.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "data: "+openaitest.Text("a")+"\n\ndata: [DONE]\n\n", body)

	resp, body = post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the script ran out")
	assert.Contains(t, body, "no more replies")

	srv.Add(openaitest.JSON(`{"ok":true}`))
	resp, body = post(t, srv.URL+"/elsewhere", `{}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, body = post(t, srv.URL+"/chat/completions", `not json`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `{"ok":true}`, body)

	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, "/chat/completions", reqs[0].Path)
	assert.Equal(t, "m", reqs[0].JSON()["model"])
	assert.Equal(t, []map[string]any{{"role": "user", "content": "hi"}}, reqs[0].Messages())
	assert.Equal(t, "application/json", reqs[0].Header.Get("Content-Type"))
	assert.Equal(t, "/elsewhere", reqs[2].Path)
	assert.Nil(t, reqs[3].JSON(), "a body that is not JSON")
	assert.Nil(t, reqs[3].Messages())
}

func TestErrorReply(t *testing.T) {
	srv := openaitest.NewServer(
		openaitest.Error(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`, "Retry-After", "2"),
		openaitest.Error(http.StatusServiceUnavailable, `{}`, "Retry-After-Ms", "40"),
	)
	defer srv.Close()
	resp, body := post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Equal(t, "1", resp.Header.Get("Retry-After-Ms"))
	assert.Equal(t, `{"error":{"message":"slow down"}}`, body)
	resp, _ = post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, "40", resp.Header.Get("Retry-After-Ms"), "a header pair overrides the default")
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), s)
	return m
}

func delta(t *testing.T, s string) (map[string]any, any) {
	t.Helper()
	choice := decode(t, s)["choices"].([]any)[0].(map[string]any)
	return choice["delta"].(map[string]any), choice["finish_reason"]
}

func TestChunks(t *testing.T) {
	d, fin := delta(t, openaitest.Text("hi"))
	assert.Equal(t, map[string]any{"content": "hi"}, d)
	assert.Nil(t, fin)

	d, _ = delta(t, openaitest.Reasoning("think"))
	assert.Equal(t, map[string]any{"reasoning_content": "think", "content": nil}, d)

	d, _ = delta(t, openaitest.Chunk(map[string]any{"role": "assistant", "content": ""}, ""))
	assert.Equal(t, "assistant", d["role"])

	_, fin = delta(t, openaitest.Finish("tool_calls"))
	assert.Equal(t, "tool_calls", fin)

	d, _ = delta(t, openaitest.ToolCall(1, "call_1", "read", map[string]string{"file_path": "a"}))
	assert.Equal(t, []any{map[string]any{
		"index": 1.0, "id": "call_1", "type": "function",
		"function": map[string]any{"name": "read", "arguments": `{"file_path":"a"}`},
	}}, d["tool_calls"])
	d, _ = delta(t, openaitest.ToolCall(1, "", "", `"}`))
	assert.Equal(t, []any{map[string]any{"index": 1.0, "function": map[string]any{"arguments": `"}`}}}, d["tool_calls"])

	u := decode(t, openaitest.Usage(10, 5, 4, 6, 2))
	assert.Empty(t, u["choices"])
	assert.Equal(t, map[string]any{
		"prompt_tokens": 10.0, "completion_tokens": 5.0, "total_tokens": 15.0,
		"prompt_cache_hit_tokens": 4.0, "prompt_cache_miss_tokens": 6.0,
		"completion_tokens_details": map[string]any{"reasoning_tokens": 2.0},
	}, u["usage"])
}
