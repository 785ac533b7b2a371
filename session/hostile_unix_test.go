//go:build unix

package session_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// TestJSONLHostileLogFiles: a session log replaced by a link to
// /dev/zero or by a FIFO makes Load, Open and Delete fail at once
// (not read zeros forever or wait for a writer), and List skips it.
func TestJSONLHostileLogFiles(t *testing.T) {
	dir := t.TempDir()
	store := session.NewJSONL(dir, session.StoreConfig{})
	ctx := context.Background()
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600))
	for _, id := range []string{"zero", "fifo"} {
		for op, f := range map[string]func() error{
			"load":   func() error { _, err := store.Load(ctx, id); return err },
			"open":   func() error { _, _, err := store.Open(ctx, id); return err },
			"delete": func() error { return store.Delete(ctx, id) },
		} {
			done := make(chan error, 1)
			go func() { done <- f() }()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, harness.CodeNotRegular, "%s %s", op, id)
				assert.ErrorContains(t, err, "not a regular file")
			case <-time.After(10 * time.Second):
				t.Fatalf("%s of %s hangs", op, id)
			}
		}
	}
	infos, err := store.List(ctx, session.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, infos)
}
