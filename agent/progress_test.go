package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call's reports reach the host as ToolCallProgress events before its
// ToolCallEnd. A slow host gets them merged and bounded: the tool never
// waits for it, and nothing reported is lost without being counted.
func TestToolCallProgress(t *testing.T) {
	leakcheck.Check(t)
	const pieces, size = 2000, 100
	chatty := tools.Define(tools.Spec{Name: "chatty", Description: "Report output, then finish."},
		func(ctx context.Context, call *tools.Call, _ struct{}) (*harness.ToolResult, error) {
			require.NotNil(t, call.OnProgress, "the dispatcher listens")
			for i := range pieces {
				call.OnProgress(tools.Progress{Output: fmt.Sprintf("%-*d", size-1, i) + "\n"})
			}
			call.OnProgress(tools.Progress{Progress: 2, Total: 4, Message: "half"})
			return harness.TextResult("done"), nil
		})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("c1", "chatty", map[string]any{})), replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(chatty))

	var evs []agent.Event
	for ev, err := range s.Run(context.Background(), "go") {
		require.NoError(t, err)
		if _, ok := ev.(*agent.ToolCallProgress); ok && len(ofType[*agent.ToolCallProgress](evs)) == 0 {
			time.Sleep(50 * time.Millisecond) // a slow host
		}
		evs = append(evs, ev)
	}
	progress := ofType[*agent.ToolCallProgress](evs)
	require.NotEmpty(t, progress)
	assert.Less(t, len(progress), pieces, "pieces the host had not taken were merged")
	var total int64
	var out strings.Builder
	for _, p := range progress {
		assert.Equal(t, "c1", p.CallID)
		assert.Equal(t, "chatty", p.Name)
		assert.LessOrEqual(t, len(p.Output), 16<<10, "the output kept per call is bounded")
		total += int64(len(p.Output)) + p.Dropped
		out.WriteString(p.Output)
	}
	assert.Equal(t, int64(pieces*size), total, "every byte is shown or counted as dropped")
	assert.True(t, strings.HasSuffix(out.String(), fmt.Sprintf("%-*d\n", size-1, pieces-1)), "the latest output is kept")
	last := progress[len(progress)-1]
	assert.Equal(t, [3]any{2.0, 4.0, "half"}, [3]any{last.Progress, last.Total, last.Message})

	k := kinds(evs)
	end := -1
	for i, x := range k {
		if x == "tool_call_end" {
			end = i
		}
		if x == "tool_call_progress" {
			assert.Less(t, end, 0, "progress comes before the call's end")
		}
	}
	line, err := agent.MarshalEvent(last)
	require.NoError(t, err)
	assert.Contains(t, string(line), `"type":"tool_call_progress"`)
	assert.Contains(t, string(line), `"call_id":"c1"`)
}

// Reports after the call returned, from a goroutine the tool left
// behind, are ignored rather than racing the next step.
func TestProgressAfterReturnIgnored(t *testing.T) {
	leakcheck.Check(t)
	var kept *tools.Call
	late := tools.Define(tools.Spec{Name: "late", Description: "Return at once."},
		func(ctx context.Context, call *tools.Call, _ struct{}) (*harness.ToolResult, error) {
			kept = call
			return harness.TextResult("done"), nil
		})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("c1", "late", map[string]any{})), replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(late))
	evs, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Empty(t, ofType[*agent.ToolCallProgress](evs))
	require.NotNil(t, kept)
	kept.OnProgress(tools.Progress{Output: "too late"}) // does not block or panic
}
