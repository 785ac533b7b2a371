package fslocal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/fsimpl"
)

func bg() context.Context { return context.Background() }

func newFS(t *testing.T, root string) fslocal.FS {
	t.Helper()
	f, err := fslocal.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestConformance(t *testing.T) {
	fstest.TestFileSystem(t, newFS(t, t.TempDir()))
}

func TestConformanceRestricted(t *testing.T) {
	fstest.TestRestricted(t, newFS(t, t.TempDir()))
}

func TestNew(t *testing.T) {
	_, err := fslocal.New(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, harness.CodeNotFound)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = fslocal.New(file)
	require.Error(t, err)

	dir := t.TempDir()
	f := newFS(t, dir)
	assert.Equal(t, filepath.ToSlash(dir), f.Root())
	assert.Equal(t, filepath.ToSlash(dir), fsimpl.RootOf(f))
	require.NoError(t, f.Close())
	_, err = f.Stat(bg(), f.Root())
	require.Error(t, err, "closed")
}

func TestSymlinkedRootAcceptsBothSpellings(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "a.txt"), []byte("a\n"), 0o644))
	alias := filepath.Join(base, "alias")
	require.NoError(t, os.Symlink(real, alias))
	f := newFS(t, alias)
	for _, p := range []string{alias + "/a.txt", real + "/a.txt"} {
		text, err := f.ReadText(bg(), p, fs.Window{})
		require.NoError(t, err, p)
		assert.Equal(t, "a", text.Lines[0].Text)
	}
}

func TestFollowsLinksInsideRoot(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	require.NoError(t, os.WriteFile(filepath.Join(root, "real.txt"), []byte("one\n"), 0o640))
	require.NoError(t, os.Symlink("real.txt", filepath.Join(root, "rel-link")))
	require.NoError(t, os.Symlink(filepath.Join(root, "real.txt"), filepath.Join(root, "abs-link")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	require.NoError(t, os.Symlink("../real.txt", filepath.Join(root, "dir", "up-link")))

	for _, name := range []string{"rel-link", "abs-link", "dir/up-link"} {
		text, err := f.ReadText(bg(), root+"/"+name, fs.Window{})
		require.NoError(t, err, name)
		_, err = f.Write(bg(), root+"/"+name, []byte(name+"\n"), fs.WriteOptions{Pre: fs.Precondition{Version: text.Info.Version}})
		require.NoError(t, err, name)
		got, err := os.ReadFile(filepath.Join(root, "real.txt"))
		require.NoError(t, err)
		assert.Equal(t, name+"\n", string(got), "written through %s", name)
		st, err := os.Lstat(filepath.Join(root, name))
		require.NoError(t, err)
		assert.Equal(t, os.ModeSymlink, st.Mode()&os.ModeSymlink, "%s is still a link", name)
	}
	st, err := os.Stat(filepath.Join(root, "real.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "mode kept")

	lp, err := f.LocalPath(root + "/dir/up-link")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "real.txt"), lp)
	lp, err = f.LocalPath(root + "/dir/not-yet/there")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "dir/not-yet/there"), lp)
}

