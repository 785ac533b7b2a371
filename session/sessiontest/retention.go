package sessiontest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func testDeleteOpen(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{ID: "live"})
	require.NoError(t, err)
	assert.ErrorIs(t, s.Delete(ctx(), "live"), harness.CodeLocked, "a session open for appending is not deleted")
	_, err = s.Load(ctx(), "live")
	require.NoError(t, err, "still there")
	require.NoError(t, log.Close())
	require.NoError(t, s.Delete(ctx(), "live"))
	_, err = s.Load(ctx(), "live")
	assert.ErrorIs(t, err, harness.CodeNotFound)
}

// fakeData records the sessions a Retention deleted data for, and the
// attachments it released.
type fakeData struct {
	mu       sync.Mutex
	deleted  []string
	released map[string][]string
}

func (f *fakeData) DeleteSession(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	return nil
}

func (f *fakeData) ReleaseAttachments(_ context.Context, id string, digests []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.released == nil {
		f.released = map[string][]string{}
	}
	f.released[id] = digests
	return nil
}

func testRetention(t *testing.T, s session.Store) {
	img := func(d string) harness.Block {
		return harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: d, MediaType: "image/png"}}
	}
	mk := func(id, cwd string, payloads ...session.Payload) {
		log, err := s.Create(ctx(), session.Header{ID: id, Cwd: cwd})
		require.NoError(t, err)
		if len(payloads) > 0 {
			_, err = log.Append(ctx(), payloads...)
			require.NoError(t, err)
		}
		require.NoError(t, log.Close())
		time.Sleep(5 * time.Millisecond)
	}
	mk("old1", "/w", &session.UserMessage{Content: []harness.Block{harness.TextBlock("look"), img("sha256:bb"), img("sha256:aa")}},
		&session.ToolFinished{CallID: "c", Name: "read_image", Result: harness.ToolResult{Content: []harness.Block{img("sha256:cc"), img("sha256:aa")}}},
		&session.Checkpoint{Kind: session.CheckpointTurnStart, Dir: "/w", Manifest: "sha256:dd"},
		&session.Checkpoint{Kind: session.CheckpointTurnEnd, Dir: "/w", Manifest: "sha256:dd"})
	mk("old2", "/other")
	live, err := s.Create(ctx(), session.Header{ID: "old3", Cwd: "/w"})
	require.NoError(t, err)
	defer live.Close()
	time.Sleep(10 * time.Millisecond)
	mk("new1", "/w")
	// The cut falls between the update times the store reports, which
	// may be coarser than the clock (file systems stamp times in ticks).
	infos, err := s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, infos, 4)
	var newest, oldest time.Time
	for _, in := range infos {
		if in.Header.ID == "new1" {
			newest = in.Updated
		} else if in.Updated.After(oldest) {
			oldest = in.Updated
		}
	}
	require.True(t, newest.After(oldest), "new1 (updated %s) is newer than the others (%s)", newest, oldest)
	cut := oldest.Add(newest.Sub(oldest) / 2)

	data := &fakeData{}
	now := cut.Add(24 * time.Hour)
	var expanded [][]string
	r := &session.Retention{Store: s, DeleteData: data.DeleteSession, ReleaseAttachments: data.ReleaseAttachments,
		ExpandCheckpoints: func(_ context.Context, manifests []string) ([]string, error) {
			expanded = append(expanded, manifests)
			return []string{"sha256:ee", "sha256:aa"}, nil // a chunk, and content shared with an image
		}}

	_, err = r.Prune(ctx(), session.PruneOptions{})
	assert.Error(t, err, "an age is required")

	dry, err := r.Prune(ctx(), session.PruneOptions{Now: now, OlderThan: 24 * time.Hour, DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"old3", "old2", "old1"}, ids(dry))
	all, err := s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, all, 4, "a dry run deletes nothing")
	assert.Empty(t, data.deleted)

	deleted, err := r.Prune(ctx(), session.PruneOptions{Now: now, OlderThan: 24 * time.Hour, Workspace: "/w"})
	assert.ErrorIs(t, err, harness.CodeLocked, "a session open for appending is kept")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "old3", "the error names the kept session")
	assert.NotContains(t, err.Error(), "old1")
	assert.Equal(t, []string{"old1"}, ids(deleted), "the workspace's old, closed sessions, returned with the error")
	assert.Equal(t, []string{"old1"}, data.deleted, "its data went with it")
	assert.Equal(t, map[string][]string{"old1": {"sha256:aa", "sha256:bb", "sha256:cc", "sha256:dd", "sha256:ee"}}, data.released,
		"images, checkpoint manifests and what they refer to, each once")
	assert.Equal(t, [][]string{{"sha256:dd"}}, expanded, "each manifest expanded once")

	all, err = s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"new1", "old3", "old2"}, ids(all))

	require.NoError(t, r.Delete(ctx(), "old2"))
	assert.Equal(t, []string{"old1", "old2"}, data.deleted)
	_, err = s.Load(ctx(), "old2")
	assert.ErrorIs(t, err, harness.CodeNotFound)

	// Deleting again still clears what other stores may keep, and says
	// the log is gone.
	assert.ErrorIs(t, r.Delete(ctx(), "old2"), harness.CodeNotFound)
	assert.Equal(t, []string{"old1", "old2", "old2"}, data.deleted)
	assert.ErrorIs(t, r.Delete(ctx(), "old3"), harness.CodeLocked)
	assert.ErrorIs(t, r.Delete(ctx(), "../x"), harness.CodeInvalidID)
	assert.Equal(t, []string{"old1", "old2", "old2"}, data.deleted, "nothing deleted for a live session")
}
