//go:build linux

package temporal_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
)

// budgetTokens is the session budget of TestBudgetAcrossWorkers: the
// fake model's seven calls of the turn spend about 1,400 tokens, the two
// the first worker makes about 300.
const budgetTokens = 700

// TestBudgetAcrossWorkers runs a turn on worker A, SIGKILLs A after its
// second model call, and lets worker B continue the turn. B must count
// what A spent (rebuilt from the log) against the session's budget: the
// turn pauses awaiting_budget when the whole session's spending, A's
// calls included, reaches the budget, and an answer raising the budget
// finishes it.
func TestBudgetAcrossWorkers(t *testing.T) {
	// The gate holds the calls after step 1 until A is dead.
	gate := filepath.Join(t.TempDir(), "gate")
	setGate(t, gate, 1)
	f := newWorkerFleet(t, "harness-budget-", fmt.Sprintf("-budget-tokens=%d", budgetTokens), "-gate="+gate)
	pool, c, store := f.pool, f.client, f.store
	// The deadline starts once the worker is built (minutes, on a loaded
	// machine).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pool.start() // worker A

	id := randomName("budget-")
	turn, err := c.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{}, Prompt: "effects=1 steps=6 sleep=0"})
	require.NoError(t, err)

	// A makes two model calls and starts the second step's call, which
	// the gate holds: then it dies, and B (the replacement) continues the
	// turn.
	events := waitLog(t, ctx, store, id, "worker A's call of step 2", func(events []session.Event) bool { return heldCall(events, 0, 1) })
	spentByA := loggedTokens(events)
	require.Positive(t, spentByA)
	require.Less(t, spentByA, int64(budgetTokens), "A alone stays under the budget")
	pool.killOne(rand.New(rand.NewPCG(1, 2)))
	setGate(t, gate, openGate)

	st := waitState(t, ctx, turn, temporal.StatePaused)
	require.NotNil(t, st.Pause)
	require.Equal(t, session.ReasonAwaitingBudget, st.Pause.Reason)
	require.NotNil(t, st.Pause.Spend)
	sp := st.Pause.Spend
	tr, err := store.Load(ctx, id)
	require.NoError(t, err)
	logged := loggedTokens(tr.Events)
	assert.Equal(t, "session_tokens", sp.Reached)
	assert.Equal(t, float64(budgetTokens), sp.Limit)
	assert.Equal(t, logged, sp.SessionTokens, "the spend counts every model call of the log, A's and B's")
	assert.GreaterOrEqual(t, sp.SessionTokens, int64(budgetTokens))
	// B's calls alone are under the budget: without A's, B would not
	// have paused here.
	assert.Less(t, sp.SessionTokens-spentByA, int64(budgetTokens), "B paused only because A's spending counts")
	assert.True(t, hasEnd(tr.Events, session.ReasonInterrupted), "A's run was cut off, and B continued it")

	// Too low a raise is refused; the turn still waits.
	require.NoError(t, turn.Answer(ctx, agent.Answers{Budget: &agent.Budgets{Session: agent.Budget{Tokens: budgetTokens + 1}}}))
	for st.AnswerError == "" {
		time.Sleep(50 * time.Millisecond)
		st = waitState(t, ctx, turn, temporal.StatePaused)
	}
	assert.Contains(t, st.AnswerError, "session_tokens is still reached")

	require.NoError(t, turn.Answer(ctx, agent.Answers{Budget: &agent.Budgets{Session: agent.Budget{Tokens: 100_000}}}))
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	assert.Regexp(t, `^done: 6 results, [01] outcome unknown$`, res.Answer)
	assert.Equal(t, 1, res.Turn)
	tr, err = store.Load(ctx, id)
	require.NoError(t, err)
	var set *session.BudgetSet
	for _, e := range tr.Events {
		if b, ok := e.Data.(*session.BudgetSet); ok {
			set = b
		}
	}
	require.NotNil(t, set, "the raised budget is logged")
	assert.Equal(t, int64(100_000), set.SessionTokens)
	assert.Greater(t, loggedTokens(tr.Events), int64(budgetTokens), "the turn went on past the old budget")
}

// loggedTokens sums the input and output tokens of the log's model
// answers.
func loggedTokens(events []session.Event) int64 {
	var n int64
	for _, e := range events {
		if p, ok := e.Data.(*session.AssistantMessage); ok && p.Usage != nil {
			n += p.Usage.InputTokens + p.Usage.OutputTokens
		}
	}
	return n
}

func hasEnd(events []session.Event, reason string) bool {
	for _, e := range events {
		if p, ok := e.Data.(*session.TurnEnded); ok && p.Reason == reason {
			return true
		}
	}
	return false
}
