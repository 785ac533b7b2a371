package fstest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
)

func TestMemFS(t *testing.T) {
	fstest.TestFileSystem(t, fstest.NewMemFS(""))
}

func TestMemFSRestricted(t *testing.T) {
	fstest.TestRestricted(t, fstest.NewMemFS("/home/dev/project"))
}

// noViews hides the optional capabilities of a file system.
type noViews struct{ fs.FileSystem }

func TestRestrictedWithoutViews(t *testing.T) {
	fstest.TestRestricted(t, noViews{fstest.NewMemFS("")})
}

func TestMemFSWithRoot(t *testing.T) {
	fstest.TestFileSystem(t, fstest.NewMemFS("/home/dev/project"))
}

func TestMemFSPermissions(t *testing.T) {
	ctx := context.Background()
	m := fstest.NewMemFS("/w")
	require.NoError(t, m.SetFile("/w/ro.txt", []byte("read only\n"), 0o444))
	require.NoError(t, m.SetFile("/w/secret.txt", []byte("hidden\n"), 0o200))

	text, err := m.ReadText(ctx, "/w/ro.txt", fs.Window{})
	require.NoError(t, err)
	_, err = m.Write(ctx, "/w/ro.txt", []byte("x"), fs.WriteOptions{Pre: fs.Precondition{Version: text.Info.Version}})
	require.ErrorIs(t, err, harness.CodePermission)
	_, err = m.Edit(ctx, "/w/ro.txt", fs.Edit{Old: "read", New: "x"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodePermission)
	_, err = m.ReadText(ctx, "/w/secret.txt", fs.Window{})
	require.ErrorIs(t, err, harness.CodePermission)

	require.NoError(t, m.Remove("/w/ro.txt"))
	_, err = m.Stat(ctx, "/w/ro.txt")
	require.ErrorIs(t, err, harness.CodeNotFound)
	assert.Equal(t, "/w", m.Root())
}

func TestMemFSDeletedSinceRead(t *testing.T) {
	ctx := context.Background()
	m := fstest.NewMemFS("")
	require.NoError(t, m.SetFile("/a.txt", []byte("x\n"), 0o644))
	text, err := m.ReadText(ctx, "/a.txt", fs.Window{})
	require.NoError(t, err)
	require.NoError(t, m.Remove("/a.txt"))
	_, err = m.Edit(ctx, "/a.txt", fs.Edit{Old: "x", New: "y"}, fs.Precondition{Version: text.Info.Version})
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, err = m.Write(ctx, "/a.txt", []byte("y"), fs.WriteOptions{Pre: fs.Precondition{Version: text.Info.Version}})
	require.ErrorIs(t, err, harness.CodeStale)
}
