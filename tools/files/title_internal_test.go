package files

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/fslocal"
)

// Titles name files relative to the workspace inside it, and whole
// outside it.
func TestTitlePath(t *testing.T) {
	local, err := fslocal.New(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { local.Close() })
	root := local.Root()
	tests := []struct{ p, want string }{
		{root + "/notes.txt", "notes.txt"},
		{root + "/src/main.go", "src/main.go"},
		{root, "."},
		{root + "x/outside.txt", root + "x/outside.txt"},
		{"/elsewhere/file.txt", "/elsewhere/file.txt"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, titlePath(local, tt.p), tt.p)
	}
	assert.Equal(t, "/a/b.txt", titlePath(nil, "/a/b.txt"), "no root: the whole path")
}
