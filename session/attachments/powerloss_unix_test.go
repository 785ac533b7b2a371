//go:build unix

package attachments_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/durable"
	"github.com/go-harness/harness/session/attachments"
)

// disk records what a file store made durable, to model a power loss:
// a file's content survives once it was synced, a name once its
// directory was synced while the name pointed at that file.
type disk struct {
	mu         sync.Mutex
	synced     map[uint64]bool              // inodes whose content was synced
	names      map[string]map[string]uint64 // directory → name → inode, at its last sync
	fileSyncs  int
	dirSyncs   int
	dirsSynced []string
}

func newDisk() *disk {
	return &disk{synced: map[uint64]bool{}, names: map[string]map[string]uint64{}}
}

func inode(t testing.TB, fi os.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no inode for %s", fi.Name())
	}
	return uint64(st.Ino)
}

func (d *disk) attach(t *testing.T, s *attachments.Store) {
	s.SetSyncs(func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.synced[inode(t, fi)] = true
		d.fileSyncs++
		d.mu.Unlock()
		return f.Sync()
	}, func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		names := map[string]uint64{}
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				return err
			}
			names[e.Name()] = inode(t, fi)
		}
		d.mu.Lock()
		d.names[filepath.Clean(dir)] = names
		d.dirSyncs++
		d.dirsSynced = append(d.dirsSynced, filepath.Base(dir))
		d.mu.Unlock()
		return durable.SyncDir(dir)
	})
}

// survives says whether the file at p would be there, whole, after a
// power loss: its name durable in every directory from root down, and
// its content synced.
func (d *disk) survives(t *testing.T, root, p string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for q := p; q != root; q = filepath.Dir(q) {
		fi, err := os.Lstat(q)
		require.NoError(t, err)
		if d.names[filepath.Dir(q)][filepath.Base(q)] != inode(t, fi) {
			return false
		}
		if q == p && !d.synced[inode(t, fi)] {
			return false
		}
	}
	return true
}

// powerLoss removes the files of dir that would not survive.
func (d *disk) powerLoss(t *testing.T, root, dir string) (lost int) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !d.survives(t, root, p) {
			require.NoError(t, os.Remove(p))
			lost++
		}
	}
	return lost
}

func (d *disk) counts() (files, dirs int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, n := d.fileSyncs, d.dirSyncs
	d.fileSyncs, d.dirSyncs = 0, 0
	return f, n
}

// Staged attachments are written at once but synced only by Sync, which
// syncs each file and the directory once for all of them (and, the first
// time, the directories the store created). What Sync or Put returned
// for survives a power loss; what was only staged may not, and storing
// it again repairs it.
func TestFilesStageSyncPowerLoss(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "att")
	store := attachments.NewFiles(dir)
	d := newDisk()
	d.attach(t, store)
	ctx := context.Background()
	path := func(digest string) string {
		p, err := store.Path(digest)
		require.NoError(t, err)
		return p
	}

	var staged []string
	for _, s := range []string{"alpha", "beta", "gamma"} {
		dg, err := store.Stage(ctx, []byte(s))
		require.NoError(t, err)
		got, err := store.Get(ctx, dg)
		require.NoError(t, err, "a staged attachment is readable at once")
		assert.Equal(t, s, string(got))
		staged = append(staged, dg)
	}
	files, dirs := d.counts()
	assert.Zero(t, files+dirs, "staging syncs nothing")
	for _, dg := range staged {
		assert.False(t, d.survives(t, root, path(dg)), "a staged attachment is not durable before Sync")
	}

	require.NoError(t, store.Sync(ctx))
	files, dirs = d.counts()
	assert.Equal(t, 3, files, "each staged file synced once")
	assert.Equal(t, 3, dirs, "the object directory, and the parents of the two directories the store made")
	assert.Equal(t, []string{"sha256", "att", filepath.Base(root)}, d.dirsSynced)
	for _, dg := range staged {
		assert.True(t, d.survives(t, root, path(dg)), "synced")
	}

	// Stored again: known durable, nothing to write or sync.
	_, err := store.Stage(ctx, []byte("alpha"))
	require.NoError(t, err)
	require.NoError(t, store.Sync(ctx))
	files, dirs = d.counts()
	assert.Zero(t, files+dirs)

	// Put is durable when it returns: the file synced before its rename,
	// then the directory.
	put, err := store.Put(ctx, []byte("delta"))
	require.NoError(t, err)
	files, dirs = d.counts()
	assert.Equal(t, 1, files)
	assert.Equal(t, 1, dirs)
	assert.True(t, d.survives(t, root, path(put)))

	// Staged and never synced: lost to a power loss, and stored again.
	lostOne, err := store.Stage(ctx, []byte("epsilon"))
	require.NoError(t, err)
	assert.Equal(t, 1, d.powerLoss(t, root, filepath.Join(dir, "sha256")), "only the unsynced attachment is lost")
	for _, dg := range append(staged, put) {
		_, err := store.Get(ctx, dg)
		require.NoError(t, err, "what was synced is still there")
	}
	_, err = store.Get(ctx, lostOne)
	assert.ErrorIs(t, err, harness.CodeNotFound)
	again, err := store.Stage(ctx, []byte("epsilon"))
	require.NoError(t, err)
	assert.Equal(t, lostOne, again)
	require.NoError(t, store.Sync(ctx))
	assert.True(t, d.survives(t, root, path(again)))
	got, err := store.Get(ctx, again)
	require.NoError(t, err)
	assert.Equal(t, "epsilon", string(got))
}

// A new store over a directory another process filled syncs what it
// finds before counting it durable: that process may have stopped
// between staging and syncing.
func TestFilesStageSyncsWhatItFinds(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "att")
	first := attachments.NewFiles(dir)
	dg, err := first.Stage(context.Background(), []byte("left unsynced"))
	require.NoError(t, err)

	second := attachments.NewFiles(dir)
	d := newDisk()
	d.attach(t, second)
	again, err := second.Stage(context.Background(), []byte("left unsynced"))
	require.NoError(t, err)
	assert.Equal(t, dg, again)
	require.NoError(t, second.Sync(context.Background()))
	files, dirs := d.counts()
	assert.Equal(t, 1, files, "the file found is synced")
	assert.Equal(t, 1, dirs)
	p, _ := second.Path(dg)
	assert.True(t, strings.HasPrefix(p, dir))
	assert.True(t, d.names[filepath.Join(dir, "sha256")][filepath.Base(p)] != 0)
}
