package openai_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
)

func TestCatalogAndInfo(t *testing.T) {
	ds, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "k", Model: "deepseek-flash"})
	require.NoError(t, err)
	assert.Equal(t, model.Info{Name: "deepseek-flash", ContextWindow: 1_000_000,
		Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}}, ds.Info())
	assert.True(t, slices.Contains(ds.Info().Input, harness.ModalityImage))

	cfg, err := openai.FromEnv(func(k string) string {
		return map[string]string{"DEEPSEEK_API_KEY": "k", "HARNESS_MODEL": "deepseek-v4-pro"}[k]
	})
	require.NoError(t, err)
	pro, err := openai.New(cfg)
	require.NoError(t, err)
	assert.Equal(t, 1_000_000, pro.Info().ContextWindow)
	assert.False(t, slices.Contains(pro.Info().Input, harness.ModalityImage))

	unknown, err := openai.New(openai.Config{BaseURL: "http://localhost:8080/v1", Model: "my-local-model"})
	require.NoError(t, err)
	assert.Equal(t, model.Info{Name: "my-local-model", Input: []harness.Modality{harness.ModalityText}}, unknown.Info(),
		"an unknown model is text only, context window unknown")

	declared, err := openai.New(openai.Config{BaseURL: "http://localhost:8080/v1", Model: "vision-7b", ContextWindow: 32768, Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}})
	require.NoError(t, err)
	assert.Equal(t, 32768, declared.Info().ContextWindow)
	assert.True(t, slices.Contains(declared.Info().Input, harness.ModalityImage))

	// Info returns a copy.
	info := declared.Info()
	info.Input[0] = "changed"
	assert.Equal(t, harness.ModalityText, declared.Info().Input[0])

	_, ok := openai.LookupModel("deepseek-chat")
	assert.False(t, ok, "retired ids are not in the catalog")
}

func TestNewRefusesBadInput(t *testing.T) {
	for _, tc := range []struct{ base, model string }{
		{"api.example.com/v1", "m"},
		{"ftp://example.com", "m"},
		{"http://", "m"},
		{"http://example.com", ""},
		{"http://example.com", " "},
	} {
		_, err := openai.New(openai.Config{BaseURL: tc.base, APIKey: "k", Model: tc.model})
		assert.Error(t, err, "%q %q", tc.base, tc.model)
	}
}

