package anthropic_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
)

// Every HTTP failure class maps to its model code, with the provider's
// message, its status and its Retry-After hint.
func TestHTTPErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		status     int
		typ, msg   string
		header     http.Header
		code       harness.Code
		retryAfter time.Duration
		contains   string
	}{
		{400, "invalid_request_error", "messages: text content blocks must be non-empty", nil, harness.CodeInvalidRequest, time.Millisecond, "non-empty"},
		{400, "invalid_request_error", "prompt is too long: 1000501 tokens > 1000000 maximum", nil, harness.CodeContextWindowExceeded, time.Millisecond, "too long"},
		{400, "invalid_request_error", "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000", nil, harness.CodeContextWindowExceeded, time.Millisecond, "exceed context limit"},
		{401, "authentication_error", "invalid x-api-key", nil, harness.CodeAuth, time.Millisecond, "check that the API key"},
		{403, "permission_error", "no access to this model", nil, harness.CodeAuth, time.Millisecond, "no access"},
		{402, "billing_error", "credit balance too low", nil, harness.CodeInsufficientBalance, time.Millisecond, "credit balance too low"},
		{404, "not_found_error", "model: claude-none", nil, harness.CodeInvalidRequest, time.Millisecond, "claude-none"},
		{413, "request_too_large", "request exceeds the maximum size", nil, harness.CodeInvalidRequest, time.Millisecond, "maximum size"},
		{429, "rate_limit_error", "rate limited", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {""}}, harness.CodeRateLimit, 7 * time.Second, "rate limited"},
		{408, "timeout_error", "request timed out", nil, harness.CodeTransport, time.Millisecond, "timed out"},
		{500, "api_error", "internal error", nil, harness.CodeServer, time.Millisecond, "internal error"},
		{529, "overloaded_error", "Overloaded", nil, harness.CodeServer, time.Millisecond, "Overloaded"},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.code), func(t *testing.T) {
			f := newFake(t, reply{Status: tc.status, Body: anthropictest.ErrorBody(tc.typ, tc.msg), Header: tc.header})
			_, err := drain(t, f.model(), context.Background(), simple())
			he, pe := modelErr(t, err)
			assert.Equal(t, tc.code, he.Code)
			assert.Contains(t, he.Message, tc.contains)
			assert.Contains(t, he.Message, "(request req_test)")
			require.NotNil(t, pe)
			assert.Equal(t, tc.status, pe.Status)
			assert.Equal(t, tc.retryAfter, pe.RetryAfter)
			retryable := tc.status == 429 || tc.status == 408 || tc.status >= 500
			assert.Equal(t, retryable, model.Retryable(err), "529 overloaded and the other 5xx are retried")
			assert.Len(t, f.Requests(), 1, "the SDK does not retry")
		})
	}
	// A body that is not Anthropic's shape still gives its text.
	f := newFake(t, reply{Status: 502, Body: "<html>bad gateway</html>"}, reply{Status: 503, Body: "upstream down"})
	_, err := drain(t, f.model(), context.Background(), simple())
	he, _ := modelErr(t, err)
	assert.Equal(t, harness.CodeServer, he.Code)
	assert.Contains(t, he.Message, "Bad Gateway")
	_, err = drain(t, f.model(), context.Background(), simple())
	he, _ = modelErr(t, err)
	assert.Contains(t, he.Message, "upstream down")

	// A connection that fails is a transport failure.
	m, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	require.NoError(t, err)
	_, err = drain(t, m, context.Background(), simple())
	he, _ = modelErr(t, err)
	assert.Equal(t, harness.CodeTransport, he.Code)
}

