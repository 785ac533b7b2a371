package observe_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/observe"
	"github.com/go-harness/harness/session"
)

// Tokens written to the provider's cache are billed apart from reads
// and misses; the model and turn spans carry them as
// gen_ai.usage.cache_creation.input_tokens.
func TestCacheWritesOnSpans(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Reply{Message: &anthropictest.Message{
			Blocks: []anthropictest.Block{{ToolUse: &anthropictest.ToolUse{ID: "toolu_1", Name: "echo", Input: `{"text":"a"}`}}},
			Usage:  anthropictest.Usage{InputTokens: 50, CacheCreationInputTokens: 4000, OutputTokens: 30},
		}},
		anthropictest.Reply{Message: &anthropictest.Message{
			Blocks: []anthropictest.Block{{Text: "done"}},
			Usage:  anthropictest.Usage{InputTokens: 80, CacheReadInputTokens: 4000, CacheCreationInputTokens: 120, OutputTokens: 10},
		}},
	)
	t.Cleanup(srv.Close)
	m, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", Model: "claude-test"})
	require.NoError(t, err)
	exp := tracetest.NewInMemoryExporter()
	hooks, err := observe.New(observe.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), ProviderName: "anthropic"})
	require.NoError(t, err)
	loop, err := agent.New(agent.WithHooks(hooks), agent.WithModel(m), agent.WithTools(testTools()...))
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	sess, err := loop.NewSession(t.Context(), session.Header{})
	require.NoError(t, err)
	for _, err := range sess.Run(t.Context(), "hi") {
		require.NoError(t, err)
	}
	var chats []int64
	var turn any
	for _, s := range exp.GetSpans() {
		a := attrs(s.Attributes)
		switch a["gen_ai.operation.name"] {
		case "chat":
			chats = append(chats, a["gen_ai.usage.cache_creation.input_tokens"].(int64))
		case "invoke_agent":
			turn = a["gen_ai.usage.cache_creation.input_tokens"]
		}
	}
	assert.ElementsMatch(t, []int64{4000, 120}, chats)
	assert.Equal(t, int64(4120), turn)
}
