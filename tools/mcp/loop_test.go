package mcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
)

var _ tools.Source = mcp.Set(nil)

// TestThroughTheLoop: the set as a tool source of a real loop with the
// spill middleware: a large result is spilled like any tool's, and a tool
// the server adds is offered from the next step on.
func TestThroughTheLoop(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("test")})
	gen := set.Generation()

	store, err := spill.NewMemory(spill.StoreConfig{})
	require.NoError(t, err)
	spilling, err := spill.Middleware(spill.Config{})
	require.NoError(t, err)
	llm := replay.NewScripted(
		replay.Call(
			replay.ToolCall("c1", "mcp__test__big", map[string]any{"n": 200_000}),
			replay.ToolCall("c2", "mcp__test__add_tool", map[string]any{"name": "zebra"}),
		),
		replay.Response{Respond: func(*model.Request) replay.Response {
			// The refresh runs in the background; the next step takes it.
			deadline := time.Now().Add(time.Minute)
			for set.Generation() == gen && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			return replay.Call(replay.ToolCall("c3", "mcp__test__echo", map[string]any{"text": "x"}))
		}},
		replay.Call(replay.ToolCall("c4", "mcp__test__zebra", map[string]any{})),
		replay.Response{Text: "done"},
	)
	loop, err := agent.New(agent.WithModel(llm), agent.WithToolSource(set), agent.WithStores(agent.Stores{Output: store}), agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	defer s.Close()
	for _, err := range s.Run(context.Background(), "go") {
		require.NoError(t, err)
	}
	reqs := llm.Requests()
	require.Len(t, reqs, 4)

	big := toolResults(reqs[1])["c1"]
	require.NotNil(t, big)
	assert.False(t, big.IsError)
	assert.Less(t, len(big.Text()), 40_000, "the model sees a preview")
	assert.Contains(t, big.Text(), tools.OutputScheme, "and where the whole output is")

	assert.NotContains(t, toolNames(reqs[1]), "mcp__test__zebra")
	assert.Contains(t, toolNames(reqs[2]), "mcp__test__zebra", "offered from the step after the change")
	assert.Equal(t, "added zebra", toolResults(reqs[3])["c4"].Text())
	assert.Equal(t, harness.BlockToolResult, reqs[3].Messages[len(reqs[3].Messages)-1].Content[0].Type)
}

func toolNames(req *model.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}
