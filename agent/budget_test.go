package agent_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// answerTurn runs Session.Answer to its end.
func answerTurn(t *testing.T, s *agent.Session, a agent.Answers) ([]agent.Event, *agent.TurnEnd, error) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	var endErr error
	for ev, err := range s.Answer(context.Background(), a) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end, endErr = te, err
		}
	}
	require.NotNil(t, end)
	return evs, end, endErr
}

// A session token budget pauses the turn before the model call that
// would pass it; the host sees what was spent, a too small raise is
// refused with nothing logged, and a raise above the spend continues the
// same turn.
func TestBudgetPausesAndARaiseContinues(t *testing.T) {
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", echoIn{Text: "a"})}, Usage: usage(600, 100)},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c2", "echo", echoIn{Text: "b"})}, Usage: usage(700, 100)},
		replay.Response{Text: "done", Usage: usage(800, 50)},
	)
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Session: agent.Budget{Tokens: 1000}}}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingBudget, end.Reason)
	assert.Len(t, m.Requests(), 2, "the third call waits for the budget")
	br := ofType[*agent.BudgetReached](evs)
	require.Len(t, br, 1)
	assert.Equal(t, "session_tokens", br[0].Spend.Reached)
	assert.Equal(t, int64(1500), br[0].Spend.SessionTokens)
	assert.Equal(t, int64(1500), br[0].Spend.TurnTokens)
	assert.False(t, br[0].Hard)
	p := s.Paused()
	require.NotNil(t, p)
	assert.Equal(t, session.ReasonAwaitingBudget, p.Reason)
	assert.Equal(t, int64(1500), p.Spend.SessionTokens)
	assert.Nil(t, s.Pending(), "no call waits for approval")

	// Answers of another kind, and a raise still under the spend, are refused.
	_, end, err = answerTurn(t, s, agent.Answers{Approvals: map[string]permission.Answer{}})
	require.Error(t, err)
	assert.ErrorIs(t, err, agent.CodeNothingPending)
	before := len(logEvents(t, store, s.Header().ID))
	_, _, err = answerTurn(t, s, agent.Answers{Budget: &agent.Budgets{Session: agent.Budget{Tokens: 1200}}})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)
	assert.Contains(t, err.Error(), "session_tokens")
	assert.Len(t, logEvents(t, store, s.Header().ID), before, "nothing logged")

	evs, end, err = answerTurn(t, s, agent.Answers{Budget: &agent.Budgets{Session: agent.Budget{Tokens: 5000}}})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 3, end.Steps, "the same turn goes on at its next step")
	assert.Len(t, m.Requests(), 3)
	assert.Nil(t, s.Paused())
	set := ofPayload[*session.BudgetSet](logEvents(t, store, s.Header().ID))
	require.Len(t, set, 1)
	assert.Equal(t, int64(5000), set[0].SessionTokens)
	assert.Equal(t, int64(2350), s.Usage().InputTokens+s.Usage().OutputTokens)
}

// A turn paused at its budget, its program gone, is continued by
// another: the pause and the spend come from the log, and a loop whose
// own budget is higher continues it without a raise in the answer.
func TestBudgetPauseSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	store := func() session.Store { return session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{}) }
	script := []replay.Response{
		{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", echoIn{Text: "a"})}, Usage: usage(600, 100)},
		{Text: "done", Usage: usage(800, 50)},
	}
	m := replay.NewScripted(script[0])
	loop, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store()}),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Turn: agent.Budget{Tokens: 500}}}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingBudget, end.Reason)
	id := s.Header().ID
	require.NoError(t, loop.Close())

	// The same budget: still reached, the answer is refused.
	m2 := replay.NewScripted(script[1])
	_, s2 := resumeSession(t, id, agent.WithModel(m2), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store()}),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Turn: agent.Budget{Tokens: 500}}}))
	p := s2.Paused()
	require.NotNil(t, p)
	assert.Equal(t, session.ReasonAwaitingBudget, p.Reason)
	assert.Equal(t, "turn_tokens", p.Spend.Reached)
	assert.Equal(t, int64(700), p.Spend.TurnTokens)
	_, _, err = answerTurn(t, s2, agent.Answers{})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)
	require.NoError(t, s2.Close())

	// A program started with a higher budget continues the turn.
	_, s3 := resumeSession(t, id, agent.WithModel(m2), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store()}),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Turn: agent.Budget{Tokens: 2000}}}))
	_, end, err = answerTurn(t, s3, agent.Answers{})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 2, end.Steps)
	require.Len(t, m2.Requests(), 1)
	assert.Equal(t, "echo: a", lastResults(m2.Requests()[0], 1)[0].Text(), "the continued turn sends what the paused one had")
}

