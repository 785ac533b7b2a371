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

	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
)

// TestMovesCountEveryMove kills the worker running a turn twice: the
// first worker mid-turn, then the one that went on with it (as a local
// activity of its workflow task, which a replay reruns and no history
// records). TurnResult.Moves must say 2, as the log's two cut-off ends
// do. Each kill lands while the worker running the turn waits in a call
// the gate holds (those after step 1), so it always cuts the turn off.
func TestMovesCountEveryMove(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	setGate(t, gate, 1)
	f := newWorkerFleet(t, "harness-moves-", "-gate="+gate)
	pool, c, store := f.pool, f.client, f.store
	// The deadline starts once the worker is built (minutes, on a loaded
	// machine).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pool.start()
	id := randomName("moves-")
	turn, err := c.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{}, Prompt: "effects=1 steps=5 sleep=0"})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	for cuts := range 2 {
		waitLog(t, ctx, store, id, fmt.Sprintf("a held call after %d cuts", cuts), func(events []session.Event) bool { return heldCall(events, cuts, 1) })
		pool.killOne(r)
	}
	setGate(t, gate, openGate)
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
