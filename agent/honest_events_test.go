package agent_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// A call the policy denies, or the registry refuses, never runs: the host
// is told so by ToolCallRefused, never by a ToolCallStart that says it is
// about to run. Allowed calls of the same step still start.
func TestRefusedCallsGetNoStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	m := replay.NewScripted(replay.Call(
		replay.ToolCall("c1", "mark", map[string]any{"text": "a"}),
		replay.ToolCall("c2", "nope", map[string]any{}),
		replay.ToolCall("c3", "echo", map[string]any{"text": "hi"}),
	), replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file), echoTool()),
		agent.WithPermissions(policy(t, permission.Rules{Allow: []string{"echo"}, Deny: []string{"mark"}})))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "completed", end.Reason)
	var started []string
	for _, e := range ofType[*agent.ToolCallStart](evs) {
		started = append(started, e.Call.ID)
	}
	assert.Equal(t, []string{"c3"}, started, "only the call that runs starts")
	refused := ofType[*agent.ToolCallRefused](evs)
	require.Len(t, refused, 2)
	assert.Equal(t, "c1", refused[0].Call.ID)
	assert.Equal(t, harness.CodeDenied, refused[0].Code)
	assert.Equal(t, "c2", refused[1].Call.ID)
	assert.Equal(t, harness.CodeUnknownTool, refused[1].Code)
	assert.Len(t, ofType[*agent.ToolCallEnd](evs), 3, "every call still gets its result")
	// The refusal comes after the decision that made it.
	k := kinds(evs)
	assert.Less(t, indexOf(k, "permission_decision"), indexOf(k, "tool_call_refused"))
	line, err := agent.MarshalEvent(refused[0])
	require.NoError(t, err)
	assert.Contains(t, string(line), `"type":"tool_call_refused"`)
	assert.Contains(t, string(line), `"code":"denied"`)
}

// A call that waits for a slot among parallel calls, and is cancelled
// before it gets one, never started: the host sees its end only.
func TestCallCancelledBeforeItsSlotGetsNoStart(t *testing.T) {
	release := make(chan struct{})
	running := make(chan struct{}, 4)
	slow := tools.Define(tools.Spec{Name: "slow", Description: "Wait.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			running <- struct{}{}
			select {
			case <-ctx.Done():
			case <-release:
			}
			return harness.TextResult("done"), nil
		})
	m := replay.NewScripted(replay.Call(
		replay.ToolCall("c1", "slow", map[string]any{"text": "a"}),
		replay.ToolCall("c2", "slow", map[string]any{"text": "b"}),
	), replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(slow), agent.WithLimits(agent.Limits{MaxParallel: 1}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// c1 runs, holding the one slot; c2 waits for it when the turn
		// is cancelled.
		select {
		case <-running:
		case <-time.After(10 * time.Second):
			t.Error("the started call did not run")
		}
		cancel()
	}()
	var evs []agent.Event
	for ev := range s.Run(ctx, "go") {
		evs = append(evs, ev)
	}
	close(release)
	var started []string
	for _, e := range ofType[*agent.ToolCallStart](evs) {
		started = append(started, e.Call.ID)
	}
	assert.Equal(t, []string{"c1"}, started)
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 2)
	for _, e := range ends {
		if e.Call.ID == "c2" {
			assert.Equal(t, harness.CodeNotRun, e.Result.Code)
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}
