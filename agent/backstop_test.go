package agent_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
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
	"github.com/go-harness/harness/tools"
)

// stuckTool blocks, ignoring its context, until release is closed.
func stuckTool(name string, sideEffects bool, started chan<- string, release <-chan struct{}) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: "never stops in time", SideEffects: sideEffects, ConcurrencySafe: !sideEffects},
		func(ctx context.Context, call *tools.Call, in panicIn) (*harness.ToolResult, error) {
			if started != nil {
				started <- call.ID
			}
			<-release
			return harness.TextResult("finished late"), nil
		})
}

// abandoned is a call Close should name.
type abandoned struct{ Tool, CallID string }

func requireAbandoned(t *testing.T, err error, want ...abandoned) {
	t.Helper()
	require.ErrorIs(t, err, harness.CodeNotStopped)
	n := "call"
	if len(want) != 1 {
		n = "calls"
	}
	assert.Contains(t, err.Error(), fmt.Sprintf("closed with %d abandoned tool %s still running", len(want), n))
	for _, w := range want {
		assert.Contains(t, err.Error(), w.Tool+" (call "+w.CallID+")")
	}
}

// TestBackstopAbandonsAToolThatIgnoresItsContext: with no deadline
// middleware installed, the loop's own backstop ends the call, the turn
// goes on, and Close names the call still running.
func TestBackstopAbandonsAToolThatIgnoresItsContext(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	logger, logs := bufferLogger()
	store := session.NewMemory(session.StoreConfig{})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("c1", "stuck", nil), replay.ToolCall("c2", "echo", map[string]string{"text": "hi"})), replay.Response{Text: "moving on"})
	loop, err := agent.New(agent.WithModel(llm), agent.WithTools(stuckTool("stuck", true, nil, release), echoTool()),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithLogger(logger),
		agent.WithLimits(agent.Limits{Backstop: 30 * time.Millisecond, CancelWait: 10 * time.Millisecond, CloseWait: 5 * time.Second}))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)

	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "the turn goes on after the abandoned call")
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 2)
	stuck := ends[0].Result
	assert.Equal(t, "c1", ends[0].Call.ID)
	assert.True(t, stuck.IsError)
	assert.Equal(t, harness.CodeTimeout, stuck.Code)
	assert.Contains(t, stuck.Text(), "did not stop when asked")
	assert.Contains(t, stuck.Text(), "may still be running")
	assert.Contains(t, stuck.Text(), "outcome is unknown", "a tool with side effects has an unknown outcome")
	assert.Equal(t, "echo: hi", ends[1].Result.Text(), "the next call runs")
	assert.Equal(t, "moving on", ofType[*agent.TextDelta](evs)[0].Text)

	// What the model saw next is logged.
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var logged *session.ToolFinished
	for _, e := range tr.Events {
		if tf, ok := e.Data.(*session.ToolFinished); ok && tf.CallID == "c1" {
			logged = tf
		}
	}
	require.NotNil(t, logged)
	assert.Equal(t, harness.CodeTimeout, logged.Result.Code)

	require.Len(t, s.Abandoned(), 1)
	assert.Equal(t, "stuck", s.Abandoned()[0].Tool)
	assert.Contains(t, logs.String(), "abandoned")

	err = loop.Close()
	requireAbandoned(t, err, abandoned{Tool: "stuck", CallID: "c1"})

	close(release)
	require.Eventually(t, func() bool { return len(s.Abandoned()) == 0 }, 5*time.Second, time.Millisecond,
		"the abandoned call is forgotten when it returns")
}

