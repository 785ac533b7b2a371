package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// cheapHits prices the test models as DeepSeek prices flash: a cache hit
// costs 1/50 of a miss.
func cheapHits(t *testing.T, models ...string) *pricing.Table {
	t.Helper()
	prices := map[string]pricing.Price{}
	for _, m := range models {
		prices[m] = pricing.Price{Input: 0.30, CacheHit: 0.006, Output: 1.20}
	}
	table, err := pricing.NewTable("USD", prices)
	require.NoError(t, err)
	return table
}

// rereads reads eight files, then the first one again (which supersedes
// the first read, early in the history), then one more, and finishes:
// by then the request is well above half of a 16,000-token window.
func rereads(name string) *summarizingModel {
	var script []replay.Response
	for i := range 8 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%d", i), fmt.Sprintf("/w/f%d.go", i), "v1", 0, 0, true)))
	}
	script = append(script,
		replay.Call(rd("again", "/w/f0.go", "v1", 0, 0, true)),
		replay.Call(rd("r9", "/w/f9.go", "v1", 0, 0, true)),
		replay.Response{Text: "done"})
	return summarizer("## Goal\nread", script...).WithInfo(model.Info{Name: name, ContextWindow: 16_000})
}

// The default policy does not prune an early read when the model's
// prices say that re-sending the rest of the history uncached costs more
// than the pruning saves: today's thresholds prune it as soon as the
// request passes half the window, breaking the cache for the rest of the
// turn.
func TestCostPolicyKeepsTheCachedPrefix(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		opts   []agent.Option
		pruned bool
	}{
		{"default policy with prices", []agent.Option{agent.WithPrices(cheapHits(t, "priced"))}, false},
		{"a price given to the policy", []agent.Option{agent.WithContextPolicy(agent.ContextPolicy{Price: &pricing.Price{Input: 1.32, CacheHit: 0.044, Output: 3.96}})}, false},
		{"thresholds", []agent.Option{agent.WithPrices(cheapHits(t, "priced")), agent.WithContextPolicy(agent.ContextPolicy{Strategy: agent.ContextThresholds})}, true},
		{"default policy without prices decides by thresholds", nil, true},
		{"hits at more than half a miss decide by thresholds", []agent.Option{agent.WithContextPolicy(agent.ContextPolicy{Price: &pricing.Price{Input: 1, CacheHit: 0.6}})}, true},
		{"an explicit PruneAt means what it says", []agent.Option{agent.WithPrices(cheapHits(t, "priced")), agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5})}, true},
		{"off", []agent.Option{agent.WithPrices(cheapHits(t, "priced")), agent.WithContextPolicy(agent.ContextPolicy{Strategy: agent.ContextOff})}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			llm := rereads("priced")
			_, s := newSession(t, append([]agent.Option{agent.WithModel(llm), agent.WithTools(fakeRead())}, tt.opts...)...)
			evs, end, err := collect(t, s, ctx, "read")
			require.NoError(t, err)
			assert.Equal(t, session.ReasonCompleted, end.Reason)
			assert.Empty(t, ofType[*agent.ContextCompacted](evs), "the window never forced a cut")
			last := llm.Requests()[len(llm.Requests())-1].Messages
			if tt.pruned {
				assert.NotEmpty(t, ofType[*agent.ContextPruned](evs))
				assert.Contains(t, resultByCall(last, "r0"), "[pruned:")
				return
			}
			assert.Empty(t, ofType[*agent.ContextPruned](evs), "pruning would break the cache for more than it saves")
			assert.Contains(t, resultByCall(last, "r0"), "code line")
			// Every request extends the one before: the prefix never changed.
			reqs := llm.Requests()
			for i := 1; i < len(reqs); i++ {
				prev := reqs[i-1].Messages
				assert.Equal(t, js(prev), js(reqs[i].Messages[:len(prev)]), "request %d extends request %d", i, i-1)
			}
		})
	}
}

type sizedReadIn struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
}

// sizedRead reads a whole file of the given number of lines.
func sizedRead() tools.Tool {
	return tools.Define(tools.Spec{Name: "sized_read", Description: "read", ConcurrencySafe: true, NeverSpill: true},
		func(ctx context.Context, call *tools.Call, in sizedReadIn) (*harness.ToolResult, error) {
			return &harness.ToolResult{Content: []harness.Block{harness.TextBlock(strings.Repeat("code line\n", in.Lines))},
				Files: []harness.FileAccess{{Op: harness.FileRead, Path: in.Path, Version: "v1", Complete: true}}}, nil
		})
}

