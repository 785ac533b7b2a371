package attachments_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/session/sessiontest"
	"github.com/go-harness/harness/tools"
)

func TestFilesConformance(t *testing.T) {
	sessiontest.TestAttachments(t, func(t *testing.T) tools.AttachmentStore {
		return attachments.NewFiles(filepath.Join(t.TempDir(), "att"))
	})
}

// The store is what the tools and the model contract ask for.
var _ tools.AttachmentStore = (*attachments.Store)(nil)

func TestMemoryConformance(t *testing.T) {
	sessiontest.TestAttachments(t, func(t *testing.T) tools.AttachmentStore { return attachments.NewMemory() })
}

func TestFilesLayout(t *testing.T) {
	sessionsDir := t.TempDir()
	store := session.NewJSONL(sessionsDir, session.StoreConfig{})
	dir := filepath.Join(sessionsDir, "attachments") // the usual place
	att := attachments.NewFiles(dir)
	ctx := context.Background()
	d, err := att.Put(ctx, []byte("pixels"))
	require.NoError(t, err)
	p, err := att.Path(d)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "sha256", d[len("sha256:"):]), p)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(p))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
	assert.Equal(t, d[len("sha256:"):], entries[0].Name())

	// The attachments directory does not disturb the session store.
	log, err := store.Create(ctx, session.Header{Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	infos, err := store.List(ctx, session.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, infos, 1)
}

func TestFilesCorruption(t *testing.T) {
	att := attachments.NewFiles(t.TempDir())
	ctx := context.Background()
	data := bytes.Repeat([]byte{7}, 4096)
	d, err := att.Put(ctx, data)
	require.NoError(t, err)
	p, _ := att.Path(d)

	// Flip one byte on disk: Get refuses rather than return bad bytes.
	bad := bytes.Clone(data)
	bad[100] = 8
	require.NoError(t, os.WriteFile(p, bad, 0o600))
	got, err := att.Get(ctx, d)
	assert.ErrorIs(t, err, harness.CodeCorruptAttachment)
	assert.Nil(t, got)
	assert.Contains(t, err.Error(), d)

	// Putting the same bytes again repairs the stored copy.
	d2, err := att.Put(ctx, data)
	require.NoError(t, err)
	assert.Equal(t, d, d2)
	got, err = att.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	// A truncated copy is repaired too.
	require.NoError(t, os.WriteFile(p, data[:10], 0o600))
	_, err = att.Get(ctx, d)
	assert.ErrorIs(t, err, harness.CodeCorruptAttachment)
	_, err = att.Put(ctx, data)
	require.NoError(t, err)
	got, err = att.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, data, got)
}

func TestFilesUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o600))
	att := attachments.NewFiles(filepath.Join(blocker, "att")) // below a regular file
	_, err := att.Put(context.Background(), []byte("data"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "attachment")
}

func TestDigest(t *testing.T) {
	assert.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", attdigest.Of(nil))
	assert.True(t, attdigest.Valid(attdigest.Of([]byte("x"))))
	assert.False(t, attdigest.Valid("sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"))
}

func ExampleNewFiles() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	att := attachments.NewFiles(filepath.Join(dir, "attachments"))
	d, _ := att.Put(context.Background(), []byte("hello"))
	data, _ := att.Get(context.Background(), d)
	fmt.Println(d)
	fmt.Println(string(data))
	// Output:
	// sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
	// hello
}

// FuzzAttachmentPath checks that only well-formed digests name files, and
// that every file they name lies inside the store's directory.
func FuzzAttachmentPath(f *testing.F) {
	f.Add(attdigest.Of([]byte("x")))
	f.Add("sha256:../../etc/passwd")
	f.Add("sha256:" + strings.Repeat("a", 63) + "/")
	f.Add("")
	dir := filepath.Join(f.TempDir(), "att")
	att := attachments.NewFiles(dir)
	f.Fuzz(func(t *testing.T, d string) {
		p, err := att.Path(d)
		if !attdigest.Valid(d) {
			if !errors.Is(err, harness.CodeInvalidDigest) {
				t.Fatalf("%q: want ErrInvalidDigest, got %v", d, err)
			}
			return
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || strings.HasPrefix(rel, "..") || filepath.Dir(rel) != "sha256" {
			t.Fatalf("%q names %s, outside %s", d, p, dir)
		}
	})
}

func TestZeroStoreIsMemory(t *testing.T) {
	var s attachments.Store
	ctx := context.Background()
	_, err := s.Get(ctx, attdigest.Of([]byte("x")))
	assert.ErrorIs(t, err, harness.CodeNotFound)
	d, err := s.Put(ctx, []byte("x"))
	require.NoError(t, err)
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, []byte("x"), got)
}

// A memory store (and the zero Store) stages by putting, and has
// nothing to sync.
func TestMemoryStage(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]*attachments.Store{"memory": attachments.NewMemory(), "zero": {}} {
		d, err := s.Stage(ctx, []byte("staged"))
		require.NoError(t, err, name)
		assert.Equal(t, attdigest.Of([]byte("staged")), d, name)
		got, err := s.Get(ctx, d)
		require.NoError(t, err, name)
		assert.Equal(t, "staged", string(got), name)
		require.NoError(t, s.Sync(ctx), name)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		assert.ErrorIs(t, s.Sync(cancelled), context.Canceled, name)
	}
}

// A staged attachment removed before Sync fails that Sync, once; the
// next stores and syncs as usual.
func TestFilesSyncRemoved(t *testing.T) {
	att := attachments.NewFiles(t.TempDir())
	ctx := context.Background()
	d, err := att.Stage(ctx, []byte("gone before its sync"))
	require.NoError(t, err)
	p, _ := att.Path(d)
	require.NoError(t, os.Remove(p))
	assert.ErrorIs(t, att.Sync(ctx), os.ErrNotExist)
	require.NoError(t, att.Sync(ctx), "reported once")
	_, err = att.Stage(ctx, []byte("gone before its sync"))
	require.NoError(t, err)
	require.NoError(t, att.Sync(ctx))
	got, err := att.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "gone before its sync", string(got))
}