func TestModeKeptAndTempFilesCleaned(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "script.sh")
	require.NoError(t, os.WriteFile(p, []byte("echo hi\n"), 0o750))
	text, err := f.ReadText(bg(), p, fs.Window{})
	require.NoError(t, err)
	_, err = f.Edit(bg(), p, fs.Edit{Old: "hi", New: "hello"}, fs.Precondition{Version: text.Info.Version})
	require.NoError(t, err)
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), st.Mode().Perm())

	res, err := f.Write(bg(), root+"/new.txt", []byte("x"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.NoError(t, err)
	st, err = os.Stat(filepath.Join(root, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	assert.Equal(t, os.FileMode(0o644), res.Info.Mode.Perm())

	// A write called off at the last moment leaves nothing behind.
	ctx, cancel := context.WithCancel(bg())
	fslocal.SetHook(f, func(stage, _ string) {
		if stage == "commit" {
			cancel()
		}
	})
	_, err = f.Write(ctx, root+"/new.txt", []byte("never"), fs.WriteOptions{})
	require.ErrorIs(t, err, harness.CodeAborted)
	_, err = f.Write(ctx, root+"/other.txt", []byte("never"), fs.WriteOptions{})
	require.ErrorIs(t, err, harness.CodeAborted)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"new.txt", "script.sh"}, names, "no temporary files left")
	got, _ := os.ReadFile(filepath.Join(root, "new.txt"))
	assert.Equal(t, "x", string(got))
}

func TestSameSecondSameSizeChange(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "a.txt")
	require.NoError(t, os.WriteFile(p, []byte("aaaa\n"), 0o644))
	st, err := os.Stat(p)
	require.NoError(t, err)
	text, err := f.ReadText(bg(), p, fs.Window{})
	require.NoError(t, err)

	// Another program rewrites it in place, same size, and puts the
	// modification time back: size and mtime (crush's check, to the
	// second or even to the nanosecond) cannot tell.
	require.NoError(t, os.WriteFile(p, []byte("bbbb\n"), 0o644))
	require.NoError(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
	st2, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, st.ModTime(), st2.ModTime())
	require.Equal(t, st.Size(), st2.Size())

	_, err = f.Edit(bg(), p, fs.Edit{Old: "bbbb", New: "cccc"}, fs.Precondition{Version: text.Info.Version})
	require.ErrorIs(t, err, harness.CodeStale)
	_, err = f.Write(bg(), p, []byte("dddd\n"), fs.WriteOptions{Pre: fs.Precondition{Version: text.Info.Version}})
	require.ErrorIs(t, err, harness.CodeStale)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "bbbb\n", string(got))
}

func TestIdenticalRewriteStillMatches(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "a.go")
	require.NoError(t, os.WriteFile(p, []byte("package a\n"), 0o644))
	text, err := f.ReadText(bg(), p, fs.Window{})
	require.NoError(t, err)
	// A formatter rewrites the file with the same bytes (new inode, new
	// times): the model's view is still exact, so its edit goes through.
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.WriteFile(p, []byte("package a\n"), 0o644))
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(p, later, later))
	_, err = f.Edit(bg(), p, fs.Edit{Old: "package a", New: "package b"}, fs.Precondition{Version: text.Info.Version})
	require.NoError(t, err)
}

func TestOldFileVersionFromMetadata(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "old.txt")
	require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o644))
	// Judge versions an hour from now: the file's times are old enough
	// for the metadata to prove equality.
	fslocal.SetClock(f, func() time.Time { return time.Now().Add(time.Hour) })
	st, err := f.Stat(bg(), p)
	require.NoError(t, err)
	assert.Len(t, st.Version, 17, "metadata-only version: no content read")
	_, err = f.Write(bg(), p, []byte("new\n"), fs.WriteOptions{Pre: fs.Precondition{Version: st.Version}})
	require.NoError(t, err)
	// A metadata-only version cannot vouch for changed metadata.
	_, err = f.Write(bg(), p, []byte("x\n"), fs.WriteOptions{Pre: fs.Precondition{Version: st.Version}})
	require.ErrorIs(t, err, harness.CodeStale)
	// Nor can a malformed one.
	_, err = f.Write(bg(), p, []byte("x\n"), fs.WriteOptions{Pre: fs.Precondition{Version: "garbage"}})
	require.ErrorIs(t, err, harness.CodeStale)
}

func TestReadBytesGrowth(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "grow.bin")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{1}, 100), 0o644))
	fslocal.SetHook(f, func(stage, _ string) {
		if stage == "read:opened" {
			fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err == nil {
				fh.Write(bytes.Repeat([]byte{2}, 50))
				fh.Close()
			}
		}
	})
	data, _, err := f.ReadBytes(bg(), root+"/grow.bin", 120)
	require.ErrorIs(t, err, harness.CodeTooLarge)
	assert.Nil(t, data)
	assert.Contains(t, err.Error(), "grew")
}

