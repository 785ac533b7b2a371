package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
)

// crashedLog makes a session that died while its call c1 ran (started,
// no end) in step 1, and returns its id.
func crashedLog(t *testing.T, store session.Store) string {
	t.Helper()
	ctx := context.Background()
	log, err := store.Create(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, err = log.Append(ctx,
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("run it")}},
		&session.ModelRequest{Step: 1, Model: "m"},
		&session.AssistantMessage{Step: 1, Finish: "tool_calls", Content: []harness.Block{
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"a"}`}},
		}},
		&session.ToolStarted{Step: 1, CallID: "c1", Name: "echo"},
	)
	require.NoError(t, err)
	require.NoError(t, log.Close())
	return log.Header().ID
}

func TestContinueFinishesAnInterruptedTurn(t *testing.T) {
	ctx := context.Background()
	store := sessionStore()
	id := crashedLog(t, store)

	m := replay.NewScripted(replay.Response{Text: "recovered"})
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.ResumeSession(ctx, id)
	require.NoError(t, err)
	require.True(t, s.Interrupted())
	var end *agent.TurnEnd
	for ev, err := range s.Continue(ctx) {
		require.NoError(t, err)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 2, end.Steps, "the continuation's step follows the interrupted turn's")
	req := m.Requests()[0]
	res := lastResults(req, 1)
	require.Len(t, res, 1)
	assert.Equal(t, harness.CodeOutcomeUnknown, res[0].Code, "the cut-off call is reported, not run again")
	assert.False(t, s.Interrupted())
	require.NoError(t, s.Close())

	// The session resumes with nothing to repair, and nothing to continue.
	s2, err := loop.ResumeSession(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, s2.Warnings())
	assert.False(t, s2.Interrupted())
	var got *agent.TurnEnd
	for ev := range s2.Continue(ctx) {
		got, _ = ev.(*agent.TurnEnd)
	}
	require.NotNil(t, got)
	assert.ErrorIs(t, got.Err, agent.CodeNothingPending)
	tr, err := store.Load(ctx, id)
	require.NoError(t, err)
	var ends []string
	for _, e := range tr.Events {
		if te, ok := e.Data.(*session.TurnEnded); ok {
			ends = append(ends, te.Reason)
		}
	}
	assert.Equal(t, []string{session.ReasonInterrupted, session.ReasonCompleted}, ends)
}

func TestContinueCutOffAgainIsInterruptedAgain(t *testing.T) {
	ctx := context.Background()
	store := sessionStore()
	id := crashedLog(t, store)
	// The first resume repairs the turn; its continuation dies in step 2
	// while a call runs.
	loop0, err := agent.New(agent.WithModel(replay.NewScripted()), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	s0, err := loop0.ResumeSession(ctx, id)
	require.NoError(t, err)
	require.NoError(t, s0.Close())
	require.NoError(t, loop0.Close())
	log, _, err := store.Open(ctx, id)
	require.NoError(t, err)
	_, err = log.Append(ctx,
		&session.ModelRequest{Step: 2, Model: "m"},
		&session.AssistantMessage{Step: 2, Finish: "tool_calls", Content: []harness.Block{
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c2", Name: "echo", Arguments: `{"text":"b"}`}},
		}},
		&session.ToolStarted{Step: 2, CallID: "c2", Name: "echo"},
	)
	require.NoError(t, err)
	require.NoError(t, log.Close())

	m := replay.NewScripted(replay.Response{Text: "done"})
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.ResumeSession(ctx, id)
	require.NoError(t, err)
	require.True(t, s.Interrupted())
	require.NotEmpty(t, s.Warnings())
	var end *agent.TurnEnd
	for ev := range s.Continue(ctx) {
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 3, end.Steps)
	res := lastResults(m.Requests()[0], 1)
	require.Len(t, res, 1)
	assert.Equal(t, "c2", res[0].CallID)
	assert.Equal(t, harness.CodeOutcomeUnknown, res[0].Code)
}
