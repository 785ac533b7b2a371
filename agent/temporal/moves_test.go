//go:build linux

package temporal_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
)

// TestMovesCountEveryMove kills the worker running a turn twice: the
// first worker mid-turn, then the one that went on with it (as a local
// activity of its workflow task, which a replay reruns and no history
// records). TurnResult.Moves must say 2, as the log's two cut-off ends
// do.
func TestMovesCountEveryMove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := newWorkerFleet(t, "harness-moves-")
	pool, c, store := f.pool, f.client, f.store
	pool.start()
	id := randomName("moves-")
	turn, err := c.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{}, Prompt: "effects=1 steps=5 sleep=1500"})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	for _, step := range []int{2, 3} {
		for {
			tr, err := store.Load(ctx, id)
			if err == nil && startedStep(tr.Events, step) {
				break
			}
			require.NoError(t, ctx.Err(), "the turn never reached step %d", step)
			time.Sleep(20 * time.Millisecond)
		}
		pool.killOne(r)
	}
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	tr, err := store.Load(ctx, id)
	require.NoError(t, err)
	cut := 0
	for _, e := range tr.Events {
		if p, ok := e.Data.(*session.TurnEnded); ok && p.Reason == session.ReasonInterrupted {
			cut++
		}
	}
	assert.Equal(t, 2, cut, "both kills cut the turn off")
	assert.Equal(t, 2, res.Moves, "every move is counted")
}
