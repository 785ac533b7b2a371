package streamwatch_test

import (
	"context"
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

	ctx, w = watched(streamwatch.Config{Idle: time.Hour, Queue: 50 * time.Millisecond, Stall: 150 * time.Millisecond})
	w.Start()
	w.Content()
	for range 6 { // past the queue bound, within the stall bound each time
		time.Sleep(30 * time.Millisecond)
		w.Bytes()
		w.Content()
	}
	assert.NoError(t, ctx.Err(), "content keeps the answer alive")
	assert.Contains(t, fired(t, ctx), "no content from the model for 150ms")
	w.Stop()

	ctx, w = watched(streamwatch.Config{Idle: 40 * time.Millisecond})
	w.Start()
	assert.Contains(t, fired(t, ctx), "no data from the model for 40ms")
	w.Stop()
}

func TestStopAndNil(t *testing.T) {
	ctx, w := watched(streamwatch.Config{Idle: 20 * time.Millisecond, Queue: 20 * time.Millisecond, Stall: 20 * time.Millisecond})
	w.Start()
	w.Content()
	w.Stop()
	time.Sleep(60 * time.Millisecond)
	assert.NoError(t, ctx.Err())
	var none *streamwatch.Watch
	none.Start()
	none.Bytes()
	none.Content()
	none.Stop()
	_, ok := streamwatch.Timeout(context.Canceled)
	assert.False(t, ok)
}
