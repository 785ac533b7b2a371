//go:build unix

package session_test

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count open files")
	}
	return len(ents)
}

func userMsg(text string) *session.UserMessage {
	return &session.UserMessage{Content: []harness.Block{harness.TextBlock(text)}}
}

// With ReleaseIdle, an idle JSONL log holds no open file (issue 38: many
// sessions in one process), takes it again at its next write, and never
// writes after events another writer added meanwhile.
func TestJSONLReleaseIdle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := session.NewJSONL(dir, session.StoreConfig{ReleaseIdle: true})
	other := session.NewJSONL(dir, session.StoreConfig{})

	t.Run("released and taken again", func(t *testing.T) {
		log, err := store.Create(ctx, session.Header{ID: "a", Cwd: "/w"})
		require.NoError(t, err)
		_, err = log.Append(ctx, userMsg("one"))
		require.NoError(t, err)
		before := openFDs(t)
		require.NoError(t, log.(session.Releaser).Release())
		assert.Equal(t, before-1, openFDs(t), "the file is closed")
		ol, _, err := other.Open(ctx, "a")
		require.NoError(t, err, "an idle log holds no lock")
		require.NoError(t, ol.Close())
	})

	t.Run("appends after a release", func(t *testing.T) {
		log, err := store.Create(ctx, session.Header{ID: "b", Cwd: "/w"})
		require.NoError(t, err)
		require.NoError(t, log.(session.Releaser).Release())
		require.NoError(t, log.(session.Releaser).Release(), "releasing twice is harmless")
		defer func() { require.NoError(t, log.(session.Releaser).Release(), "releasing a closed log does nothing") }()
		_, err = log.Append(ctx, userMsg("after"))
		require.NoError(t, err)
		_, _, err = other.Open(ctx, "b")
		require.ErrorIs(t, err, harness.CodeLocked, "writing took the lock again")
		require.NoError(t, log.Close())
		tr, err := store.Load(ctx, "b")
		require.NoError(t, err)
		require.Len(t, tr.Events, 1)
		assert.Equal(t, "after", tr.Events[0].Data.(*session.UserMessage).Content[0].Text)
	})

	t.Run("another writer came in between", func(t *testing.T) {
		log, err := store.Create(ctx, session.Header{ID: "c", Cwd: "/w"})
		require.NoError(t, err)
		require.NoError(t, log.(session.Releaser).Release())
		ol, _, err := other.Open(ctx, "c")
		require.NoError(t, err)
		_, err = ol.Append(ctx, userMsg("theirs"))
		require.NoError(t, err)
		_, err = log.Append(ctx, userMsg("ours"))
		require.ErrorIs(t, err, harness.CodeLocked, "the other writer holds the lock")
		require.NoError(t, ol.Close())
		_, err = log.Append(ctx, userMsg("ours"))
		require.ErrorIs(t, err, harness.CodeLocked, "the log grew while idle: refused")
		assert.Contains(t, err.Error(), "written to elsewhere")
		tr, err := store.Load(ctx, "c")
		require.NoError(t, err)
		require.Len(t, tr.Events, 1, "nothing of ours after theirs")
	})

	t.Run("deleted or replaced while idle", func(t *testing.T) {
		log, err := store.Create(ctx, session.Header{ID: "d", Cwd: "/w"})
		require.NoError(t, err)
		require.NoError(t, log.(session.Releaser).Release())
		require.NoError(t, other.Delete(ctx, "d"), "an idle log is not locked")
		_, err = log.Append(ctx, userMsg("late"))
		require.ErrorIs(t, err, harness.CodeLocked)
		assert.Contains(t, err.Error(), "deleted")

		log2, err := store.Create(ctx, session.Header{ID: "e", Cwd: "/w"})
		require.NoError(t, err)
		require.NoError(t, log2.(session.Releaser).Release())
		require.NoError(t, other.Delete(ctx, "e"))
		repl, err := other.Create(ctx, session.Header{ID: "e", Cwd: "/w"})
		require.NoError(t, err)
		require.NoError(t, repl.Close())
		_, err = log2.Append(ctx, userMsg("late"))
		require.ErrorIs(t, err, harness.CodeLocked, "a new file of the same name (which may reuse the inode) is not ours")
	})

	t.Run("a forked child shares the file", func(t *testing.T) {
		// A child forked while the log was open shares its open file,
		// and so its lock, until it execs: a copy of the descriptor
		// stands for it. Releasing must let go of the lock all the same.
		log, err := store.Create(ctx, session.Header{ID: "g", Cwd: "/w"})
		require.NoError(t, err)
		dup, err := syscall.Dup(session.LogFD(log))
		require.NoError(t, err)
		defer syscall.Close(dup)
		require.NoError(t, log.(session.Releaser).Release())
		_, err = log.Append(ctx, userMsg("again"))
		require.NoError(t, err, "the lock was let go of, not left to the child")
		require.NoError(t, log.Close())
	})

	t.Run("without ReleaseIdle nothing is let go of", func(t *testing.T) {
		log, err := other.Create(ctx, session.Header{ID: "f", Cwd: "/w"})
		require.NoError(t, err)
		before := openFDs(t)
		require.NoError(t, log.(session.Releaser).Release())
		assert.Equal(t, before, openFDs(t))
		_, _, err = store.Open(ctx, "f")
		require.ErrorIs(t, err, harness.CodeLocked)
		require.NoError(t, log.Close())
	})
}
