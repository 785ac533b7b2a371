package session_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/sessiontest"
)

func TestJSONLConformance(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T, max int) session.Store {
		return session.NewJSONL(t.TempDir(), session.StoreConfig{MaxLineSize: max})
	})
}

func TestMemoryConformance(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T, max int) session.Store {
		return session.NewMemory(session.StoreConfig{MaxLineSize: max})
	})
}

func TestJSONLTornLine(t *testing.T) {
	ctx := context.Background()
	store := session.NewTestJSONL(t.TempDir(), session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{ID: "torn", Cwd: "/w"})
	require.NoError(t, err)
	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("hi")}},
		&session.Reminded{Reminder: harness.Reminder{Text: "one"}}, &session.Reminded{Reminder: harness.Reminder{Text: "two"}})
	require.NoError(t, err)
	require.NoError(t, log.Close())

	// A crash cut the write of event 4 short.
	line, err := session.Event{Seq: 4, Time: time.Now(), Data: &session.Reminded{Reminder: harness.Reminder{Text: "three"}}}.MarshalJSON()
	require.NoError(t, err)
	f, err := os.OpenFile(store.Path("torn"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(line[:len(line)/2])
	require.NoError(t, err)
	require.NoError(t, f.Close())

	tr, err := store.Load(ctx, "torn")
	require.NoError(t, err)
	require.Len(t, tr.Events, 3)
	require.Len(t, tr.Warnings, 1)
	assert.Contains(t, tr.Warnings[0].Message, "torn last line")
	assert.Equal(t, 5, tr.Warnings[0].Line)

	log, tr, err = store.Open(ctx, "torn")
	require.NoError(t, err)
	require.Len(t, tr.Events, 3)
	evs, err := log.Append(ctx, &session.Reminded{Reminder: harness.Reminder{Text: "three again"}})
	require.NoError(t, err)
	assert.Equal(t, int64(4), evs[0].Seq, "the torn event's number is reused")
	require.NoError(t, log.Close())

	tr, err = store.Load(ctx, "torn")
	require.NoError(t, err)
	require.Len(t, tr.Events, 4)
	assert.Equal(t, "three again", tr.Events[3].Data.(*session.Reminded).Text)
	require.Len(t, tr.Warnings, 1)
	assert.Contains(t, tr.Warnings[0].Message, "torn line skipped")
}

func TestJSONLCreateLeavesNoPartialLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := session.NewTestJSONL(dir, session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{ID: "made", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the temporary file is gone")
	assert.Equal(t, "made.jsonl", entries[0].Name())
	st, err := os.Stat(store.Path("made"))
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}

	// What a crash during Create leaves (a temporary file) is not a session.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".create-x-123"), nil, 0o600))
	infos, err := store.List(ctx, session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, "made", infos[0].Header.ID)
}