func TestDeepSeekWithoutKeyIsRefused(t *testing.T) {
	for _, base := range []string{"https://api.deepseek.com", "https://API.DeepSeek.com/beta"} {
		m, err := openai.New(openai.Config{BaseURL: base, Model: "deepseek-flash"})
		assert.Nil(t, m)
		assert.ErrorIs(t, err, harness.CodeAuth, base)
		assert.ErrorContains(t, err, "DEEPSEEK_API_KEY")
	}
	// Other hosts may need no key.
	_, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "deepseek-flash"})
	assert.NoError(t, err)
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name    string
		getenv  func(string) string
		model   string
		base    string
		err     error
		errText string
		dialect openai.Dialect
	}{
		{name: "nothing", getenv: env(), err: harness.CodeAuth},
		{name: "nil getenv", getenv: nil, err: harness.CodeAuth},
		{name: "deepseek", getenv: env("DEEPSEEK_API_KEY", "sk-ds"), model: "deepseek-flash", base: "https://api.deepseek.com"},
		{name: "deepseek other model", getenv: env("DEEPSEEK_API_KEY", "sk-ds", "HARNESS_MODEL", "deepseek-v4-pro"), model: "deepseek-v4-pro", base: "https://api.deepseek.com"},
		{name: "generic wins", getenv: env("DEEPSEEK_API_KEY", "sk-ds", "HARNESS_BASE_URL", "http://127.0.0.1:9/v1", "HARNESS_API_KEY", "k", "HARNESS_MODEL", "qwen"),
			model: "qwen", base: "http://127.0.0.1:9/v1"},
		{name: "generic without key", getenv: env("HARNESS_BASE_URL", "http://127.0.0.1:9/v1", "HARNESS_MODEL", "llama"), model: "llama", base: "http://127.0.0.1:9/v1"},
		{name: "generic without model", getenv: env("HARNESS_BASE_URL", "http://127.0.0.1:9/v1", "HARNESS_API_KEY", "k"), errText: "HARNESS_MODEL is not: name the model"},
		{name: "generic bad url", getenv: env("HARNESS_BASE_URL", "nope", "HARNESS_MODEL", "m"), errText: "not an http(s) URL"},
		{name: "deepseek gateway", getenv: env("DEEPSEEK_API_KEY", "sk-ds", "DEEPSEEK_BASE_URL", "http://127.0.0.1:9/deepseek"),
			model: "deepseek-flash", base: "http://127.0.0.1:9/deepseek", dialect: openai.DialectDeepSeek},
		{name: "deepseek bad gateway url", getenv: env("DEEPSEEK_API_KEY", "sk-ds", "DEEPSEEK_BASE_URL", "ftp://x"), errText: "not an http(s) URL"},
		{name: "generic dialect by default", getenv: env("HARNESS_BASE_URL", "http://127.0.0.1:9/v1", "HARNESS_MODEL", "kimi"),
			model: "kimi", base: "http://127.0.0.1:9/v1", dialect: openai.DialectGeneric},
		{name: "dialect override", getenv: env("HARNESS_BASE_URL", "http://127.0.0.1:9/v1", "HARNESS_MODEL", "kimi", "HARNESS_DIALECT", "deepseek"),
			model: "kimi", base: "http://127.0.0.1:9/v1", dialect: openai.DialectDeepSeek},
		{name: "dialect on deepseek", getenv: env("DEEPSEEK_API_KEY", "sk-ds", "HARNESS_DIALECT", "openai"), errText: "no thinking switch", dialect: openai.DialectOpenAI},
		{name: "unknown dialect", getenv: env("DEEPSEEK_API_KEY", "sk-ds", "HARNESS_DIALECT", "claude"), errText: "HARNESS_DIALECT: openai: unknown dialect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The environment's choices, then the host's own on top, then
			// New checks the whole.
			cfg, err := openai.FromEnv(tc.getenv)
			var m model.Model
			if err == nil {
				if tc.name == "dialect on deepseek" {
					cfg.Thinking = new(true)
				}
				m, err = openai.New(cfg)
			}
			switch {
			case tc.err != nil:
				assert.True(t, errors.Is(err, tc.err), "%v", err)
				assert.Contains(t, err.Error(), "no key configured")
			case tc.errText != "":
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.errText)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.model, m.Info().Name)
				assert.Equal(t, tc.base, cfg.BaseURL)
				if tc.dialect != "" {
					assert.Equal(t, tc.dialect, openai.DialectOf(m))
				}
			}
		})
	}
}

func TestExtraHeaders(t *testing.T) {
	p := newProvider(t, sse(text("x"), finish("stop")))
	_, err := drain(t, p.model(openai.Config{Header: http.Header{"X-Title": {"harness"}}}), context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, "harness", p.Requests()[0].Header.Get("X-Title"))
}

// FromEnv honours DEEPSEEK_BASE_URL: requests go to the gateway, in the
// deepseek dialect.
func TestDeepSeekBaseURLFromEnvironment(t *testing.T) {
	p := newProvider(t, sse(text("via gateway"), finish("stop")))
	cfg, err := openai.FromEnv(func(k string) string {
		return map[string]string{"DEEPSEEK_API_KEY": testKey, "DEEPSEEK_BASE_URL": p.URL() + "/"}[k]
	})
	require.NoError(t, err)
	m, err := openai.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { openai.CloseIdle(m) })
	chunks, err := drain(t, m, context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, "via gateway", joinChunks(chunks).Message().Content[0].Text)
	require.Len(t, p.Requests(), 1)
	assert.Equal(t, "Bearer "+testKey, p.Requests()[0].Header.Get("Authorization"))
	assert.Equal(t, openai.DialectDeepSeek, openai.DialectOf(m))
}

// New keeps its own copy of the Config's values: changing them afterwards
// changes nothing the model sends.
func TestConfigIsCopied(t *testing.T) {
	p := newProvider(t, sse(text("ok"), finish("stop")))
	temp, header := 0.5, http.Header{"X-Title": {"harness"}}
	m := p.model(openai.Config{Temperature: &temp, Header: header})
	temp = 1.5
	header.Set("X-Title", "changed")
	_, err := drain(t, m, context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, 0.5, p.Requests()[0].JSON(t)["temperature"])
	assert.Equal(t, "harness", p.Requests()[0].Header.Get("X-Title"))
}
