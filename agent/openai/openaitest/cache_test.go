package openaitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/pricing"
)

// body is a chat completion request body whose prompt (tools, then
// messages) is exactly tools+messages.
func body(t *testing.T, modelName string, tools string, msgs ...string) []byte {
	t.Helper()
	b := `{"model":` + quote(modelName) + `,"messages":[` + strings.Join(msgs, ",") + `]`
	if tools != "" {
		b += `,"tools":` + tools
	}
	b += `,"stream":true}`
	require.True(t, json.Valid([]byte(b)), b)
	return []byte(b)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func userMsg(text string) string { return `{"role":"user","content":` + quote(text) + `}` }

func TestPrefixCacheUnits(t *testing.T) {
	c := &openaitest.PrefixCache{}
	sys := `{"role":"system","content":` + quote(strings.Repeat("s", 1000)) + `}`
	tools := `[{"type":"function","function":{"name":"read","parameters":{}}}]`

	first := body(t, "m", tools, sys, userMsg("hello"))
	u, err := c.Use(first)
	require.NoError(t, err)
	promptLen := len(tools) + len(`[`+sys+`,`+userMsg("hello")) // the closing bracket is not part of it
	assert.Equal(t, int64((promptLen+3)/4), u.PromptTokens, "tokens are bytes/4, rounded up")
	assert.Zero(t, u.HitTokens, "a cold cache misses everything")
	assert.Equal(t, u.PromptTokens, u.MissTokens)

	// The same request again hits up to its last whole token.
	u, err = c.Use(first)
	require.NoError(t, err)
	assert.Equal(t, int64(promptLen/4), u.HitTokens, "the whole prompt was stored at its end")
	assert.Equal(t, u.PromptTokens-u.HitTokens, u.MissTokens)

	// A request that appends messages hits the previous request's whole
	// prompt (stored at its end), to its last whole token.
	second := body(t, "m", tools, sys, userMsg("hello"), `{"role":"assistant","content":"hi"}`, userMsg("more"))
	u, err = c.Use(second)
	require.NoError(t, err)
	assert.Equal(t, int64(promptLen/4), u.HitTokens, "the earlier prompt is a hit")

	// A request that changes a message hits whole units of the common
	// prefix only.
	changed := body(t, "m", tools, sys, userMsg("HELLO"))
	u, err = c.Use(changed)
	require.NoError(t, err)
	common := len(tools) + len(`[`+sys+`,{"role":"user","content":"`)
	assert.Equal(t, int64(common/256*64), u.HitTokens, "the hit is whole units of the common prefix")

	// A change in the tools misses everything after it.
	u, err = c.Use(body(t, "m", `[{"type":"function","function":{"name":"grep","parameters":{}}}]`, sys, userMsg("hello")))
	require.NoError(t, err)
	assert.Zero(t, u.HitTokens, "the tools start the prompt: changing them breaks the whole prefix")

	// Another model shares nothing.
	u, err = c.Use(body(t, "other", tools, sys, userMsg("hello")))
	require.NoError(t, err)
	assert.Zero(t, u.HitTokens)

	// Less than one unit is never a hit.
	small := body(t, "m", "", userMsg("x"))
	_, err = c.Use(small)
	require.NoError(t, err)
	u, err = c.Use(small)
	require.NoError(t, err)
	assert.Zero(t, u.HitTokens, "a prompt shorter than a unit is not cached")

	st := c.Stats()
	assert.Equal(t, 8, st.Requests)
	assert.Equal(t, st.PromptTokens, st.HitTokens+st.MissTokens)

	_, err = c.Use([]byte(`{"model":"m"}`))
	assert.Error(t, err, "no messages")
	_, err = c.Use([]byte(`not json`))
	assert.Error(t, err)
}

func TestPrefixCacheUnitSize(t *testing.T) {
	c := &openaitest.PrefixCache{UnitTokens: 2, BytesPerToken: 1}
	a := body(t, "m", "", userMsg("abcdefgh"))
	_, err := c.Use(a)
	require.NoError(t, err)
	b := body(t, "m", "", userMsg("abcdefgX"))
	u, err := c.Use(b)
	require.NoError(t, err)
	prefix := len(`[{"role":"user","content":"abcdefg`)
	assert.Equal(t, int64(prefix/2*2), u.HitTokens, "units of two one-byte tokens")
}

func TestPrefixCacheWindow(t *testing.T) {
	c := &openaitest.PrefixCache{Window: 100}
	_, err := c.Use(body(t, "m", "", userMsg(strings.Repeat("x", 500))))
	var we *openaitest.WindowError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, int64(100), we.Window)
	assert.Contains(t, we.Error(), "maximum context length is 100 tokens")
	st := c.Stats()
	assert.Equal(t, 1, st.Refused)
	assert.Zero(t, st.Requests)
	assert.Greater(t, st.PeakTokens, int64(100))
}

