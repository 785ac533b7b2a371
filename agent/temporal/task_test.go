//go:build linux

package temporal_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
)

// TestTaskRunsAsChildWorkflow runs a sub-agent as a child workflow and
// SIGKILLs the worker while the sub-agent's tool call runs. The child's
// turn goes on from its own log on the next worker; the parent's task
// call, never started while the child ran, gets the child's answer, not
// an outcome-unknown result.
func TestTaskRunsAsChildWorkflow(t *testing.T) {
	// The gate holds the sub-agent's call until its worker is dead.
	gate := filepath.Join(t.TempDir(), "gate")
	setGate(t, gate, 0)
	f := newWorkerFleet(t, "harness-task-", "-full", "-gate="+gate)
	pool, c, store, effects := f.pool, f.client, f.store, f.effects
	// The deadline starts once the worker is built (minutes, on a loaded
	// machine).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pool.start()

	id := randomName("task-")
	turn, err := c.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{}, Prompt: "task sleep=0"})
	require.NoError(t, err)

	// The parent waits for its sub-agent, which Temporal shows as a
	// child workflow.
	st := waitState(t, ctx, turn, temporal.StatePaused)
	require.NotNil(t, st.Pause)
	require.Equal(t, session.ReasonAwaitingTool, st.Pause.Reason)
	require.Len(t, st.Pause.Tools, 1)
	call := st.Pause.Tools[0]
	assert.Equal(t, "task", call.Name)
	for len(st.Tasks) == 0 {
		st = waitState(t, ctx, turn, temporal.StatePaused)
	}
	child := c.Task(id, call.ID)
	assert.Equal(t, []string{child.WorkflowID}, st.Tasks)
	childID := agent.TaskSessionID(id, call.ID)
	assert.Equal(t, childID, child.SessionID)

	// Kill the worker while the sub-agent's call runs.
	waitLog(t, ctx, store, childID, "the sub-agent's call", func(events []session.Event) bool { return heldCall(events, 0, 0) })
	pool.killOne(rand.New(rand.NewPCG(3, 4)))
	setGate(t, gate, openGate)

	cres, err := child.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, cres.Reason)
	require.NotNil(t, cres.Tool, "the sub-agent's turn carries the parent's answer")
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	assert.Equal(t, "done: done: 1 results, 1 outcome unknown", res.Answer,
		"the parent read the sub-agent's answer, which reports its own call cut off")

	// The parent's log: the task call started once, after the child
	// ended, and finished with its answer; nothing is outcome unknown.
	tr, err := store.Load(ctx, id)
	require.NoError(t, err)
	starts, finished := 0, 0
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.ToolStarted:
			starts++
		case *session.ToolFinished:
			finished++
			assert.False(t, p.Result.IsError, "the task call's result: %+v", p.Result)
			assert.Equal(t, "done: 1 results, 1 outcome unknown", p.Result.Content[0].Text)
		case *session.TurnEnded:
			assert.Contains(t, []string{session.ReasonAwaitingTool, session.ReasonCompleted}, p.Reason, "the parent's turn never broke")
		}
	}
	assert.Equal(t, 1, starts)
	assert.Equal(t, 1, finished)
	assert.Equal(t, loggedTokens(ctr0(t, ctx, store, childID)), childSpend(tr.Events), "the sub-agent's whole spend is in the parent's log")

	// The child's log: cut off by the kill, continued, completed.
	ctr, err := store.Load(ctx, childID)
	require.NoError(t, err)
	assert.Equal(t, id, ctr.Header.Parent)
	assert.Equal(t, call.ID, ctr.Header.ParentCall)
	assert.True(t, hasEnd(ctr.Events, session.ReasonInterrupted), "the kill cut the sub-agent's turn off")
	assert.True(t, hasEnd(ctr.Events, session.ReasonCompleted))
	lines := effectLines(t, effects)
	for key, n := range lines {
		assert.LessOrEqual(t, n, 1, "effect %q at most once", key)
	}
}

// childSpend sums the tokens of the external spend records of a log:
// what its sub-agents spent.
func childSpend(events []session.Event) int64 {
	var n int64
	for _, e := range events {
		if p, ok := e.Data.(*session.ToolRecord); ok && p.Name == "external_spend" {
			var rec struct {
				Usage harness.Usage `json:"usage"`
			}
			if json.Unmarshal(p.Data, &rec) == nil {
				n += rec.Usage.InputTokens + rec.Usage.OutputTokens
			}
		}
	}
	return n
}

// ctr0 loads a session's events.
func ctr0(t *testing.T, ctx context.Context, store session.Store, id string) []session.Event {
	t.Helper()
	tr, err := store.Load(ctx, id)
	require.NoError(t, err)
	return tr.Events
}
