package temporal_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/agent/temporal/internal/effect"
	"github.com/go-harness/harness/agent/temporal/internal/fakemodel"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// fixture is an in-process worker on a fresh queue and schema.
type fixture struct {
	c       client.Client
	tc      *temporal.Client
	store   session.Store
	effects string
	w       *temporal.Worker
}

func fakeModel(t testing.TB) model.Model {
	fake := httptest.NewServer(fakemodel.Handler())
	t.Cleanup(fake.Close)
	m, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "unused", Model: fakemodel.Model})
	require.NoError(t, err)
	return m
}

func newFixture(t testing.TB, extra ...agent.Option) *fixture {
	return newGatedFixture(t, nil, extra...)
}

// newGatedFixture is newFixture whose record_effect calls wait until
// gate is closed (effect.Config.Gate); nil does not wait.
func newGatedFixture(t testing.TB, gate <-chan struct{}, extra ...agent.Option) *fixture {
	addr, pgBase := servers(t)
	_, store := newSchema(t, pgBase)
	f := &fixture{c: dialTemporal(t, addr), store: store, effects: filepath.Join(t.TempDir(), "effects")}
	queue := randomName("harness-test-")
	tool := effect.Tool(f.effects)
	if gate != nil {
		tool = effect.New(effect.Config{Path: f.effects, Gate: gate})
	}
	opts := append([]agent.Option{agent.WithModel(fakeModel(t)), agent.WithTools(tool), agent.WithStores(agent.Stores{Sessions: store})}, extra...)
	w, err := temporal.NewWorker(temporal.Config{Client: f.c, TaskQueue: queue, Agent: opts, Store: store})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(func() { require.NoError(t, w.Stop()) })
	f.w = w
	f.tc = temporal.NewClient(f.c, temporal.ClientConfig{TaskQueue: queue})
	return f
}

func TestTurnRunsAndStreams(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := randomName("s-")
	turn, err := f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{Cwd: "/ws"}, Prompt: "effects=2 steps=1 sleep=0", Stream: true})
	require.NoError(t, err)
	var types []string
	for ev, err := range turn.Events(ctx) {
		require.NoError(t, err)
		types = append(types, ev.Type)
	}
	assert.Contains(t, types, "tool_call_start")
	assert.Contains(t, types, "tool_call_end")
	require.NotEmpty(t, types)
	assert.Equal(t, "turn_end", types[len(types)-1])
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	assert.Equal(t, 2, res.Steps)
	assert.Equal(t, 1, res.Turn)
	assert.Equal(t, "done: 2 results, 0 outcome unknown", res.Answer)
	assert.Equal(t, f.w.TaskQueue(), res.Worker)

	// A second turn of the session is numbered from the log, and runs
	// where the session is open.
	_, err = f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Prompt: "again"})
	require.NoError(t, err)
	res2, err := f.tc.Current(id).Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, res2.Turn)
	assert.Equal(t, "You said: again", res2.Answer)
	assert.Zero(t, res2.Moves)

	b, err := os.ReadFile(f.effects)
	require.NoError(t, err)
	assert.Len(t, strings.Fields(string(b)), 4, "two calls, one line each")
}

func TestStartWhileATurnWaitsIsBusy(t *testing.T) {
	pol, err := permission.New(permission.Rules{Ask: []string{"record_effect"}})
	require.NoError(t, err)
	f := newFixture(t, agent.WithPermissions(pol))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := randomName("s-")
	turn, err := f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{Cwd: "/ws"}, Prompt: "effects=1 steps=1 sleep=0"})
	require.NoError(t, err)
	st := waitState(t, ctx, turn, temporal.StatePaused)
	require.NotNil(t, st.Pause)
	require.Len(t, st.Pause.Approvals, 1)
	_, err = f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Prompt: "another"})
	require.ErrorIs(t, err, temporal.CodeBusy)
	_, statErr := os.Stat(f.effects)
	assert.True(t, os.IsNotExist(statErr), "nothing ran while the turn waits")

	// A refused answer leaves the turn waiting, and says why.
	require.NoError(t, turn.Answer(ctx, agent.Answers{Approvals: map[string]permission.Answer{"no-such-call": {Allow: true}}}))
	for {
		st = waitState(t, ctx, turn, temporal.StatePaused)
		if st.AnswerError != "" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	call := st.Pause.Approvals[0].Call.ID
	require.NoError(t, turn.Answer(ctx, agent.Answers{Approvals: map[string]permission.Answer{call: {Allow: true}}}))
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	assert.Equal(t, "done: 1 results, 0 outcome unknown", res.Answer)
	b, err := os.ReadFile(f.effects)
	require.NoError(t, err)
	assert.Equal(t, id+" "+call+"\n", string(b))
}

