package checkpoint_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/session/sessiontest"
)

// loadAll reads a checkpoint's manifest and every content it kept.
func loadAll(w *checkpoint.Workspace, manifest string) error {
	tree, err := w.Load(context.Background(), manifest)
	if err != nil {
		return err
	}
	for _, e := range tree.Entries() {
		if e.Kept {
			if _, err := w.Content(context.Background(), &e); err != nil {
				return err
			}
		}
	}
	return nil
}

// With a Stager, Take stores a checkpoint's objects staged and syncs
// them once, together with those Stage left; Stage syncs nothing; Sync
// syncs what waits, and nothing when nothing does. What was synced
// survives a power loss, and what was only staged does not.
func TestStageThenSync(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n", "big.bin": string(make([]byte, 100<<10)), "sub/b.txt": "b\n"})
	st := sessiontest.NewPowerLossAttachments()
	w, err := checkpoint.Open(dir, checkpoint.Config{Store: st})
	require.NoError(t, err)

	first, err := w.Stage(ctx())
	require.NoError(t, err)
	volatile, syncs := st.Unsynced(), st.Syncs()
	assert.GreaterOrEqual(t, volatile, 3, "a pack, the big file and the manifest wait")
	assert.Zero(t, syncs, "Stage syncs nothing")
	require.NoError(t, loadAll(w, first.Manifest), "a staged checkpoint can be read at once")

	writeTree(t, dir, map[string]string{"a.txt": "changed\n"})
	second, err := w.Take(ctx())
	require.NoError(t, err)
	volatile, syncs = st.Unsynced(), st.Syncs()
	assert.Zero(t, volatile, "Take synced its objects and the staged ones")
	assert.Equal(t, 1, syncs, "once, for both checkpoints")
	st.PowerLoss()
	require.NoError(t, loadAll(w, first.Manifest))
	require.NoError(t, loadAll(w, second.Manifest))

	require.NoError(t, w.Sync(ctx()))
	syncs = st.Syncs()
	assert.Equal(t, 1, syncs, "nothing waits: Sync does not call the store")

	// An unchanged tree: Take stores nothing and syncs nothing.
	_, err = w.Take(ctx())
	require.NoError(t, err)
	syncs = st.Syncs()
	assert.Equal(t, 1, syncs)

	// Staged and lost before a sync: the manifest is gone.
	writeTree(t, dir, map[string]string{"sub/b.txt": "changed too\n"})
	third, err := w.Stage(ctx())
	require.NoError(t, err)
	st.PowerLoss()
	assert.ErrorIs(t, loadAll(w, third.Manifest), harness.CodeNotFound)
}

// A store that cannot stage (no Stage and Sync) gets Puts: every object
// is durable when Stage returns.
func TestStageWithoutStager(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n"})
	_, cs := open(t, dir, checkpoint.Config{})
	plain := struct{ checkpoint.Store }{cs} // Put and Get only
	w, err := checkpoint.Open(dir, checkpoint.Config{Store: plain})
	require.NoError(t, err)
	_, err = w.Stage(ctx())
	require.NoError(t, err)
	puts, _ := cs.reset()
	assert.Equal(t, 2, puts, "the pack and the manifest")
	require.NoError(t, w.Sync(ctx()))
}
