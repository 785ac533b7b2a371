package turns_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/examples/temporal/internal/effect"
	"github.com/go-harness/harness/examples/temporal/internal/fakemodel"
	"github.com/go-harness/harness/examples/temporal/turns"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// benchPrompt is a turn of two model calls with one tool call between.
const benchPrompt = "effects=1 steps=1 sleep=0"

// BenchmarkTurn runs the same turn (two model calls of the fake model
// through the openai adapter, one record_effect call, the session in
// PostgreSQL) on the plain agent loop and as a Temporal workflow with an
// in-process worker: the difference is what durability costs a turn.
// Each iteration is a new session.
func BenchmarkTurn(b *testing.B) {
	_, pgBase := servers(b)
	fake := httptest.NewServer(fakemodel.Handler())
	b.Cleanup(fake.Close)
	m, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "unused", Model: fakemodel.Model})
	require.NoError(b, err)
	effects := filepath.Join(b.TempDir(), "effects")
	_, store := newSchema(b, pgBase)
	ctx := context.Background()

	b.Run("plain_loop", func(b *testing.B) {
		loop, err := agent.New(agent.WithModel(m), agent.WithTools(effect.Tool(effects)), agent.WithStores(agent.Stores{Sessions: store}))
		require.NoError(b, err)
		defer loop.Close()
		for b.Loop() {
			sess, err := loop.NewSession(ctx, session.Header{ID: randomName("plain-"), Cwd: "/ws"})
			require.NoError(b, err)
			var end *agent.TurnEnd
			for ev, err := range sess.Run(ctx, benchPrompt) {
				require.NoError(b, err)
				if te, ok := ev.(*agent.TurnEnd); ok {
					end = te
				}
			}
			require.NoError(b, sess.Close())
			require.Equal(b, session.ReasonCompleted, end.Reason)
			require.Equal(b, 2, end.Steps)
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/turn")
	})

	b.Run("temporal", func(b *testing.B) {
		addr, _ := servers(b)
		c := dialTemporal(b, addr)
		queue := randomName("harness-bench-")
		reg, err := tools.NewRegistry(effect.Tool(effects))
		require.NoError(b, err)
		w := worker.New(c, queue, turns.WorkerOptions())
		(&turns.Activities{Store: store, Model: m, Tools: reg, Cwd: "/ws"}).Register(w)
		require.NoError(b, w.Start())
		defer w.Stop()
		run := randomName("")
		for i := 0; b.Loop(); i++ {
			in := turns.TurnInput{SessionID: fmt.Sprintf("temporal-%s-%d", run, i), Turn: 1, Prompt: benchPrompt}
			wr, err := c.ExecuteWorkflow(ctx, turns.StartOptions(queue, in, time.Minute), turns.WorkflowName, in)
			require.NoError(b, err)
			var res turns.TurnResult
			require.NoError(b, wr.Get(ctx, &res))
			require.Equal(b, session.ReasonCompleted, res.Reason)
			require.Equal(b, 2, res.Steps)
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/turn")
	})
}
