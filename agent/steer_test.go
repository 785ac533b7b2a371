package agent_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// gateTool blocks each call until the test opens the gate, and says
// when it is running.
func gateTool(gate <-chan struct{}, running chan<- string) tools.Tool {
	return tools.Define(tools.Spec{Name: "wait", Description: "Wait.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			running <- in.Text
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return harness.TextResult("waited " + in.Text), nil
		})
}

// A message steered in while a step's calls run in parallel reaches the
// model after all of their results, before its next call, logged with
// that step.
func TestSteerDuringParallelCalls(t *testing.T) {
	gate := make(chan struct{})
	running := make(chan string, 3)
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("w1", "wait", echoIn{Text: "a"}), replay.ToolCall("w2", "wait", echoIn{Text: "b"}), replay.ToolCall("w3", "wait", echoIn{Text: "c"})),
		replay.Response{Text: "done, and short"})
	store := sessionStore()
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(gateTool(gate, running)), agent.WithStores(agent.Stores{Sessions: store}))
	go func() {
		for range 3 {
			<-running
		}
		d, err := s.Steer(context.Background(), "keep it short")
		assert.NoError(t, err)
		assert.Equal(t, agent.Steered, d)
		close(gate)
	}()
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 2, end.Steps)
	sd := ofType[*agent.SteerDelivered](evs)
	require.Len(t, sd, 1)
	assert.Equal(t, 2, sd[0].Step)
	assert.False(t, sd[0].Queued)
	// The second request: prompt, the calls, their three results, then the steer.
	req := m.Requests()[1]
	msgs := req.Messages
	last := msgs[len(msgs)-1]
	assert.Equal(t, harness.RoleUser, last.Role)
	assert.Equal(t, "keep it short", last.Text())
	assert.Len(t, lastResults(req, 3), 3)
	logged := ofPayload[*session.UserMessage](logEvents(t, store, s.Header().ID))
	require.Len(t, logged, 2)
	assert.True(t, logged[1].Steer)
	assert.Equal(t, 2, logged[1].Step)
	assert.Empty(t, s.Queued())
}

// A steer racing the end of a turn is never lost: it is either read by
// the turn (which then takes one more step) or queued as the next turn,
// and Steer says which.
func TestSteerRacingTheEndOfATurn(t *testing.T) {
	rounds := longtest.Pick(40, 400)
	for round := range rounds {
		m := replay.NewScripted()
		// Every steer the turn reads takes one more step: the model
		// answers as often as it is asked.
		var again func(*model.Request) replay.Response
		again = func(*model.Request) replay.Response {
			m.Push(replay.Response{Respond: again})
			return replay.Response{Text: "again"}
		}
		m.Push(replay.Response{Respond: func(req *model.Request) replay.Response {
			m.Push(replay.Response{Respond: again})
			return replay.Response{Text: "ok"}
		}})
		_, s := newSession(t, agent.WithModel(m))
		var (
			mu      sync.Mutex
			results = map[string]agent.Delivery{}
			wg      sync.WaitGroup
		)
		n := 1 + rand.IntN(3)
		for i := range n {
			wg.Go(func() {
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
				text := fmt.Sprintf("steer %d.%d", round, i)
				d, err := s.Steer(context.Background(), text)
				assert.NoError(t, err)
				mu.Lock()
				results[text] = d
				mu.Unlock()
			})
		}
		evs, end, err := collect(t, s, context.Background(), "go")
		require.NoError(t, err)
		wg.Wait()
		require.Equal(t, session.ReasonCompleted, end.Reason)
		delivered := map[string]bool{}
		for _, e := range ofType[*agent.SteerDelivered](evs) {
			require.False(t, e.Queued, "a completed turn reads every steer it accepted")
			delivered[e.Text] = true
		}
		queued := map[string]bool{}
		for _, q := range s.Queued() {
			queued[q] = true
		}
		for text, d := range results {
			switch d {
			case agent.Steered:
				assert.True(t, delivered[text], "%s was said steered and must be read by the turn", text)
			case agent.Queued:
				assert.True(t, queued[text], "%s was said queued and must be in the queue", text)
			}
			assert.NotEqual(t, delivered[text], queued[text], "%s is either read or queued, once", text)
		}
		s.Close()
	}
}

