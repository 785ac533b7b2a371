package fs_test

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/fs"
)

func TestErrorMatching(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &fs.Error{Op: "read", Path: "/a", Code: fs.CodeNotFound, Err: iofs.ErrNotExist})
	assert.ErrorIs(t, err, fs.ErrNotFound)
	assert.ErrorIs(t, err, iofs.ErrNotExist)
	assert.NotErrorIs(t, err, fs.ErrStale)
	assert.Equal(t, fs.CodeNotFound, fs.CodeOf(err))
	assert.Equal(t, "fs: read /a: not_found: file does not exist", errors.Unwrap(err).Error())

	var coder interface{ ErrorCode() string }
	require.True(t, errors.As(err, &coder))
	assert.Equal(t, "not_found", coder.ErrorCode())

	assert.ErrorIs(t, &fs.Error{Code: fs.CodeExists}, iofs.ErrExist)
	assert.ErrorIs(t, &fs.Error{Code: fs.CodePermission}, iofs.ErrPermission)
	assert.Equal(t, fs.CodeAborted, fs.CodeOf(context.Canceled))
	assert.Equal(t, fs.CodeNotFound, fs.CodeOf(iofs.ErrNotExist))
	assert.Equal(t, fs.CodeIO, fs.CodeOf(errors.New("x")))
	assert.Equal(t, fs.Code(""), fs.CodeOf(nil))
	// A sentinel does not match a detailed error of another code.
	assert.False(t, fs.ErrStale.Is(&fs.Error{Code: fs.CodeStale, Path: "/x"}), "only sentinels are targets")
}

func TestAborted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, fs.Aborted(ctx, "read", "/a"))
	cancel()
	err := fs.Aborted(ctx, "read", "/a")
	assert.ErrorIs(t, err, fs.ErrAborted)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestCleanPath(t *testing.T) {
	got, err := fs.CleanPath("read", "/a/./b/../c/")
	require.NoError(t, err)
	assert.Equal(t, "/a/c", got)
	got, err = fs.CleanPath("read", "/../../etc")
	require.NoError(t, err)
	assert.Equal(t, "/etc", got)
	for _, bad := range []string{"", "rel/path", "/a\x00b", "/" + strings.Repeat("n", 256), "/" + strings.Repeat("d/", 2100)} {
		_, err := fs.CleanPath("read", bad)
		assert.ErrorIs(t, err, fs.ErrInvalidPath, "%.40q", bad)
	}
	_, err = fs.CleanPath("read", "/a\x00b")
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
		rel, ok := fs.Within(c.root, c.p)
		assert.Equal(t, c.ok, ok, "%s in %s", c.p, c.root)
		assert.Equal(t, c.rel, rel, "%s in %s", c.p, c.root)
	}
}

func TestLedger(t *testing.T) {
	l := fs.NewLedger()
	assert.Equal(t, fs.IfAbsent(), l.WritePrecondition("/a"), "unseen: create only")
	_, err := l.EditPrecondition("/a")
	require.ErrorIs(t, err, fs.ErrNotObserved)

	l.Observe("/a", "v1")
	assert.Equal(t, fs.IfVersion("v1"), l.WritePrecondition("/a"))
	pre, err := l.EditPrecondition("/a")
	require.NoError(t, err)
	assert.Equal(t, fs.IfVersion("v1"), pre)
	l.Observe("/a", "v2")
	v, ok := l.Version("/a")
	assert.True(t, ok)
	assert.Equal(t, "v2", v)
	assert.Equal(t, 1, l.Len())
	l.Forget("/a")
	_, ok = l.Version("/a")
	assert.False(t, ok)

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				l.Observe(fmt.Sprintf("/f%d", i), fmt.Sprint(j))
				l.Version("/f0")
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 8, l.Len())
}

func TestFileInfo(t *testing.T) {
	fi := fs.FileInfo{Path: "/a/b.txt", Mode: iofs.ModeDir}
	assert.Equal(t, "b.txt", fi.Name())
	assert.True(t, fi.IsDir())
	assert.Equal(t, "/", fs.FileInfo{Path: "/"}.Name())
}
