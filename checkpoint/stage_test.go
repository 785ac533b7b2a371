package checkpoint_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/internal/attdigest"
)

// stagingStore is a Stager that models a power loss: Put is durable at
// once, Stage only once Sync returns, and powerLoss forgets the rest.
type stagingStore struct {
	mu       sync.Mutex
	durable  map[string][]byte
	volatile map[string][]byte
	syncs    int
}

func newStagingStore() *stagingStore {
	return &stagingStore{durable: map[string][]byte{}, volatile: map[string][]byte{}}
}

func (s *stagingStore) Put(_ context.Context, data []byte) (string, error) {
	d := attdigest.Of(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.durable[d] = slices.Clone(data)
	return d, nil
}

func (s *stagingStore) Stage(_ context.Context, data []byte) (string, error) {
	d := attdigest.Of(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.durable[d]; !ok {
		s.volatile[d] = slices.Clone(data)
	}
	return d, nil
}

func (s *stagingStore) Sync(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncs++
	maps.Copy(s.durable, s.volatile)
	clear(s.volatile)
	return nil
}

func (s *stagingStore) Get(_ context.Context, d string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data, ok := s.durable[d]; ok {
		return slices.Clone(data), nil
	}
	if data, ok := s.volatile[d]; ok {
		return slices.Clone(data), nil
	}
	return nil, &harness.Error{Code: harness.CodeNotFound, Message: "no object " + d}
}

func (s *stagingStore) state() (volatile, syncs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.volatile), s.syncs
}

func (s *stagingStore) powerLoss() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.volatile)
}

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
	st := newStagingStore()
	w, err := checkpoint.Open(dir, checkpoint.Config{Store: st})
	require.NoError(t, err)

	first, err := w.Stage(ctx())
	require.NoError(t, err)
	volatile, syncs := st.state()
	assert.GreaterOrEqual(t, volatile, 3, "a pack, the big file and the manifest wait")
	assert.Zero(t, syncs, "Stage syncs nothing")
	require.NoError(t, loadAll(w, first.Manifest), "a staged checkpoint can be read at once")

	writeTree(t, dir, map[string]string{"a.txt": "changed\n"})
	second, err := w.Take(ctx())
	require.NoError(t, err)
	volatile, syncs = st.state()
	assert.Zero(t, volatile, "Take synced its objects and the staged ones")
	assert.Equal(t, 1, syncs, "once, for both checkpoints")
	st.powerLoss()
	require.NoError(t, loadAll(w, first.Manifest))
	require.NoError(t, loadAll(w, second.Manifest))

	require.NoError(t, w.Sync(ctx()))
	_, syncs = st.state()
	assert.Equal(t, 1, syncs, "nothing waits: Sync does not call the store")

	// An unchanged tree: Take stores nothing and syncs nothing.
	_, err = w.Take(ctx())
	require.NoError(t, err)
	_, syncs = st.state()
	assert.Equal(t, 1, syncs)

	// Staged and lost before a sync: the manifest is gone.
	writeTree(t, dir, map[string]string{"sub/b.txt": "changed too\n"})
	third, err := w.Stage(ctx())
	require.NoError(t, err)
	st.powerLoss()
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