// When the window forces a cut, the default compacts: it asks for the
// summary at the end of the older part of the conversation as it was
// sent (its prompt is the cached prefix), keeps the most recent part
// verbatim, and prunes what is superseded in that part for free. The log
// rebuilds the history the model saw next.
func TestCostPolicyCompactsWhenForced(t *testing.T) {
	ctx := context.Background()
	// Twelve files, the last two again, then a long one that takes the
	// request past the window: the first reads of those two are in the
	// part a compaction keeps.
	var script []replay.Response
	for i := range 12 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%02d", i), fmt.Sprintf("/w/f%d.go", i), "v1", 0, 0, true)))
	}
	script = append(script,
		replay.Call(rd("r12", "/w/f10.go", "v1", 0, 0, true)),
		replay.Call(rd("r13", "/w/f11.go", "v1", 0, 0, true)),
		replay.Call(replay.ToolCall("long", "sized_read", sizedReadIn{Path: "/w/long.go", Lines: 1400})),
		replay.Response{Text: "done"})
	llm := summarizer("## Goal\nread everything\n## Done\nread f0-f11", script...).WithInfo(model.Info{Name: "priced", ContextWindow: 20_000})
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead(), sizedRead()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithPrices(cheapHits(t, "priced")), agent.WithSystemPrompt("You read files."),
		agent.WithContextPolicy(agent.ContextPolicy{KeepRecent: 0.5}))
	evs, end, err := collect(t, s, ctx, "read")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	compacted := ofType[*agent.ContextCompacted](evs)
	require.Len(t, compacted, 1)
	require.Len(t, llm.summaries, 1)
	// The kept part's superseded reads are pruned in the same step: one
	// cut of the history, not two.
	pruned := ofType[*agent.ContextPruned](evs)
	require.Len(t, pruned, 1)
	assert.Equal(t, compacted[0].Step, pruned[0].Step)
	assert.ElementsMatch(t, []string{"r10", "r11"}, pruned[0].Calls)

	sum, prev := llm.summaries[0], llm.before[0]
	assert.Equal(t, "You read files.", sum.System)
	assert.Equal(t, js(prev.Tools), js(sum.Tools))
	n := len(sum.Messages) - 1
	assert.Equal(t, js(prev.Messages[:n]), js(sum.Messages[:n]), "the summary request is a prefix of a request already sent")
	assert.True(t, strings.HasPrefix(sum.Messages[n].Text(), "<compaction request>"))

	var after *model.Request
	for _, r := range llm.Requests() {
		if strings.Contains(r.Messages[0].Text(), "<summary of the earlier conversation>") {
			after = r
			break
		}
	}
	require.NotNil(t, after)
	for _, r := range llm.Requests() {
		size := 0
		for _, m := range r.Messages {
			size += len(js(m))
		}
		assert.Less(t, float64(size)*0.28, 0.95*20_000+1500, "every request stays inside the window")
	}
	assert.Contains(t, resultByCall(after.Messages, "r10"), "[pruned:")
	assert.Contains(t, resultByCall(after.Messages, "r12"), "code line")
	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	rebuilt := new(session.History).Add(tr.Events...).Messages()
	last := llm.Requests()[len(llm.Requests())-1]
	assert.Equal(t, js(last.Messages), js(rebuilt[:len(last.Messages)]), "the log rebuilds what the model saw")
}

// A read that the last step superseded is pruned at once: only what is
// new since the previous request follows it, so the cut breaks nothing
// the cache holds. A session far inside its window is never compacted.
func TestCostPolicyPrunesWhatIsFree(t *testing.T) {
	var script []replay.Response
	for i := range 30 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%02d", i), "/w/a.go", "v1", 0, 0, true)))
	}
	script = append(script, replay.Response{Text: "done"})
	llm := summarizer("## Goal\nx", script...).WithInfo(model.Info{Name: "priced", ContextWindow: 1_000_000})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithPrices(cheapHits(t, "priced")))
	evs, _, err := collect(t, s, context.Background(), "read")
	require.NoError(t, err)
	assert.Empty(t, ofType[*agent.ContextCompacted](evs))
	pruned := ofType[*agent.ContextPruned](evs)
	require.Len(t, pruned, 29)
	for i, p := range pruned {
		assert.Equal(t, []string{fmt.Sprintf("r%02d", i)}, p.Calls, "each read, as soon as the next one covers it")
	}
	reqs := llm.Requests()
	for i := 2; i < len(reqs); i++ {
		prev := reqs[i-1].Messages
		n := len(prev) - 1 // all but the read the next request prunes
		assert.Equal(t, js(prev[:n]), js(reqs[i].Messages[:n]), "request %d keeps the prefix of request %d", i, i-1)
		assert.Contains(t, resultByCall(reqs[i].Messages, fmt.Sprintf("r%02d", i-2)), "[pruned:")
	}
}

// A session far inside its window, with nothing superseded, is never
// cut at all.
func TestCostPolicyLeavesSmallSessionsAlone(t *testing.T) {
	var script []replay.Response
	for i := range 30 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%02d", i), fmt.Sprintf("/w/f%02d.go", i), "v1", 0, 0, true)))
	}
	script = append(script, replay.Response{Text: "done"})
	llm := summarizer("## Goal\nx", script...).WithInfo(model.Info{Name: "priced", ContextWindow: 1_000_000})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithPrices(cheapHits(t, "priced")))
	evs, _, err := collect(t, s, context.Background(), "read")
	require.NoError(t, err)
	assert.Empty(t, ofType[*agent.ContextPruned](evs))
	assert.Empty(t, ofType[*agent.ContextCompacted](evs))
}

func TestContextPolicyValidation(t *testing.T) {
	llm := replay.NewScripted()
	for _, p := range []agent.ContextPolicy{
		{Strategy: agent.ContextStrategy(9)},
		{Strategy: -1},
		{Price: &pricing.Price{Input: -1}},
		{PruneAt: -0.1},
		{KeepRecent: 1e400 * 0},
	} {
		_, err := agent.New(agent.WithModel(llm), agent.WithContextPolicy(p))
		if p.KeepRecent == 0 && p.PruneAt == 0 && p.Price == nil && p.Strategy >= 0 && p.Strategy <= agent.ContextOff {
			assert.NoError(t, err)
			continue
		}
		require.Error(t, err, "%+v", p)
		assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
		assert.Contains(t, err.Error(), "WithContextPolicy")
	}
}
