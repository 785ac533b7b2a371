package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// TestJSONLForkOfADamagedLog: a fork copies lines as they are, a line
// that does not decode and a long line included, and leaves out a torn
// last line.
func TestJSONLForkOfADamagedLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := session.NewJSONL(dir, session.StoreConfig{MaxLineSize: 1024})
	log, err := store.Create(ctx, session.Header{ID: "damaged", Cwd: "/w"})
	require.NoError(t, err)
	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("hi")}})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	p := filepath.Join(dir, "damaged.jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	long := `{"seq":3,"time":"2026-01-01T00:00:00Z","type":"reminder","data":{"text":"` + strings.Repeat("x", 2000) + `"}}`
	_, err = f.WriteString("not json at all\n" + long + "\n" + `{"seq":4,"time":"2026-01-01T00:00:00Z","type":"reminder","data":{"te`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	h, err := store.Fork(ctx, "damaged", session.ForkOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), h.ForkSeq, "the last whole event")
	parent, err := os.ReadFile(p)
	require.NoError(t, err)
	fork, err := os.ReadFile(filepath.Join(dir, h.ID+".jsonl"))
	require.NoError(t, err)
	_, parentBody, _ := strings.Cut(string(parent), "\n")
	forkHeader, forkBody, _ := strings.Cut(string(fork), "\n")
	assert.Contains(t, forkHeader, `"parent":"damaged"`)
	assert.Equal(t, parentBody[:strings.LastIndex(parentBody, "\n")+1], forkBody, "the lines, byte for byte, without the torn one")
	tr, err := store.Load(ctx, h.ID)
	require.NoError(t, err)
	assert.Len(t, tr.Events, 1)
	assert.Len(t, tr.Warnings, 3, "the fork loads with the parent's warnings (bad line, long line, the jump past it)")

	_, err = store.Fork(ctx, "damaged", session.ForkOptions{At: 4})
	assert.ErrorIs(t, err, harness.CodeNotFound, "a torn event is no fork point")
	h2, err := store.Fork(ctx, "damaged", session.ForkOptions{At: 1})
	require.NoError(t, err)
	fork, err = os.ReadFile(filepath.Join(dir, h2.ID+".jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(fork), "\n"))
}

// TestJSONLMetaFiles: titles and tags live in a file beside the log,
// which Delete removes and Prune cleans up when its log is gone.
func TestJSONLMetaFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := session.NewJSONL(dir, session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{ID: "s1", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	require.NoError(t, store.Rename(ctx, "s1", "first"))
	_, err = store.Tag(ctx, "s1", []string{"a"}, nil)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "s1.meta"))
	require.NoError(t, err)
	assert.Equal(t, "{\"title\":\"first\"}\n{\"add\":[\"a\"]}\n", string(data), "changes are appended, one a line")
	// A torn last change is ignored.
	f, err := os.OpenFile(filepath.Join(dir, "s1.meta"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	f.WriteString(`{"title":"tor`)
	f.Close()
	infos, err := store.List(ctx, session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, infos, 1, "the title file is no session")
	assert.Equal(t, "first", infos[0].Title)

	require.NoError(t, store.Delete(ctx, "s1"))
	assert.NoFileExists(t, filepath.Join(dir, "s1.meta"))

	// An orphan left by an interrupted Delete goes with Prune.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gone.meta"), []byte("{}\n"), 0o600))
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "gone.meta"), old, old))
	r := &session.Retention{Store: store}
	_, err = r.Prune(ctx, session.PruneOptions{OlderThan: time.Hour})
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(dir, "gone.meta"))
}
