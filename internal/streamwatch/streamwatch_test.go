package streamwatch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/streamwatch"
)

func watched(cfg streamwatch.Config) (context.Context, *streamwatch.Watch) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, streamwatch.New(cfg, cancel)
}

func fired(t *testing.T, ctx context.Context) string {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not fire")
	}
	he, ok := streamwatch.Timeout(context.Cause(ctx))
	require.True(t, ok, "cause %v", context.Cause(ctx))
	assert.ErrorIs(t, he, harness.CodeTimeout)
	return he.Message
}

// Bytes keep the idle bound away but not the queue bound; content ends
// the queue bound and starts the stall bound, which only content resets.
func TestBounds(t *testing.T) {
	ctx, w := watched(streamwatch.Config{Idle: time.Hour, Queue: 60 * time.Millisecond})
	w.Start()
	for range 5 {
		w.Bytes()
		time.Sleep(5 * time.Millisecond)
	}
	assert.Contains(t, fired(t, ctx), "no answer began within 60ms")
	w.Stop()

	// A paused machine can let more than the stall bound pass between
	// two pieces of content; such a run proves nothing, so it is tried
	// again with a longer bound.
	for stall := 150 * time.Millisecond; ; stall *= 2 {
		ctx, w = watched(streamwatch.Config{Idle: time.Hour, Queue: 50 * time.Millisecond, Stall: stall})
		w.Start()
		before := time.Now()
		w.Content()
		var gap time.Duration // the longest time between two pieces, at most
		for range 6 {         // past the queue bound, within the stall bound each time
			time.Sleep(30 * time.Millisecond)
			w.Bytes()
			w.Content()
			gap = max(gap, time.Since(before))
			before = time.Now()
		}
		alive := ctx.Err()
		gap = max(gap, time.Since(before))
		if alive != nil && gap >= stall && stall < 5*time.Second {
			t.Logf("%v passed between two pieces of content (the stall bound is %v): again with twice the bound", gap, stall)
			w.Stop()
			continue
		}
		assert.NoError(t, alive, "content keeps the answer alive")
		assert.Contains(t, fired(t, ctx), fmt.Sprintf("no content from the model for %v", stall))
		w.Stop()
		break
	}

	ctx, w = watched(streamwatch.Config{Idle: 40 * time.Millisecond})
	w.Start()
	assert.Contains(t, fired(t, ctx), "no data from the model for 40ms")
	w.Stop()
}

func TestStopAndNil(t *testing.T) {
	// A bound can pass before Stop only on a machine that paused that
	// long; such a run proves nothing, so it is tried again with longer
	// bounds.
	for d := 20 * time.Millisecond; ; d *= 2 {
		ctx, w := watched(streamwatch.Config{Idle: d, Queue: d, Stall: d})
		start := time.Now()
		w.Start()
		w.Content()
		w.Stop()
		if took := time.Since(start); took >= d && d < 5*time.Second {
			t.Logf("Start to Stop took %v, past the bounds of %v: again with twice the bounds", took, d)
			continue
		}
		time.Sleep(3 * d)
		assert.NoError(t, ctx.Err())
		break
	}
	var none *streamwatch.Watch
	none.Start()
	none.Bytes()
	none.Content()
	none.Stop()
	_, ok := streamwatch.Timeout(context.Canceled)
	assert.False(t, ok)
}