// TestCloseDoesNotWaitForAToolThatIgnoresCancellation: Close cancels the
// turn, the dispatcher abandons the call, the turn logs its end, and Close
// returns naming the call.
func TestCloseDoesNotWaitForAToolThatIgnoresCancellation(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	defer close(release)
	started := make(chan string, 2)
	store := session.NewMemory(session.StoreConfig{})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("a", "stuck", nil), replay.ToolCall("b", "stuck", nil)), replay.Response{Text: "never"})
	loop, err := agent.New(agent.WithModel(llm), agent.WithTools(stuckTool("stuck", false, started, release)),
		agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithLimits(agent.Limits{MaxParallel: 1, Backstop: time.Hour, CancelWait: 10 * time.Millisecond, CloseWait: 5 * time.Second}))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)

	type outcome struct {
		evs []agent.Event
		end *agent.TurnEnd
		err error
	}
	got := make(chan outcome, 1)
	go func() {
		var o outcome
		for ev, err := range s.Run(context.Background(), "go") {
			o.evs = append(o.evs, ev)
			if te, ok := ev.(*agent.TurnEnd); ok {
				o.end, o.err = te, err
			}
		}
		got <- o
	}()
	assert.Equal(t, "a", <-started)

	err = s.Close()
	requireAbandoned(t, err, abandoned{Tool: "stuck", CallID: "a"})
	o := <-got
	require.NotNil(t, o.end)
	assert.Equal(t, session.ReasonCancelled, o.end.Reason)
	assert.ErrorIs(t, o.err, context.Canceled)
	ends := ofType[*agent.ToolCallEnd](o.evs)
	require.Len(t, ends, 2)
	byID := map[string]*harness.ToolResult{}
	for _, e := range ends {
		byID[e.Call.ID] = e.Result
	}
	assert.Equal(t, harness.CodeAborted, byID["a"].Code)
	assert.Contains(t, byID["a"].Text(), "cancelled with its turn, but it did not stop")
	assert.Equal(t, harness.CodeNotRun, byID["b"].Code, "the call waiting for a slot never started")
	te := lastTurnEnded(t, store, s.Header().ID)
	assert.Equal(t, session.ReasonCancelled, te.Reason, "the end of the turn is logged")
	require.NoError(t, loop.Close())
}

// hangingModel blocks in its stream, ignoring ctx, until release closes.
type hangingModel struct {
	started chan<- struct{}
	release <-chan struct{}
}

func (m hangingModel) Info() model.Info { return model.Info{Name: "hanging"} }

func (m hangingModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.started <- struct{}{}
		<-m.release
		yield(model.Chunk{}, ctx.Err())
	}
}

// TestCloseGivesUpOnATurnThatDoesNotStop: a model that ignores
// cancellation cannot hang Close; the log is closed when the turn ends.
func TestCloseGivesUpOnATurnThatDoesNotStop(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	store := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(hangingModel{started: started, release: release}), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithLimits(agent.Limits{CloseWait: 20 * time.Millisecond}))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	done := make(chan *agent.TurnEnd, 1)
	go func() {
		var end *agent.TurnEnd
		for ev := range s.Run(context.Background(), "go") {
			if te, ok := ev.(*agent.TurnEnd); ok {
				end = te
			}
		}
		done <- end
	}()
	<-started
	err = loop.Close()
	assert.ErrorIs(t, err, harness.CodeNotStopped)
	assert.ErrorIs(t, store.Delete(context.Background(), s.Header().ID), harness.CodeLocked, "the log stays open while the turn runs")

	close(release)
	end := <-done
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCancelled, end.Reason)
	te := lastTurnEnded(t, store, s.Header().ID)
	assert.Equal(t, session.ReasonCancelled, te.Reason, "the turn logged its end before the log was closed")
	require.NoError(t, store.Delete(context.Background(), s.Header().ID), "the log was closed when the turn ended")
}

func TestCallLimitsValidation(t *testing.T) {
	for name, l := range map[string]agent.Limits{
		"negative backstop":    {Backstop: -time.Second},
		"negative cancel wait": {CancelWait: -1},
		"negative close wait":  {CloseWait: -time.Minute},
		"margin below one":     {Margin: 0.5},
		"negative margin":      {Margin: -2},
		"NaN margin":           {Margin: math.NaN()},
	} {
		t.Run(name, func(t *testing.T) {
			loop, err := agent.New(agent.WithModel(replay.NewScripted()), agent.WithLimits(l))
			assert.Nil(t, loop, "no loop for an invalid configuration")
			require.ErrorIs(t, err, harness.CodeInvalidOption)
			assert.Contains(t, err.Error(), "WithLimits: Limits.")
			var he *harness.Error
			assert.True(t, errors.As(err, &he), "a *harness.Error: %v", err)
		})
	}
	loop, err := agent.New(agent.WithModel(replay.NewScripted()), agent.WithLimits(agent.Limits{Margin: 1, Backstop: time.Second}))
	require.NoError(t, err)
	defer loop.Close()
}