// The key never appears in an error or a log record, even when the
// provider echoes it.
func TestAPIKeyNeverInErrorsOrLogs(t *testing.T) {
	f := newFake(t, reply{Status: 401, Body: anthropictest.ErrorBody("authentication_error", "invalid x-api-key: "+testKey)},
		reply{Events: []anthropictest.Event{anthropictest.ErrorEvent("api_error", "saw "+testKey)}})
	var logs bytes.Buffer
	m := f.model(anthropic.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for range 2 {
		_, err := drain(t, m, context.Background(), simple())
		require.Error(t, err)
		assert.NotContains(t, err.Error(), testKey)
		assert.Contains(t, err.Error(), "[redacted]")
	}
	assert.NotContains(t, logs.String(), testKey)
	assert.Contains(t, logs.String(), "model call failed")
	assert.Equal(t, "Bearer "+testKey, f.Requests()[0].Header.Get("Authorization"))

	cfg := anthropic.Config{APIKey: testKey, Model: "m"}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		assert.NotContains(t, s, testKey)
	}
	var rec bytes.Buffer
	slog.New(slog.NewJSONHandler(&rec, nil)).Info("cfg", "config", cfg)
	assert.NotContains(t, rec.String(), testKey)
	assert.Contains(t, rec.String(), `"api_key_set":true`)
}

// The SDK reads nothing from the environment: not the key, not the base
// URL, not custom headers; and it sends no trace headers.
func TestNothingFromTheEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env-should-not-be-sent")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	f := newFake(t, ok(text("ok")), ok(text("ok")))
	_, err := drain(t, f.model(), context.Background(), simple())
	require.NoError(t, err, "the base URL of the Config, not the environment's")
	h := f.Requests()[0].Header
	assert.Equal(t, "Bearer "+testKey, h.Get("Authorization"), "the Config's key, as the SDK sends a key")
	assert.Equal(t, testKey, h.Get("X-Api-Key"), "and as compatible endpoints document it")
	assert.Empty(t, h.Get("X-Leak"))
	assert.Empty(t, h.Get("Traceparent"))
	assert.NotEmpty(t, h.Get("Anthropic-Version"))
	assert.Equal(t, "/v1/messages", f.Requests()[0].Path)

	// No key at all: nothing from the environment either.
	m, err := anthropic.New(anthropic.Config{BaseURL: f.URL + "/anthropic", Model: "deepseek-flash", Header: http.Header{"X-Team": {"a", "b"}}})
	require.NoError(t, err)
	_, err = drain(t, m, context.Background(), simple())
	require.NoError(t, err)
	h = f.Requests()[1].Header
	assert.Empty(t, h.Get("X-Api-Key"))
	assert.Empty(t, h.Get("Authorization"))
	assert.Equal(t, []string{"a", "b"}, h.Values("X-Team"))
	assert.Equal(t, "/anthropic/v1/messages", f.Requests()[1].Path, "any compatible endpoint by base URL")
}

func TestConfigChecks(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg  anthropic.Config
		want string
	}{
		"window":          {anthropic.Config{ContextWindow: -1}, "ContextWindow -1"},
		"max tokens":      {anthropic.Config{MaxOutputTokens: -1}, "MaxOutputTokens -1"},
		"budget alone":    {anthropic.Config{ThinkingBudget: 2048}, "Thinking is not true"},
		"budget small":    {anthropic.Config{Thinking: new(true), ThinkingBudget: 100}, "at least 1024"},
		"budget large":    {anthropic.Config{Thinking: new(true), ThinkingBudget: 9000, MaxOutputTokens: 8000}, "less than the answer's bound (8000"},
		"display":         {anthropic.Config{Thinking: new(true), ThinkingDisplay: "full"}, "neither summarized nor omitted"},
		"display alone":   {anthropic.Config{ThinkingDisplay: "omitted"}, "Thinking is not true"},
		"effort":          {anthropic.Config{Effort: "ultra"}, "low, medium, high, xhigh or max"},
		"temperature":     {anthropic.Config{Temperature: new(1.5)}, "temperature 1.5"},
		"top_p":           {anthropic.Config{TopP: new(0.0)}, "top_p 0"},
		"ttl":             {anthropic.Config{CacheTTL: "24h"}, "neither 5m nor 1h"},
		"tool choice":     {anthropic.Config{ToolChoice: "a b"}, "tool choice"},
		"forced thinking": {anthropic.Config{ToolChoice: "required"}, "set Thinking to false"},
		"forced named":    {anthropic.Config{ToolChoice: "read", Thinking: new(true)}, "set Thinking to false"},
		"header":          {anthropic.Config{Header: http.Header{"X Bad": {"v"}}}, `Header "X Bad"`},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.BaseURL, tc.cfg.Model = "http://127.0.0.1:1", "claude-sonnet-5-5"
			m, err := anthropic.New(tc.cfg)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, harness.CodeInvalidOption)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "m", Effort: "ultra", CacheTTL: "x"})
	assert.ErrorContains(t, err, "Effort")
	assert.ErrorContains(t, err, "CacheTTL", "every problem is reported")
	_, err = anthropic.New(anthropic.Config{Model: "claude-sonnet-5-5"})
	assert.ErrorIs(t, err, harness.CodeAuth, "Anthropic's own API needs a key")
	_, err = anthropic.New(anthropic.Config{APIKey: "k"})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = anthropic.New(anthropic.Config{BaseURL: "ftp://x", Model: "m"})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "m", ToolChoice: "required", Thinking: new(false)})
	assert.NoError(t, err)
}

