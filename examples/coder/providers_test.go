package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai/openaitest"
)

func claudeReply(s string) anthropictest.Reply {
	return anthropictest.Reply{Message: &anthropictest.Message{Blocks: []anthropictest.Block{{Text: s}},
		Usage: anthropictest.Usage{InputTokens: 100, OutputTokens: 10}}}
}

// ANTHROPIC_API_KEY picks the Anthropic adapter, at ANTHROPIC_BASE_URL,
// with HARNESS_MODEL; HARNESS_PROVIDER=anthropic picks it for a host
// named by HARNESS_BASE_URL.
func TestAnthropicProvider(t *testing.T) {
	srv := anthropictest.NewServer(claudeReply("hello from claude"), claudeReply("hello again"))
	defer srv.Close()
	dir := workspace(t, nil)
	r := runCLI(t, envOf("ANTHROPIC_API_KEY="+testKey, "ANTHROPIC_BASE_URL="+srv.URL, "HARNESS_MODEL=claude-haiku-5-5", "DEEPSEEK_API_KEY=unused"),
		"", "-C", dir, "-sessions", t.TempDir(), "say hello")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "hello from claude")
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/messages", reqs[0].Path)
	assert.Equal(t, "claude-haiku-5-5", reqs[0].JSON()["model"])
	assert.Equal(t, "Bearer "+testKey, reqs[0].Header.Get("Authorization"))

	r = runCLI(t, envOf("HARNESS_PROVIDER=anthropic", "HARNESS_BASE_URL="+srv.URL+"/anthropic", "HARNESS_API_KEY="+testKey, "HARNESS_MODEL=deepseek-flash"),
		"", "-C", dir, "-sessions", t.TempDir(), "say hello")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "hello again")
	assert.Equal(t, "/anthropic/v1/messages", srv.Requests()[1].Path)

	r = runCLI(t, envOf("HARNESS_PROVIDER=gemini"), "", "-C", dir, "hi")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "use anthropic, openai or deepseek")
	r = runCLI(t, envOf("HARNESS_PROVIDER=anthropic"), "", "-C", dir, "hi")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "ANTHROPIC_API_KEY")
}

// testApp is an app with flags and an environment, for the model
// choice alone.
func testApp(t *testing.T, env func(string) string, args ...string) *app {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	return &app{o: o, env: env}
}

// -fallback-model makes a fallback chain: an id of the same provider, or
// provider:id of another; the chain answers with the fallback when the
// first model is overloaded.
func TestFallbackModelFlag(t *testing.T) {
	overloaded := anthropictest.Reply{Status: 529, Body: anthropictest.ErrorBody("overloaded_error", "Overloaded")}
	claude := anthropictest.NewServer(overloaded, overloaded)
	defer claude.Close()
	ds := openaitest.NewServer(openaitest.Reply{Chunks: []openaitest.Chunk{{Text: "from deepseek"}, {Finish: "stop"}}})
	defer ds.Close()
	env := envOf("ANTHROPIC_API_KEY="+testKey, "ANTHROPIC_BASE_URL="+claude.URL, "HARNESS_MODEL=claude-opus-5-5",
		"DEEPSEEK_API_KEY="+testKey, "DEEPSEEK_BASE_URL="+ds.URL)

	a := testApp(t, env, "-fallback-model", "deepseek:deepseek-flash")
	m, shown, err := a.model(nil)
	require.NoError(t, err)
	chain, ok := m.(model.Chain)
	require.True(t, ok)
	var names []string
	for _, x := range chain.Models() {
		names = append(names, x.Info().Name)
	}
	assert.Equal(t, []string{"claude-opus-5-5", "deepseek-flash"}, names)
	assert.Contains(t, shown, "falling back to "+ds.URL)
	var text strings.Builder
	for c, err := range m.Stream(context.Background(), &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("hi")}}}}) {
		require.NoError(t, err)
		if c.Type == model.ChunkText {
			text.WriteString(c.Text)
		}
	}
	assert.Equal(t, "from deepseek", text.String())

	// Same provider: the id alone.
	a = testApp(t, env, "-fallback-model", "claude-haiku-5-5")
	m, _, err = a.model(nil)
	require.NoError(t, err)
	models := m.(model.Chain).Models()
	assert.Equal(t, "claude-haiku-5-5", models[1].Info().Name)

	a = testApp(t, env, "-fallback-model", "deepseek:")
	_, _, err = a.model(nil)
	assert.ErrorContains(t, err, "names no model id")

	// Without the flag, one model.
	a = testApp(t, env)
	m, _, err = a.model(nil)
	require.NoError(t, err)
	_, isChain := m.(model.Chain)
	assert.False(t, isChain)
	assert.Equal(t, "claude-opus-5-5", m.Info().Name)
}
