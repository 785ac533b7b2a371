package anthropic_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type lsIn struct {
	Path string `json:"path" jsonschema:"the directory"`
}

func lsTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "ls", Description: "List a directory.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in lsIn) (*harness.ToolResult, error) {
			return harness.TextResult("main.go in " + in.Path), nil
		})
}

func runTurn(t *testing.T, s *agent.Session, prompt string) ([]agent.Event, *agent.TurnEnd) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	for ev, err := range s.Run(context.Background(), prompt) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
			require.NoError(t, err)
		}
	}
	require.NotNil(t, end)
	return evs, end
}

// Through the loop: the thinking Claude signed (and the thinking it
// redacted) goes back unchanged with the tool results; the cache reads
// and writes are logged and priced at Anthropic's prices.
func TestToolLoopThroughAgent(t *testing.T) {
	f := newFake(t,
		reply{Message: &message{
			Blocks: []block{{Thinking: "List the directory.", Signature: "sig-step-1"}, {Redacted: "enc-step-1"}, toolUse("toolu_1", "ls", `{"path":"."}`), toolUse("toolu_2", "ls", `{"path":"cmd"}`)},
			Usage:  anthropictest.Usage{InputTokens: 50, CacheCreationInputTokens: 4000, OutputTokens: 30},
		}},
		reply{Message: &message{
			Blocks: []block{{Thinking: "Done.", Signature: "sig-step-2"}, text("There is main.go.")},
			Usage:  anthropictest.Usage{InputTokens: 80, CacheReadInputTokens: 4000, OutputTokens: 10},
		}},
	)
	store := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(f.model()), agent.WithTools(lsTool()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithPrices(pricing.Anthropic()))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	evs, end := runTurn(t, s, "what is here?")
	assert.Equal(t, 2, end.Steps)

	second := blocksOf(t, f.body(1), 1)
	require.Len(t, second, 4)
	assert.Equal(t, map[string]any{"type": "thinking", "thinking": "List the directory.", "signature": "sig-step-1"}, second[0])
	assert.Equal(t, map[string]any{"type": "redacted_thinking", "data": "enc-step-1"}, second[1])
	results := blocksOf(t, f.body(1), 2)
	require.Len(t, results, 2)
	assert.Equal(t, "toolu_1", results[0]["tool_use_id"])
	assert.Equal(t, "toolu_2", results[1]["tool_use_id"])
	assert.NotNil(t, results[1]["cache_control"], "the end of the request is a breakpoint")
	assert.NotNil(t, blocksOf(t, f.body(1), 0)[0]["cache_control"], "so is the end of the previous request")

	var costs []float64
	for _, ev := range evs {
		if u, ok := ev.(*agent.ModelUsage); ok {
			costs = append(costs, u.Cost)
		}
	}
	// Sonnet 5.5: $2 input, $2.50 cache write, $0.10 cache read, $10
	// output per million tokens.
	assert.InDeltaSlice(t, []float64{(50*2 + 4000*2.5 + 30*10) / 1e6, (80*2 + 4000*0.10 + 10*10) / 1e6}, costs, 1e-12)
	assert.InDelta(t, costs[0]+costs[1], end.Cost, 1e-12)
	assert.Equal(t, harness.Usage{InputTokens: 8130, OutputTokens: 40, CacheHitTokens: 4000, CacheMissTokens: 4130, CacheWriteTokens: 4000}, end.Usage)

	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var answers []*session.AssistantMessage
	for _, e := range tr.Events {
		if am, ok := e.Data.(*session.AssistantMessage); ok {
			answers = append(answers, am)
		}
	}
	require.Len(t, answers, 2)
	assert.Equal(t, "sig-step-1", answers[0].Content[0].Signature, "the signature is logged")
	assert.True(t, answers[0].Content[1].Redacted)
	assert.Equal(t, int64(4000), answers[0].Usage.CacheWriteTokens)
}

// Claude overloaded past its retries: DeepSeek answers the same request
// through the OpenAI-format adapter, with Claude's earlier thinking
// sent back as reasoning, which DeepSeek's rules ask for; the answer is
// logged and priced as DeepSeek's.
func TestFallbackFromClaudeToDeepSeek(t *testing.T) {
	f := newFake(t,
		reply{Message: &message{Blocks: []block{{Thinking: "List it.", Signature: "sig"}, toolUse("toolu_1", "ls", `{"path":"."}`)}}},
		reply{Status: 529, Body: anthropictest.ErrorBody("overloaded_error", "Overloaded")},
		reply{Status: 529, Body: anthropictest.ErrorBody("overloaded_error", "Overloaded")},
	)
	ds := openaitest.NewServer(openaitest.DeepSeek(openaitest.Reply{Chunks: []openaitest.Chunk{
		{Reasoning: "Answer."}, {Text: "main.go"}, {Finish: "stop"},
		{Usage: &harness.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}},
	}}))
	defer ds.Close()
	deepseek, err := openai.New(openai.Config{BaseURL: ds.URL, APIKey: "k", Model: "deepseek-flash", Dialect: openai.DialectDeepSeek})
	require.NoError(t, err)
	store := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(model.Fallback(f.model(), deepseek)), agent.WithTools(lsTool()),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithPrices(pricing.Builtin()),
		agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	evs, end := runTurn(t, s, "list")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	var fb []*agent.ModelFallback
	for _, ev := range evs {
		if x, ok := ev.(*agent.ModelFallback); ok {
			fb = append(fb, x)
		}
	}
	require.Len(t, fb, 1)
	assert.Equal(t, "claude-sonnet-5-5", fb[0].From)
	assert.Equal(t, "deepseek-flash", fb[0].To)

	sent := ds.Requests()[0].Messages()
	require.Len(t, sent, 3)
	assert.Equal(t, "List it.", sent[1]["reasoning_content"])
	// DeepSeek's call is priced at DeepSeek's prices (peak or off-peak).
	var last *agent.ModelUsage
	for _, ev := range evs {
		if u, ok := ev.(*agent.ModelUsage); ok {
			last = u
		}
	}
	require.NotNil(t, last)
	assert.Equal(t, "deepseek-flash", last.Model)
	assert.Contains(t, []float64{1.50, 0.75}, float64(int(last.Cost*100+0.5))/100)
}