// A hard ceiling ends the turn instead of pausing it.
func TestHardBudgetStopsTheTurn(t *testing.T) {
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", echoIn{Text: "a"})}, Usage: usage(1_000_000, 0)},
		replay.Response{Text: "never"},
	)
	prices, err := pricing.NewTable("USD", map[string]pricing.Price{"priced": {Input: 1, Output: 2}})
	require.NoError(t, err)
	_, s := newSession(t, agent.WithModel(m.WithInfo(model.Info{Name: "priced"})), agent.WithTools(echoTool()), agent.WithPrices(prices),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Turn: agent.Budget{Cost: 0.5}}, HardBudget: true}))
	evs, end, err := collect(t, s, context.Background(), "go")
	assert.ErrorIs(t, err, agent.CodeBudgetExceeded)
	assert.Equal(t, session.ReasonBudgetExceeded, end.Reason)
	assert.Len(t, m.Requests(), 1)
	br := ofType[*agent.BudgetReached](evs)
	require.Len(t, br, 1)
	assert.True(t, br[0].Hard)
	assert.Equal(t, "turn_cost", br[0].Spend.Reached)
	assert.InDelta(t, 1.0, br[0].Spend.TurnCost, 1e-9)
	assert.Nil(t, s.Paused())
}

// A cost budget without a price table could never be reached: New
// refuses it, as it refuses negative budgets.
func TestBudgetOptionErrors(t *testing.T) {
	m := replay.NewScripted()
	_, err := agent.New(agent.WithModel(m), agent.WithLimits(agent.Limits{Budget: agent.Budgets{Session: agent.Budget{Cost: 1}}}))
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), "WithPrices")
	_, err = agent.New(agent.WithModel(m), agent.WithLimits(agent.Limits{Budget: agent.Budgets{Turn: agent.Budget{Tokens: -1}}}))
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
}

// A sub-agent gets what is left of its parent's budget and stops at it;
// the parent then pauses at its own budget before its next model call,
// the child's spend counted.
func TestSubAgentStopsAtTheParentsRemainingBudget(t *testing.T) {
	parent := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{task("t1", "explore", "child")}, Usage: usage(300, 100)},
		replay.Response{Text: "never"},
	)
	child := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("e1", "echo", echoIn{Text: "1"})}, Usage: usage(500, 50)},
		replay.Response{Text: "partial", ToolCalls: []harness.ToolCall{replay.ToolCall("e2", "echo", echoIn{Text: "2"})}, Usage: usage(100, 10)},
		replay.Response{Text: "never reached"},
	)
	m := &routeModel{routes: map[string]model.Model{"go": parent, "child": child}}
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool()),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Session: agent.Budget{Tokens: 1000}}}),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "explore", Description: "x", Tools: []string{"echo"}}}}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingBudget, end.Reason)
	assert.Len(t, child.Requests(), 2, "the child had 600 tokens left: it stopped before its third call")
	assert.Len(t, parent.Requests(), 1)
	var childEnd *agent.TurnEnd
	for _, se := range ofType[*agent.SubAgentEvent](evs) {
		if te, ok := se.Event.(*agent.TurnEnd); ok {
			childEnd = te
		}
	}
	require.NotNil(t, childEnd)
	assert.Equal(t, session.ReasonBudgetExceeded, childEnd.Reason)
	var taskEnd *agent.ToolCallEnd
	for _, e := range ofType[*agent.ToolCallEnd](evs) {
		if e.Call.ID == "t1" {
			taskEnd = e
		}
	}
	require.NotNil(t, taskEnd)
	assert.False(t, taskEnd.Result.IsError)
	assert.Contains(t, resultText(taskEnd.Result), "budget")
	br := ofType[*agent.BudgetReached](evs)
	require.Len(t, br, 1, "the parent's own pause (the child's is inside its SubAgentEvent)")
	assert.Equal(t, int64(400+550+110), br[0].Spend.SessionTokens)
}
