package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// A JSONL log syncs what each promise needs and no more (issue 38):
// Create syncs the header alone (a crash never leaves a log without it),
// the first Sync syncs the appends and the directory the log was linked
// into, and a Sync or Close with nothing new writes nothing to disk.
func TestJSONLSyncsOnlyWhatIsPromised(t *testing.T) {
	ctx := context.Background()
	store := session.NewTestJSONL(t.TempDir(), session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{ID: "s1", Cwd: "/w"})
	require.NoError(t, err)
	file, dir := session.Syncs(log)
	assert.Equal(t, [2]int{0, 0}, [2]int{file, dir}, "Create syncs the header's temporary file only")

	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("hi")}})
	require.NoError(t, err)
	require.NoError(t, log.Sync())
	file, dir = session.Syncs(log)
	assert.Equal(t, [2]int{1, 1}, [2]int{file, dir}, "the first Sync: the appends, then the directory")

	require.NoError(t, log.Sync())
	file, dir = session.Syncs(log)
	assert.Equal(t, [2]int{1, 1}, [2]int{file, dir}, "nothing new: nothing synced")

	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("again")}})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	file, dir = session.Syncs(log)
	assert.Equal(t, [2]int{2, 1}, [2]int{file, dir}, "Close syncs what is new")

	tr, err := store.Load(ctx, "s1")
	require.NoError(t, err)
	assert.Len(t, tr.Events, 2)
	assert.Equal(t, "s1", tr.Header.ID)
}

// A log opened again is synced when it closes, even with nothing
// appended: a process that stopped may have left its appends unsynced.
func TestJSONLOpenedLogSyncsAtClose(t *testing.T) {
	ctx := context.Background()
	store := session.NewTestJSONL(t.TempDir(), session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{ID: "s1", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	log, _, err = store.Open(ctx, "s1")
	require.NoError(t, err)
	require.NoError(t, log.Sync())
	file, dir := session.Syncs(log)
	assert.Equal(t, [2]int{1, 0}, [2]int{file, dir})
	require.NoError(t, log.Close())
}
