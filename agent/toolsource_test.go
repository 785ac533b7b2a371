package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/tools"
)

// changingSource is a tools.Source whose tools the test changes.
type changingSource struct {
	mu    sync.Mutex
	tools []tools.Tool
	gen   uint64
}

func (s *changingSource) Tools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tools.Tool(nil), s.tools...)
}

func (s *changingSource) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

func (s *changingSource) set(ts ...tools.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools, s.gen = ts, s.gen+1
}

func namedTool(name string) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: "Say the tool's name."},
		func(context.Context, *tools.Call, struct{}) (*harness.ToolResult, error) {
			return harness.TextResult("ran " + name), nil
		})
}

func toolNames(req *model.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestToolSourceChangesBetweenSteps: a source's change is taken at the
// start of the next step, never within one, and a broken change keeps the
// previous tools.
func TestToolSourceChangesBetweenSteps(t *testing.T) {
	src := &changingSource{}
	src.set(namedTool("mcp__srv__first"))
	var llm *replay.Model
	llm = replay.NewScripted(
		replay.Response{Respond: func(*model.Request) replay.Response {
			// The source changes while the model answers: this step's
			// calls are still checked against the tools it was shown.
			src.set(namedTool("mcp__srv__first"), namedTool("mcp__srv__second"))
			return replay.Call(replay.ToolCall("c1", "mcp__srv__second", map[string]any{}), replay.ToolCall("c2", "mcp__srv__first", map[string]any{}))
		}},
		replay.Response{Respond: func(*model.Request) replay.Response {
			src.set(namedTool("Not Valid"))
			return replay.Call(replay.ToolCall("c3", "mcp__srv__second", map[string]any{}))
		}},
		replay.Response{Text: "done"},
	)
	loop, s := newSession(t, agent.WithModel(llm), agent.WithTools(echoTool()), agent.WithToolSource(src))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, 3, end.Steps)

	reqs := llm.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"echo", "mcp__srv__first"}, toolNames(reqs[0]))
	assert.Equal(t, []string{"echo", "mcp__srv__first", "mcp__srv__second"}, toolNames(reqs[1]), "the change shows at the next step")
	assert.Equal(t, []string{"echo", "mcp__srv__first", "mcp__srv__second"}, toolNames(reqs[2]), "an invalid change keeps the previous tools")

	var results []*harness.ToolResult
	for _, m := range reqs[1].Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				results = append(results, b.ToolResult)
			}
		}
	}
	require.Len(t, results, 2)
	assert.Equal(t, harness.CodeUnknownTool, results[0].Code, "a tool added during the step is not callable in it")
	assert.Equal(t, "ran mcp__srv__first", results[1].Text())
	last := reqs[2].Messages[len(reqs[2].Messages)-1].Content[0].ToolResult
	assert.Equal(t, "ran mcp__srv__second", last.Text())
	assert.Len(t, loop.Tools(), 3)
}
