package durable

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600))
	assert.NoError(t, SyncDir(dir))
	err := SyncDir(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a directory that is not there is an error")
}