// The real adapter reads the cache's counts and the real price table
// prices them.
func TestPrefixCacheThroughTheAdapter(t *testing.T) {
	cache := &openaitest.PrefixCache{}
	answer := openaitest.Reply{Chunks: []openaitest.Chunk{{Text: "fine"}, {Finish: "stop"}}}
	srv := cache.Server(answer, answer)
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Model: "deepseek-flash"})
	require.NoError(t, err)

	history := []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(strings.Repeat("a long question ", 200))}}}
	req := &model.Request{System: "You are terse.", Messages: history}
	first := usageOf(t, m, req)
	assert.Zero(t, first.CacheHitTokens)
	assert.Equal(t, first.InputTokens, first.CacheMissTokens)
	assert.Equal(t, int64(1), first.OutputTokens, "four bytes of answer estimated as one token")

	req.Messages = append(history,
		harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("fine")}},
		harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("and then?")}})
	second := usageOf(t, m, req)
	assert.Greater(t, second.CacheHitTokens, first.InputTokens*9/10, "the first request's prompt is a hit")
	assert.Equal(t, second.InputTokens, second.CacheHitTokens+second.CacheMissTokens)

	st := cache.Stats()
	assert.Equal(t, first.InputTokens+second.InputTokens, st.PromptTokens)

	at := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC) // a Monday, peak hours
	cost, ok := pricing.DeepSeek().Cost("deepseek-flash", second, at)
	require.True(t, ok)
	want := (float64(second.CacheMissTokens)*0.30 + float64(second.CacheHitTokens)*0.006 + float64(second.OutputTokens)*1.20) / 1e6
	assert.InDelta(t, want, cost, 1e-12)
}

func TestPrefixCacheKeepsScriptedUsage(t *testing.T) {
	cache := &openaitest.PrefixCache{}
	srv := cache.Server(openaitest.Reply{Chunks: []openaitest.Chunk{
		{Text: "ok", Finish: "stop"},
		{Usage: &harness.Usage{InputTokens: 1, OutputTokens: 77, ReasoningTokens: 70}},
	}}, openaitest.Reply{Status: http.StatusTooManyRequests, Body: `{"error":{"message":"slow down"}}`})
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Model: "deepseek-flash"})
	require.NoError(t, err)
	req := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("hi")}}}}
	u := usageOf(t, m, req)
	assert.Equal(t, int64(77), u.OutputTokens, "the scripted completion tokens are kept")
	assert.Equal(t, int64(70), u.ReasoningTokens)
	assert.NotEqual(t, int64(1), u.InputTokens, "the prompt tokens are the cache's")

	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(string(body(t, "m", "", userMsg("x")))))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "errors pass through")
}

func TestPrefixCacheRefusesOverWindow(t *testing.T) {
	cache := &openaitest.PrefixCache{Window: 50}
	srv := cache.Server(openaitest.Reply{Chunks: []openaitest.Chunk{{Text: "never"}}})
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Model: "deepseek-flash"})
	require.NoError(t, err)
	req := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(strings.Repeat("x", 400))}}}}
	var got error
	for _, err := range m.Stream(context.Background(), req) {
		if err != nil {
			got = err
		}
	}
	require.Error(t, got)
	assert.Equal(t, harness.CodeContextWindowExceeded, harness.CodeOf(got))
	assert.Empty(t, srv.Requests(), "the refused request never reached the script")
}

func usageOf(t *testing.T, m model.Model, req *model.Request) harness.Usage {
	t.Helper()
	var u *harness.Usage
	for c, err := range m.Stream(context.Background(), req) {
		require.NoError(t, err)
		if c.Type == model.ChunkUsage {
			u = &c.Usage
		}
	}
	if u == nil {
		require.Fail(t, "no usage", errors.New("the answer reported none"))
	}
	return *u
}