func TestCatalogAndInfo(t *testing.T) {
	m, err := anthropic.New(anthropic.Config{APIKey: "k", Model: "claude-haiku-4-5"})
	require.NoError(t, err)
	assert.Equal(t, model.Info{Name: "claude-haiku-4-5", ContextWindow: 200_000, Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}}, m.Info())
	info, ok := anthropic.LookupModel("claude-opus-5-5")
	assert.True(t, ok)
	assert.Equal(t, 1_000_000, info.ContextWindow)
	info, ok = anthropic.LookupModel("deepseek-v4-pro")
	assert.True(t, ok, "DeepSeek's models, for its compatible endpoint")
	assert.Equal(t, []harness.Modality{harness.ModalityText}, info.Input)
	m, err = anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "unknown", ContextWindow: 5000, Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}})
	require.NoError(t, err)
	assert.Equal(t, 5000, m.Info().ContextWindow)
	in := m.Info().Input
	in[0] = "changed"
	assert.Equal(t, harness.ModalityText, m.Info().Input[0], "Info returns a copy")
	m, err = anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "unknown"})
	require.NoError(t, err)
	assert.Equal(t, model.Info{Name: "unknown", Input: []harness.Modality{harness.ModalityText}}, m.Info())
}

// max_tokens: the Config's, else the catalog's capped at 32,000, else
// 8,192 for a model the catalog does not know.
func TestMaxTokens(t *testing.T) {
	for id, want := range map[string]float64{"claude-opus-5-5": 32000, "claude-haiku-4-5": 32000, "deepseek-flash": 32000, "unknown-model": 8192} {
		f := newFake(t, ok(text("ok")))
		_, err := drain(t, f.modelNamed(id), context.Background(), simple())
		require.NoError(t, err)
		assert.Equal(t, want, f.body(0)["max_tokens"], id)
	}
	f := newFake(t, ok(text("ok")))
	_, err := drain(t, f.model(anthropic.Config{MaxOutputTokens: 100}), context.Background(), simple())
	require.NoError(t, err)
	assert.Equal(t, 100.0, f.body(0)["max_tokens"])
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cfg, err := anthropic.FromEnv(env("ANTHROPIC_API_KEY", " k "))
	require.NoError(t, err)
	assert.Equal(t, anthropic.Config{APIKey: "k", Model: "claude-sonnet-5-5"}, cfg)
	cfg, err = anthropic.FromEnv(env("ANTHROPIC_API_KEY", "k", "ANTHROPIC_BASE_URL", "https://api.deepseek.com/anthropic", "HARNESS_MODEL", "deepseek-flash"))
	require.NoError(t, err)
	assert.Equal(t, anthropic.Config{APIKey: "k", BaseURL: "https://api.deepseek.com/anthropic", Model: "deepseek-flash"}, cfg)
	cfg, err = anthropic.FromEnv(env("ANTHROPIC_BASE_URL", "http://localhost:8080"))
	require.NoError(t, err, "a local endpoint may need no key")
	assert.Equal(t, "http://localhost:8080", cfg.BaseURL)
	_, err = anthropic.FromEnv(env())
	assert.ErrorIs(t, err, harness.CodeAuth)
	assert.ErrorContains(t, err, "ANTHROPIC_API_KEY")
	_, err = anthropic.FromEnv(nil)
	assert.ErrorIs(t, err, harness.CodeAuth)
	assert.True(t, strings.Contains(fmt.Sprint(cfg), "localhost"))
}