// Queued messages run as turns of their own, in order; the TurnEnd says
// how many wait.
func TestQueueRunsAsNextTurns(t *testing.T) {
	m := replay.NewScripted(replay.Response{Text: "one"}, replay.Response{Text: "two"}, replay.Response{Text: "three"})
	_, s := newSession(t, agent.WithModel(m))
	d, err := s.Steer(context.Background(), "second")
	require.NoError(t, err)
	assert.Equal(t, agent.Queued, d, "no turn runs: a steer is queued")
	require.NoError(t, s.Queue(context.Background(), "third"))
	_, end, err := collect(t, s, context.Background(), "first")
	require.NoError(t, err)
	assert.Equal(t, 2, end.Queued)
	for _, want := range []string{"second", "third"} {
		var end *agent.TurnEnd
		for ev := range s.RunQueued(context.Background()) {
			if te, ok := ev.(*agent.TurnEnd); ok {
				end = te
			}
		}
		require.NotNil(t, end)
		assert.Equal(t, session.ReasonCompleted, end.Reason)
		reqs := m.Requests()
		msgs := reqs[len(reqs)-1].Messages
		assert.Equal(t, want, msgs[len(msgs)-1].Text())
	}
	for ev, err := range s.RunQueued(context.Background()) {
		assert.IsType(t, &agent.TurnEnd{}, ev)
		assert.ErrorIs(t, err, agent.CodeNothingPending)
	}
	_, err = s.Steer(context.Background(), " ")
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)
}

// A steered session replays strictly: the steered message is in the
// log with its step, and a host that steers at the same point gets the
// same requests; a resumed session's history holds it too.
func TestSteeredSessionReplaysStrictly(t *testing.T) {
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("e1", "echo", echoIn{Text: "a"})),
		replay.Call(replay.ToolCall("e2", "echo", echoIn{Text: "b"})),
		replay.Response{Text: "done"})
	store := sessionStore()
	run := func(s *agent.Session) ([]agent.Event, *agent.TurnEnd, error) {
		var evs []agent.Event
		var end *agent.TurnEnd
		var endErr error
		for ev, err := range s.Run(context.Background(), "go") {
			evs = append(evs, ev)
			if se, ok := ev.(*agent.StepEnd); ok && se.Step == 1 {
				d, serr := s.Steer(context.Background(), "use b next")
				require.NoError(t, serr)
				require.Equal(t, agent.Steered, d)
			}
			if te, ok := ev.(*agent.TurnEnd); ok {
				end, endErr = te, err
			}
		}
		return evs, end, endErr
	}
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store}))
	_, end, err := run(s)
	require.NoError(t, err)
	require.Equal(t, 3, end.Steps)

	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	strict, err := replay.NewStrict(tr)
	require.NoError(t, err)
	_, s2 := newSession(t, agent.WithModel(strict), agent.WithTools(echoTool()))
	evs, end, err := run(s2)
	require.NoError(t, err, "no drift")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 3, end.Steps)
	assert.Len(t, ofType[*agent.SteerDelivered](evs), 1)
	assert.Equal(t, s.Messages(), s2.Messages())

	// Without the steer, the strict replay says the history drifted.
	strict2, err := replay.NewStrict(tr)
	require.NoError(t, err)
	_, s3 := newSession(t, agent.WithModel(strict2), agent.WithTools(echoTool()))
	_, _, err = collect(t, s3, context.Background(), "go")
	assert.ErrorIs(t, err, harness.CodeReplayDrift)

	// A resumed session's history has the steered message where it was.
	want := s.Messages()
	require.NoError(t, s.Close())
	_, s4 := resumeSession(t, s.Header().ID, agent.WithModel(replay.NewScripted()), agent.WithStores(agent.Stores{Sessions: store}))
	assert.Equal(t, want, s4.Messages())
}
