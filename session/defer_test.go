package session_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// A JSONL log's deferred events are numbered at once and written with the
// next Append, in one write and before it; Sync and Close write what is
// left. Until then the file holds a prefix of the log (issue 38: fewer
// writes per step).
func TestJSONLDefer(t *testing.T) {
	ctx := context.Background()
	store := session.NewTestJSONL(t.TempDir(), session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{ID: "s1", Cwd: "/w"})
	require.NoError(t, err)
	d, ok := log.(session.Deferrer)
	require.True(t, ok, "a JSONL log is a Deferrer")
	lines := func() []string {
		b, err := os.ReadFile(store.Path("s1"))
		require.NoError(t, err)
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}

	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("go")}})
	require.NoError(t, err)
	evs, err := d.Defer(ctx, &session.ModelRequest{Step: 1, Model: "m"})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, int64(2), evs[0].Seq, "numbered at once")
	evs, err = d.Defer(ctx, &session.AssistantMessage{Step: 1, Model: "m", Content: []harness.Block{harness.TextBlock("hi")}})
	require.NoError(t, err)
	assert.Equal(t, int64(3), evs[0].Seq)
	assert.Len(t, lines(), 2, "deferred events are not written yet")
	w0, _ := session.Writes(log)

	evs, err = log.Append(ctx, &session.ToolStarted{Step: 1, CallID: "c1", Name: "t"})
	require.NoError(t, err)
	assert.Equal(t, int64(4), evs[0].Seq)
	w1, _ := session.Writes(log)
	assert.Equal(t, 1, w1-w0, "the deferred events and the append go in one write")
	got := lines()
	require.Len(t, got, 5)
	assert.Contains(t, got[2], `"type":"model_request"`)
	assert.Contains(t, got[3], `"type":"assistant"`)
	assert.Contains(t, got[4], `"type":"tool_start"`)

	// A too-large append writes nothing, the deferred events included,
	// and keeps them for the next write.
	_, err = d.Defer(ctx, &session.ModelRequest{Step: 2, Model: "m"})
	require.NoError(t, err)
	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock(strings.Repeat("x", 17<<20))}})
	require.ErrorIs(t, err, harness.CodeTooLarge)
	assert.Len(t, lines(), 5)

	require.NoError(t, log.Sync())
	assert.Len(t, lines(), 6, "Sync writes the deferred events")
	_, buffered := session.Writes(log)
	assert.False(t, buffered, "a synced log holds no buffer")

	_, err = d.Defer(ctx, &session.TurnEnded{Reason: session.ReasonCompleted, Steps: 2})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	got = lines()
	require.Len(t, got, 7, "Close writes the deferred events")
	tr, err := store.Load(ctx, "s1")
	require.NoError(t, err)
	require.Len(t, tr.Events, 6)
	for i, e := range tr.Events {
		assert.Equal(t, int64(i+1), e.Seq, "numbered without gaps")
	}
	assert.Empty(t, tr.Warnings)

	_, err = d.Defer(ctx, &session.ModelRequest{Step: 3})
	require.ErrorIs(t, err, harness.CodeClosed)
}
