//go:build unix

package attachments_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/session/attachments"
)

// TestFilesGetHostile: an attachment file replaced by a link to
// /dev/zero or by a FIFO fails at once instead of growing without end or
// hanging.
func TestFilesGetHostile(t *testing.T) {
	dir := t.TempDir()
	store := attachments.NewFiles(dir)
	ctx := context.Background()
	for name, plant := range map[string]func(string) error{
		"zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o600) },
	} {
		data := []byte("attachment " + name)
		digest, err := store.Put(ctx, data)
		require.NoError(t, err)
		p := filepath.Join(dir, "sha256", strings.TrimPrefix(digest, "sha256:"))
		require.NoError(t, os.Remove(p))
		require.NoError(t, plant(p))
		done := make(chan error, 1)
		go func() { _, err := store.Get(ctx, digest); done <- err }()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, harness.CodeNotRegular, name)
			assert.ErrorContains(t, err, "not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Get hangs", name)
		}
		assert.Equal(t, digest, attdigest.Of(data))
	}
}

// TestFilesSyncHostile: a staged attachment replaced by a FIFO before
// Sync does not hang Sync.
func TestFilesSyncHostile(t *testing.T) {
	dir := t.TempDir()
	store := attachments.NewFiles(dir)
	ctx := context.Background()
	digest, err := store.Stage(ctx, []byte("staged, then replaced"))
	require.NoError(t, err)
	p := filepath.Join(dir, "sha256", strings.TrimPrefix(digest, "sha256:"))
	require.NoError(t, os.Remove(p))
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	done := make(chan error, 1)
	go func() { done <- store.Sync(ctx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Sync hangs on a FIFO")
	}
	_, err = store.Get(ctx, digest)
	assert.ErrorIs(t, err, harness.CodeNotRegular)
}
