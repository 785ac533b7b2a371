package openaitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
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
	srv := openaitest.NewServer(openaitest.Reply{Chunks: []openaitest.Chunk{{Raw: `{"x":1}`}, {Raw: `{"y":2}`}}})
	defer srv.Close()

	resp, body := post(t, srv.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "data: {\"x\":1}\n\ndata: {\"y\":2}\n\ndata: [DONE]\n\n", body)

	resp, body = post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the script ran out")
	assert.Contains(t, body, "no more replies")

	srv.Add(openaitest.Reply{Body: `{"ok":true}`})
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
		openaitest.Reply{Status: http.StatusTooManyRequests, Body: `{"error":{"message":"slow down"}}`, Header: http.Header{"Retry-After": {"2"}}},
		openaitest.Reply{Status: http.StatusServiceUnavailable, Body: `{}`, Header: http.Header{"Retry-After-Ms": {"40"}}},
		openaitest.Reply{Status: http.StatusBadGateway},
	)
	defer srv.Close()
	resp, body := post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Equal(t, "1", resp.Header.Get("Retry-After-Ms"))
	assert.Equal(t, `{"error":{"message":"slow down"}}`, body)
	resp, _ = post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, "40", resp.Header.Get("Retry-After-Ms"), "Header overrides the default")
	resp, body = post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), "an error status is never a stream")
	assert.Empty(t, body)
}

func TestHandlerReply(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"cut")
	}})
	defer srv.Close()
	resp, body := post(t, srv.URL+"/chat/completions", `{}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `data: {"cut`, body)
}

// events returns the data of each event of a reply's stream, [DONE]
// excluded.
func events(t *testing.T, chunks ...openaitest.Chunk) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	openaitest.Reply{Chunks: chunks}.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/chat/completions", nil))
	body, ok := strings.CutSuffix(rec.Body.String(), "data: [DONE]\n\n")
	require.True(t, ok, "the stream ends with [DONE]: %q", rec.Body.String())
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		d, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, ev)
		out = append(out, d)
	}
	return out
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
	ev := events(t,
		openaitest.Chunk{Text: "hi"},
		openaitest.Chunk{Reasoning: "think"},
		openaitest.Chunk{Finish: "tool_calls"},
		openaitest.Chunk{ToolCall: &model.ToolCallDelta{Index: 1, ID: "call_1", Name: "read", Arguments: `{"file_path":"a"}`}},
		openaitest.Chunk{ToolCall: &model.ToolCallDelta{Index: 1, Arguments: `"}`}},
		openaitest.Chunk{Usage: &harness.Usage{InputTokens: 10, OutputTokens: 5, CacheHitTokens: 4, CacheMissTokens: 6, ReasoningTokens: 2}},
		openaitest.Chunk{Text: "end", Finish: "stop", Usage: &harness.Usage{InputTokens: 1}},
		openaitest.Chunk{},
		openaitest.Chunk{Raw: `{"error":{"message":"x"}}`, Text: "ignored"},
	)
	require.Len(t, ev, 9)
	c := decode(t, ev[0])
	assert.Equal(t, "chat.completion.chunk", c["object"])
	assert.Equal(t, "test-model", c["model"])
	d, fin := delta(t, ev[0])
	assert.Equal(t, map[string]any{"content": "hi"}, d)
	assert.Nil(t, fin)

	d, _ = delta(t, ev[1])
	assert.Equal(t, map[string]any{"reasoning_content": "think", "content": nil}, d)

	d, fin = delta(t, ev[2])
	assert.Empty(t, d)
	assert.Equal(t, "tool_calls", fin)

	d, _ = delta(t, ev[3])
	assert.Equal(t, []any{map[string]any{
		"index": 1.0, "id": "call_1", "type": "function",
		"function": map[string]any{"name": "read", "arguments": `{"file_path":"a"}`},
	}}, d["tool_calls"])
	d, _ = delta(t, ev[4])
	assert.Equal(t, []any{map[string]any{"index": 1.0, "function": map[string]any{"arguments": `"}`}}}, d["tool_calls"])

	d, fin = delta(t, ev[6])
	assert.Equal(t, map[string]any{"content": "end"}, d, "usage beside a choice")
	assert.Equal(t, "stop", fin)
	assert.Equal(t, 1.0, decode(t, ev[6])["usage"].(map[string]any)["prompt_tokens"])

	d, fin = delta(t, ev[7])
	assert.Empty(t, d, "the zero chunk is an empty delta")
	assert.Nil(t, fin)
	assert.Equal(t, `{"error":{"message":"x"}}`, ev[8], "Raw is sent as it is")

	u := decode(t, ev[5])
	assert.Empty(t, u["choices"])
	assert.Equal(t, map[string]any{
		"prompt_tokens": 10.0, "completion_tokens": 5.0, "total_tokens": 15.0,
		"prompt_cache_hit_tokens": 4.0, "prompt_cache_miss_tokens": 6.0,
		"completion_tokens_details": map[string]any{"reasoning_tokens": 2.0},
	}, u["usage"])
}

