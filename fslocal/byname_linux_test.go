//go:build linux

package fslocal

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

// openFDs counts the descriptors this process has open.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// A view that has listed its directory opens the files named in it by
// one openat, read with plain system calls (no *os.File, so the
// runtime's poller is never asked to take a regular file). What it
// returns is what the general path returns: content, size, mode, time
// and a version Stat agrees with; links, special files, missing names
// and nested paths take the general path, with its answers and errors.
func TestOpenByNameInListedView(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o640))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("nested\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "outside.txt"), []byte("outside\n"), 0o644))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "rel-link")))
	require.NoError(t, os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(dir, "abs-link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "a.txt"), old, old))

	top, err := New(root)
	require.NoError(t, err)
	defer top.Close()
	// Judged an hour on, the metadata proves the versions.
	top.(*localFS).now = func() time.Time { return time.Now().Add(time.Hour) }
	ctx := context.Background()
	before := openFDs(t)
	v, err := top.OpenDir(ctx, dir)
	require.NoError(t, err)
	lf := v.(*localFS)

	read := func(p string) (io.ReadCloser, fs.FileInfo, string) {
		t.Helper()
		rc, info, err := lf.Open(ctx, p)
		require.NoError(t, err, p)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		return rc, info, string(data)
	}
	rc, info, data := read(dir + "/a.txt")
	_, isOS := rc.(*os.File)
	assert.True(t, isOS, "before the listing, the general path")
	general := info

	_, err = lf.ReadDir(ctx, dir)
	require.NoError(t, err)
	rc, info, data = read(dir + "/a.txt")
	assert.IsType(t, &rawFile{}, rc, "after the listing, the fast path")
	assert.Equal(t, "alpha\nbeta\n", data)
	assert.Equal(t, general, info, "the same description, version included")
	st, err := top.Stat(ctx, dir+"/a.txt")
	require.NoError(t, err)
	assert.Equal(t, st.Version, info.Version)
	assert.NotEmpty(t, info.Version)
	assert.Equal(t, os.FileMode(0o640), info.Mode)

	rc, info, data = read(dir + "/rel-link")
	assert.IsType(t, &os.File{}, rc, "a link takes the general path")
	assert.Equal(t, "alpha\nbeta\n", data)
	assert.Equal(t, dir+"/rel-link", info.Path)
	_, _, err = lf.Open(ctx, dir+"/abs-link")
	assert.ErrorIs(t, err, harness.CodeOutsideRoot, "a link out of the view is refused as before")
	_, _, err = lf.Open(ctx, dir+"/pipe")
	assert.ErrorIs(t, err, harness.CodeNotRegular, "a FIFO neither blocks nor opens")
	_, _, err = lf.Open(ctx, dir+"/missing")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, _, err = lf.Open(ctx, dir+"/sub")
	assert.ErrorIs(t, err, harness.CodeNotRegular)
	rc, _, data = read(dir + "/sub/b.txt")
	assert.IsType(t, &os.File{}, rc, "a nested path takes the general path")
	assert.Equal(t, "nested\n", data)

	restricted := lf.WithPathPolicy(denyNone{}).(*localFS)
	rc, _, err = restricted.Open(ctx, dir+"/a.txt")
	require.NoError(t, err)
	assert.IsType(t, &os.File{}, rc, "a path policy checks every open the general way")
	rc.Close()

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = lf.Open(cancelled, dir+"/a.txt")
	assert.ErrorIs(t, err, context.Canceled)

	rc, _, err = lf.Open(ctx, dir+"/a.txt")
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.ErrorIs(t, rc.Close(), os.ErrClosed)
	_, err = rc.Read(make([]byte, 4))
	assert.ErrorIs(t, err, os.ErrClosed)

	require.NoError(t, v.(io.Closer).Close())
	assert.Equal(t, before, openFDs(t), "closing the view closes its directory")
	_, _, err = lf.Open(ctx, dir+"/a.txt")
	assert.Error(t, err, "a closed view opens nothing")
}

// denyNone is a path policy that allows everything.
type denyNone struct{}

func (denyNone) CheckPath(context.Context, string, fs.Access, fs.FileID) error { return nil }

// ReadDirTypes lists what ReadDir lists, names and types alike, without
// sizes and times; under a path policy it is ReadDir, every entry
// checked.
func TestReadDirTypes(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", "inner"), 0o755))
	for _, name := range []string{"b.go", "a.txt", ".hidden", "secret.pem"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "sub", name), []byte(name), 0o644))
	}
	require.NoError(t, os.Symlink("a.txt", filepath.Join(root, "sub", "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "sub", "pipe"), 0o644))
	many := filepath.Join(root, "many")
	require.NoError(t, os.Mkdir(many, 0o755))
	for i := range 1500 { // more than one getdents buffer
		require.NoError(t, os.WriteFile(filepath.Join(many, "file-with-a-longish-name-"+strconv.Itoa(i)), nil, 0o644))
	}
	top, err := New(root)
	require.NoError(t, err)
	defer top.Close()
	ctx := context.Background()
	lf := top.(*localFS)
	for _, dir := range []string{root + "/sub", root + "/many", root} {
		full, err := lf.ReadDir(ctx, dir)
		require.NoError(t, err)
		typed, err := lf.ReadDirTypes(ctx, dir, nil)
		require.NoError(t, err)
		require.Len(t, typed, len(full), dir)
		for i := range full {
			assert.Equal(t, full[i].Path, typed[i].Path)
			assert.Equal(t, full[i].Mode.Type(), typed[i].Mode, full[i].Path)
			assert.True(t, typed[i].ModTime.IsZero())
		}
	}
	full, err := lf.ReadDir(ctx, root+"/sub")
	require.NoError(t, err)
	picked, err := lf.ReadDirTypes(ctx, root+"/sub", func(name string, typ os.FileMode) bool {
		return name == "b.go" || name == "link"
	})
	require.NoError(t, err)
	require.Len(t, picked, len(full))
	for i, fi := range picked {
		if strings.HasSuffix(fi.Path, "/b.go") || strings.HasSuffix(fi.Path, "/link") {
			assert.Equal(t, full[i], fi, "a picked entry is described as ReadDir describes it")
		} else {
			assert.True(t, fi.ModTime.IsZero(), fi.Path)
		}
	}
	_, err = lf.ReadDirTypes(ctx, root+"/sub/a.txt", nil)
	assert.ErrorIs(t, err, harness.CodeNotDir)
	_, err = lf.ReadDirTypes(ctx, root+"/missing", nil)
	assert.ErrorIs(t, err, harness.CodeNotFound)

	pol := lf.WithPathPolicy(denySuffix(".pem")).(*localFS)
	typed, err := pol.ReadDirTypes(ctx, root+"/sub", nil)
	require.NoError(t, err)
	full, err = pol.ReadDir(ctx, root+"/sub")
	require.NoError(t, err)
	assert.Equal(t, full, typed, "under a policy, ReadDir itself")
	for _, fi := range typed {
		assert.NotContains(t, fi.Path, "secret.pem")
	}

	v, err := top.OpenDir(ctx, root+"/sub")
	require.NoError(t, err)
	defer v.(io.Closer).Close()
	_, err = v.(*localFS).ReadDirTypes(ctx, root+"/sub", nil)
	require.NoError(t, err)
	rc, _, err := v.(*localFS).Open(ctx, root+"/sub/b.go")
	require.NoError(t, err)
	assert.IsType(t, &rawFile{}, rc, "the typed listing keeps the directory for Open too")
	rc.Close()
}

// denySuffix denies the paths that end in a suffix.
type denySuffix string

func (d denySuffix) CheckPath(_ context.Context, p string, _ fs.Access, _ fs.FileID) error {
	if strings.HasSuffix(p, string(d)) {
		return os.ErrPermission
	}
	return nil
}