func TestCancelARunningTurn(t *testing.T) {
	// The call waits until it is cancelled: the turn cannot end before
	// the cancel reaches it, however late that is.
	f := newGatedFixture(t, make(chan struct{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := randomName("s-")
	turn, err := f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{Cwd: "/ws"}, Prompt: "effects=1 steps=3 sleep=0", Stream: true})
	require.NoError(t, err)
	for ev, err := range turn.Events(ctx) {
		require.NoError(t, err)
		if ev.Type == "tool_call_start" {
			require.NoError(t, turn.Cancel(ctx))
		}
	}
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCancelled, res.Reason)
	tr, err := f.store.Load(ctx, id)
	require.NoError(t, err)
	te, ok := tr.Events[len(tr.Events)-1].Data.(*session.TurnEnded)
	require.True(t, ok, "the log ends with the turn's end")
	assert.Equal(t, session.ReasonCancelled, te.Reason)
}

func TestSteerReachesTheRunningTurn(t *testing.T) {
	// The first call waits until the worker took the steered message:
	// the turn is still running when it arrives, however late that is.
	gate := make(chan struct{})
	f := newGatedFixture(t, gate)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := randomName("s-")
	turn, err := f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{Cwd: "/ws"}, Prompt: "effects=1 steps=2 sleep=0", Stream: true})
	require.NoError(t, err)
	steered := false
	delivered := make(chan error, 1)
	var types []string
	for ev, err := range turn.Events(ctx) {
		require.NoError(t, err)
		types = append(types, ev.Type)
		if ev.Type == "tool_call_start" && !steered {
			steered = true
			require.NoError(t, turn.Steer(ctx, "also mind the tests"))
			go func() {
				err := waitDelivered(ctx, f.c, turn)
				close(gate)
				delivered <- err
			}()
		}
	}
	require.NoError(t, <-delivered)
	assert.Contains(t, types, "steer_delivered")
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Empty(t, res.Unread)
	tr, err := f.store.Load(ctx, id)
	require.NoError(t, err)
	found := false
	for _, e := range tr.Events {
		if u, ok := e.Data.(*session.UserMessage); ok && u.Steer {
			found = found || strings.Contains(u.Content[0].Text, "also mind the tests")
		}
	}
	assert.True(t, found, "the steered message is in the log")
}

func waitState(t *testing.T, ctx context.Context, turn *temporal.Turn, state string) temporal.Status {
	t.Helper()
	for {
		st, err := turn.Status(ctx)
		require.NoError(t, err)
		if st.State == state {
			return st
		}
		require.NotEqual(t, temporal.StateEnded, st.State, "the turn ended: %+v", st.Result)
		select {
		case <-ctx.Done():
			t.Fatalf("the turn never reached %s", state)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitDelivered waits until the turn's workflow history shows a steered
// message taken by the session on its worker: a Deliver activity that
// returned true.
func waitDelivered(ctx context.Context, c client.Client, turn *temporal.Turn) error {
	deliver := map[int64]bool{} // the scheduled events of Deliver activities
	it := c.GetWorkflowHistory(ctx, turn.WorkflowID, turn.RunID, true, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "harness.Deliver" {
			deliver[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && deliver[a.GetScheduledEventId()] {
			var ok bool
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &ok); err != nil {
				return err
			}
			if ok {
				return nil
			}
		}
	}
	return errors.New("the turn's workflow ended before a steered message was delivered")
}