// DeepSeek answers 400 with DeepSeek's message for each broken rule,
// and passes a request that keeps them all on to its reply.
func TestDeepSeekRules(t *testing.T) {
	strictTool := func(prop string) string {
		return `{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object","properties":{"v":` + prop + `},"required":["v"],"additionalProperties":false}}}`
	}
	for name, tc := range map[string]struct{ path, body, want string }{
		"ok":                    {"/chat/completions", `{"model":"deepseek-flash","messages":[{"role":"user","content":"hi"}]}`, ""},
		"legacy id":             {"/chat/completions", `{"model":"deepseek-v4-flash-vision-exp","messages":[]}`, ""},
		"retired id":            {"/chat/completions", `{"model":"deepseek-chat","messages":[]}`, "Model Not Exist"},
		"forced tool":           {"/chat/completions", `{"model":"deepseek-flash","messages":[],"tool_choice":"required"}`, "Thinking mode does not support this tool_choice"},
		"named tool":            {"/chat/completions", `{"model":"deepseek-flash","messages":[],"tool_choice":{"type":"function","function":{"name":"f"}},"thinking":{"type":"enabled"}}`, "Thinking mode does not support"},
		"forced, thinking off":  {"/chat/completions", `{"model":"deepseek-flash","messages":[],"tool_choice":"required","thinking":{"type":"disabled"}}`, ""},
		"effort":                {"/chat/completions", `{"model":"deepseek-flash","messages":[],"reasoning_effort":"extreme"}`, "Invalid reasoning_effort"},
		"effort ultra":          {"/chat/completions", `{"model":"deepseek-flash","messages":[],"reasoning_effort":"ultra"}`, ""},
		"no reasoning back":     {"/chat/completions", `{"model":"deepseek-flash","messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c"}]}]}`, "reasoning_content"},
		"strict off beta":       {"/chat/completions", `{"model":"deepseek-flash","messages":[],"tools":[` + strictTool(`{"type":"string"}`) + `]}`, "beta endpoint"},
		"strict format":         {"/beta/chat/completions", `{"model":"deepseek-flash","messages":[],"tools":[` + strictTool(`{"type":"string","format":"date"}`) + `]}`, "format 'date'"},
		"strict items":          {"/beta/chat/completions", `{"model":"deepseek-flash","messages":[],"tools":[` + strictTool(`{"type":"array","items":{"type":"string"},"minItems":1}`) + `]}`, "'minItems'"},
		"strict open":           {"/beta/chat/completions", `{"model":"deepseek-flash","messages":[],"tools":[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object","properties":{}}}}]}`, "'additionalProperties' must be false"},
		"strict ok":             {"/beta/chat/completions", `{"model":"deepseek-flash","messages":[],"tools":[` + strictTool(`{"type":"string","format":"uuid"}`) + `]}`, ""},
		"json without the word": {"/chat/completions", `{"model":"deepseek-flash","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`, "must contain the word 'json'"},
		"json said":             {"/chat/completions", `{"model":"deepseek-flash","messages":[{"role":"user","content":"Answer in JSON"}],"response_format":{"type":"json_object"}}`, ""},
		"json schema":           {"/chat/completions", `{"model":"deepseek-flash","messages":[],"response_format":{"type":"json_schema"}}`, "unavailable"},
		"not json":              {"/chat/completions", `{`, "deserialize"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.DeepSeek(openaitest.Reply{Body: `{"passed":true}`}))
			defer srv.Close()
			resp, body := post(t, srv.URL+tc.path, tc.body)
			if tc.want == "" {
				assert.Equal(t, http.StatusOK, resp.StatusCode, body)
				assert.Equal(t, `{"passed":true}`, body)
				return
			}
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, body, tc.want)
			assert.Contains(t, body, `"type":"invalid_request_error"`)
		})
	}
}
