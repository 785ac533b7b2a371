package temporal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/go-harness/harness/agent"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/agent/temporal/internal/effect"
	"github.com/go-harness/harness/session"
)

// benchPrompt is a turn of two model calls with one tool call between.
const benchPrompt = "effects=1 steps=1 sleep=0"

// BenchmarkTurn runs the same turn (two model calls of the fake model
// through the openai adapter, one record_effect call, the session in
// PostgreSQL) on the plain agent loop and as a Temporal workflow on an
// in-process worker, alternating the two each iteration, each on a new
// session: the difference is what durability costs a turn. It reports
// the mean of each (plain-ms/turn, temporal-ms/turn), their difference
// and their ratio.
func BenchmarkTurn(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	loop, err := agent.New(agent.WithModel(fakeModel(b)), agent.WithTools(effect.Tool(f.effects)), agent.WithStores(agent.Stores{Sessions: f.store}))
	require.NoError(b, err)
	defer loop.Close()
	run := randomName("")
	var plain, durable, work time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		sess, err := loop.NewSession(ctx, session.Header{ID: fmt.Sprintf("plain-%s-%d", run, n), Cwd: "/ws"})
		require.NoError(b, err)
		var end *agent.TurnEnd
		for ev, err := range sess.Run(ctx, benchPrompt) {
			require.NoError(b, err)
			if te, ok := ev.(*agent.TurnEnd); ok {
				end = te
			}
		}
		require.NoError(b, sess.Close())
		plain += time.Since(start)
		require.Equal(b, session.ReasonCompleted, end.Reason)
		require.Equal(b, 2, end.Steps)

		start = time.Now()
		turn, err := f.tc.Start(ctx, temporal.TurnInput{SessionID: fmt.Sprintf("temporal-%s-%d", run, n), Create: &session.Header{Cwd: "/ws"}, Prompt: benchPrompt})
		require.NoError(b, err)
		res, err := turn.Wait(ctx)
		durable += time.Since(start)
		require.NoError(b, err)
		require.Equal(b, session.ReasonCompleted, res.Reason)
		require.Equal(b, 2, res.Steps)
		b.StopTimer()
		work += turnWork(b, f, turn)
		b.StartTimer()
		n++
	}
	p := float64(plain.Microseconds()) / 1000 / float64(n)
	d := float64(durable.Microseconds()) / 1000 / float64(n)
	b.ReportMetric(p, "plain-ms/turn")
	b.ReportMetric(d, "temporal-ms/turn")
	b.ReportMetric(d-p, "extra-ms/turn")
	b.ReportMetric(d/p, "ratio")
	// What the workers did (opening the session, the turn) against the
	// rest: the engine's hand-offs.
	b.ReportMetric(d-float64(work.Microseconds())/1000/float64(n), "engine-ms/turn")
	b.ReportMetric(0, "ns/op")
}

// turnWork is the time the turn's workflow spent in its workers' code:
// the workflow task that opened the session (the local activity runs in
// it) and the activity that ran the turn, from the workflow's history.
func turnWork(b *testing.B, f *fixture, turn *temporal.Turn) time.Duration {
	it := f.c.GetWorkflowHistory(context.Background(), turn.WorkflowID, turn.RunID, false, 0)
	var work time.Duration
	var started time.Time
	wts := 0
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(b, err)
		at := e.EventTime.AsTime()
		switch e.EventType {
		case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED, enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started = at
		case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			wts++
			if wts == 1 {
				work += at.Sub(started)
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			work += at.Sub(started)
		}
	}
	return work
}
