package fsimpl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

func TestAborted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, fsimpl.Aborted(ctx, "read", "/a"))
	cancel()
	err := fsimpl.Aborted(ctx, "read", "/a")
	assert.ErrorIs(t, err, harness.CodeAborted)
	assert.ErrorIs(t, err, context.Canceled)

	// An expired deadline is a timeout, as everywhere.
	dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer dcancel()
	err = fsimpl.Aborted(dctx, "read", "/a")
	assert.ErrorIs(t, err, harness.CodeTimeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCleanPath(t *testing.T) {
	got, err := fsimpl.CleanPath("read", "/a/./b/../c/")
	require.NoError(t, err)
	assert.Equal(t, "/a/c", got)
	got, err = fsimpl.CleanPath("read", "/../../etc")
	require.NoError(t, err)
	assert.Equal(t, "/etc", got)
	for _, bad := range []string{"", "rel/path", "/a\x00b", "/" + strings.Repeat("n", 256), "/" + strings.Repeat("d/", 2100)} {
		_, err := fsimpl.CleanPath("read", bad)
		assert.ErrorIs(t, err, harness.CodeInvalidPath, "%.40q", bad)
	}
	_, err = fsimpl.CleanPath("read", "/a\x00b")
	assert.Contains(t, err.Error(), `/a\x00b`)
}

func TestWithin(t *testing.T) {
	cases := []struct {
		root, p, rel string
		ok           bool
	}{
		{"/w", "/w", ".", true},
		{"/w", "/w/a/b", "a/b", true},
		{"/w", "/wx", "", false},
		{"/w", "/", "", false},
		{"/", "/", ".", true},
		{"/", "/a", "a", true},
	}
	for _, c := range cases {
		rel, ok := fsimpl.Within(c.root, c.p)
		assert.Equal(t, c.ok, ok, "%s in %s", c.p, c.root)
		assert.Equal(t, c.rel, rel, "%s in %s", c.p, c.root)
	}
}

func TestMatchStyle(t *testing.T) {
	assert.Equal(t, "a\r\nb\r\n", string(fsimpl.MatchStyle([]byte("x\r\ny\r\n"), []byte("a\nb\n"))))
	assert.Equal(t, "a\nb\r\n", string(fsimpl.MatchStyle([]byte("x\r\ny\r\n"), []byte("a\nb\r\n"))), "data with its own CR is kept")
	assert.Equal(t, "a\nb\n", string(fsimpl.MatchStyle([]byte("x\ny\r\nz\n"), []byte("a\nb\n"))), "LF-dominant stays LF")
	assert.Equal(t, fsimpl.BOM+"a\n", string(fsimpl.MatchStyle([]byte(fsimpl.BOM+"x\n"), []byte("a\n"))))
	assert.Equal(t, fsimpl.BOM+"a\r\n", string(fsimpl.MatchStyle([]byte(fsimpl.BOM+"x\r\n"), []byte("a\n"))))
	assert.Equal(t, fsimpl.BOM+"a", string(fsimpl.MatchStyle([]byte(fsimpl.BOM+"x"), []byte(fsimpl.BOM+"a"))))
	assert.Equal(t, "single", string(fsimpl.MatchStyle([]byte("x\r\n"), []byte("single"))))
}

func TestWithPath(t *testing.T) {
	_, _, err := fs.ApplyEdit([]byte("a"), fs.Edit{Old: "zzz", New: "y"})
	require.Error(t, err)
	got := fsimpl.WithPath(err, "/w/f.txt")
	assert.ErrorIs(t, got, harness.CodeEditNotFound, "the code is kept")
	var d *fs.PathError
	require.ErrorAs(t, got, &d)
	assert.Equal(t, "/w/f.txt", d.Path)
	assert.Contains(t, got.Error(), "/w/f.txt")

	// A path already set, or an error without a PathError, is kept.
	assert.Same(t, got, fsimpl.WithPath(got, "/other"))
	plain := errors.New("x")
	assert.Same(t, plain, fsimpl.WithPath(plain, "/p"))
}