func TestReadTextSmallFileSmallBuffer(t *testing.T) {
	// Reading a short file costs about its size, not the scanner's
	// largest read (an agent reads many files, many agents run at once).
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "notes.txt")
	require.NoError(t, os.WriteFile(p, []byte("notes\nEND\n"), 0o644))
	const reads = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range reads {
		got, err := f.ReadText(bg(), p, fs.Window{})
		require.NoError(t, err)
		require.Equal(t, 2, got.TotalLines)
		require.Equal(t, "END", got.Lines[1].Text)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, (after.TotalAlloc-before.TotalAlloc)/reads, uint64(4<<10), "bytes allocated by one read of a 10-byte file")
}

func TestAtomicReplaceSeenByReaders(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "big.txt")
	a := bytes.Repeat([]byte("a"), 1<<20)
	b := bytes.Repeat([]byte("b"), 1<<20)
	require.NoError(t, os.WriteFile(p, a, 0o644))
	var stop atomic.Bool
	var torn atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			got, err := os.ReadFile(p)
			if err != nil || !(bytes.Equal(got, a) || bytes.Equal(got, b)) {
				torn.Add(1)
			}
		}
	})
	for i := range 30 {
		data := a
		if i%2 == 0 {
			data = b
		}
		_, err := f.Write(bg(), p, data, fs.WriteOptions{})
		require.NoError(t, err)
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, torn.Load(), "a reader never sees a partial file")
}

func TestFIFONeverBlocks(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	if err := mkfifo(filepath.Join(root, "pipe")); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	_, err := f.ReadText(bg(), root+"/pipe", fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotRegular)
	_, _, err = f.ReadBytes(bg(), root+"/pipe", 10)
	require.ErrorIs(t, err, harness.CodeNotRegular)
	_, err = f.Edit(bg(), root+"/pipe", fs.Edit{Old: "a", New: "b"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeNotRegular)
}

func TestPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits do not stop this process")
	}
	root := t.TempDir()
	f := newFS(t, root)
	p := filepath.Join(root, "locked.txt")
	require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o000))
	_, err := f.ReadText(bg(), p, fs.Window{})
	require.ErrorIs(t, err, harness.CodePermission)
	ro := filepath.Join(root, "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	_, err = f.Write(bg(), ro+"/new.txt", []byte("x"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.ErrorIs(t, err, harness.CodePermission)
}

func TestLockHonoursContext(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	p := root + "/a.txt"
	_, err := f.Write(bg(), p, []byte("a"), fs.WriteOptions{})
	require.NoError(t, err)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var first atomic.Bool
	fslocal.SetHook(f, func(stage, _ string) {
		if stage == "write:locked" && first.CompareAndSwap(false, true) {
			entered <- struct{}{}
			<-release
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := f.Write(bg(), p, []byte("first"), fs.WriteOptions{})
		done <- err
	}()
	<-entered
	ctx, cancel := context.WithCancel(bg())
	cancel()
	_, err = f.Write(ctx, p, []byte("second"), fs.WriteOptions{})
	require.ErrorIs(t, err, harness.CodeAborted, "waiting for the lock ends with the context")
	close(release)
	require.NoError(t, <-done)
	got, _ := os.ReadFile(filepath.FromSlash(p))
	assert.Equal(t, "first", string(got))
}

func TestErrorsCarryCodes(t *testing.T) {
	root := t.TempDir()
	f := newFS(t, root)
	_, err := f.ReadText(bg(), root+"/nope", fs.Window{})
	var coded *harness.Error
	require.True(t, errors.As(err, &coded))
	assert.Equal(t, harness.CodeNotFound, coded.Code)
	assert.ErrorIs(t, err, iofs.ErrNotExist)
	assert.Contains(t, err.Error(), root+"/nope")
}

func ExampleNew() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	fsys, err := fslocal.New(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fsys.Close()
	ctx := context.Background()
	p := fsys.Root() + "/notes.txt"
	res, _ := fsys.Write(ctx, p, []byte("one\ntwo\nthree\n"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	text, _ := fsys.ReadText(ctx, p, fs.Window{Offset: 2, Limit: 1})
	fmt.Println(res.Created, text.Lines[0].Text, text.TotalLines)
	_, err = fsys.ReadText(ctx, "/etc/passwd", fs.Window{})
	fmt.Println(harness.CodeOf(err))
	// Output:
	// true two 3
	// outside_root
}
