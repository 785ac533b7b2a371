package fstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"testing"
	gofstest "testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// TestFileSystem runs the conformance suite against fsys, as
// testing/fstest.TestFS does for an io/fs.FS:
//
//	func TestMyFS(t *testing.T) {
//		fstest.TestFileSystem(t, newMyFS(t.TempDir()))
//	}
//
// fsys must be writable below its root (fs.Rooter). Each subtest works in
// its own fresh directory there. The suite checks every error code a
// FileSystem can produce without OS help (permissions and symbolic links
// are for implementation tests), preconditions, text windows, ReadBytes
// caps, edits, atomic create-if-absent, and that concurrent
// read-then-edit loops lose no update.
func TestFileSystem(t *testing.T, fsys fs.FileSystem) {
	root := fsimpl.RootOf(fsys)
	base := path.Join(root, fmt.Sprintf("fstest-%p", t))
	s := &suite{fsys: fsys, root: root}
	for _, c := range []struct {
		name string
		fn   func(*testing.T, string)
	}{
		{"CreateAndRead", s.createAndRead},
		{"CreateOnly", s.createOnly},
		{"ReplaceIfVersion", s.replaceIfVersion},
		{"SameSizeChange", s.sameSizeChange},
		{"Unchanged", s.unchanged},
		{"KeepStyle", s.keepStyle},
		{"CreatesParents", s.createsParents},
		{"TextWindows", s.textWindows},
		{"PastEnd", s.pastEnd},
		{"NotText", s.notText},
		{"NotFound", s.notFound},
		{"NotADirectory", s.notADirectory},
		{"NotRegular", s.notRegular},
		{"InvalidPath", s.invalidPath},
		{"OutsideRoot", s.outsideRoot},
		{"ReadBytesCap", s.readBytesCap},
		{"Edit", s.edit},
		{"EditStyles", s.editStyles},
		{"EditChecksVersionFirst", s.editChecksVersionFirst},
		{"ReadDir", s.readDir},
		{"Aborted", s.aborted},
		{"ConcurrentCreate", s.concurrentCreate},
		{"ConcurrentReadEdit", s.concurrentReadEdit},
		{"IOFS", s.iofs},
		{"OpenDir", s.openDir},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, path.Join(base, c.name)) })
	}
}

type suite struct {
	fsys fs.FileSystem
	root string
}

func bg() context.Context { return context.Background() }

// put creates a file with content, failing the test on error.
func (s *suite) put(t *testing.T, p, content string) fs.FileInfo {
	t.Helper()
	res, err := s.fsys.Write(bg(), p, []byte(content), fs.WriteOptions{})
	require.NoError(t, err, "writing %s", p)
	return res.Info
}

// content returns the bytes at p.
func (s *suite) content(t *testing.T, p string) string {
	t.Helper()
	b, _, err := s.fsys.ReadBytes(bg(), p, 1<<30)
	require.NoError(t, err, "reading %s", p)
	return string(b)
}

func code(err error) harness.Code { return harness.CodeOf(err) }

func (s *suite) createAndRead(t *testing.T, dir string) {
	p := dir + "/a.txt"
	res, err := s.fsys.Write(bg(), p, []byte("hello\nworld\n"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.Nil(t, res.Previous)
	assert.Equal(t, p, res.Info.Path)
	assert.Equal(t, int64(12), res.Info.Size)
	assert.NotEmpty(t, res.Info.Version)
	assert.True(t, res.Info.Mode.IsRegular())

	b, info, err := s.fsys.ReadBytes(bg(), p, 100)
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\n", string(b))
	assert.Equal(t, int64(12), info.Size)
	assert.NotEmpty(t, info.Version)

	st, err := s.fsys.Stat(bg(), dir+"/./x/../a.txt")
	require.NoError(t, err)
	assert.Equal(t, p, st.Path, "paths come back clean")
	assert.Equal(t, int64(12), st.Size)
	assert.False(t, st.Mode.IsDir())

	text, err := s.fsys.ReadText(bg(), p, fs.Window{})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: "hello"}, {Text: "world"}}, text.Lines)
	assert.Equal(t, 2, text.TotalLines)
	assert.Equal(t, p, text.Info.Path)

	// Every version handed out for the unchanged file is accepted.
	for _, v := range []string{res.Info.Version, info.Version, st.Version, text.Info.Version} {
		_, err := s.fsys.Write(bg(), p, []byte("hello\nworld\n"), fs.WriteOptions{Pre: fs.Precondition{Version: v}})
		require.NoError(t, err, "version %q", v)
	}
}

func (s *suite) createOnly(t *testing.T, dir string) {
	p := dir + "/a.txt"
	s.put(t, p, "original")
	_, err := s.fsys.Write(bg(), p, []byte("clobber"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.ErrorIs(t, err, harness.CodeExists)
	assert.Equal(t, harness.CodeExists, code(err))
	assert.Equal(t, "original", s.content(t, p))
}

func (s *suite) replaceIfVersion(t *testing.T, dir string) {
	p := dir + "/a.txt"
	v1 := s.put(t, p, "one\n").Version
	res, err := s.fsys.Write(bg(), p, []byte("two\n"), fs.WriteOptions{Pre: fs.Precondition{Version: v1}})
	require.NoError(t, err)
	assert.False(t, res.Created)
	assert.Equal(t, "one\n", string(res.Previous))
	assert.Equal(t, int64(4), res.PreviousSize)
	assert.Equal(t, "two\n", string(res.Written))
	v2 := res.Info.Version

	_, err = s.fsys.Write(bg(), p, []byte("three\n"), fs.WriteOptions{Pre: fs.Precondition{Version: v1}})
	require.ErrorIs(t, err, harness.CodeStale)
	assert.Equal(t, "two\n", s.content(t, p))

	// write, then edit, then edit: each result's version is the next
	// precondition.
	e1, err := s.fsys.Edit(bg(), p, fs.Edit{Old: "two", New: "2"}, fs.Precondition{Version: v2})
	require.NoError(t, err)
	e2, err := s.fsys.Edit(bg(), p, fs.Edit{Old: "2", New: "II"}, fs.Precondition{Version: e1.Info.Version})
	require.NoError(t, err)
	assert.Equal(t, "II\n", string(e2.New))
	assert.Equal(t, "II\n", s.content(t, p))
	_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "II", New: "x"}, fs.Precondition{Version: e1.Info.Version})
	require.ErrorIs(t, err, harness.CodeStale)
}

func (s *suite) sameSizeChange(t *testing.T, dir string) {
	p := dir + "/a.txt"
	s.put(t, p, "aaaa\n")
	text, err := s.fsys.ReadText(bg(), p, fs.Window{})
	require.NoError(t, err)
	seen := text.Info.Version
	// Someone else rewrites it at once, with the same size.
	s.put(t, p, "bbbb\n")
	_, err = s.fsys.Write(bg(), p, []byte("mine\n"), fs.WriteOptions{Pre: fs.Precondition{Version: seen}})
	require.ErrorIs(t, err, harness.CodeStale, "a same-size change right after the read must be caught")
	_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "bbbb", New: "c"}, fs.Precondition{Version: seen})
	require.ErrorIs(t, err, harness.CodeStale)
	assert.Equal(t, "bbbb\n", s.content(t, p))
}

func (s *suite) unchanged(t *testing.T, dir string) {
	p := dir + "/a.txt"
	v := s.put(t, p, "same\n").Version
	res, err := s.fsys.Write(bg(), p, []byte("same\n"), fs.WriteOptions{Pre: fs.Precondition{Version: v}})
	require.NoError(t, err)
	assert.True(t, res.Unchanged)
	_, err = s.fsys.Write(bg(), p, []byte("other\n"), fs.WriteOptions{Pre: fs.Precondition{Version: res.Info.Version}})
	require.NoError(t, err)
}

func (s *suite) keepStyle(t *testing.T, dir string) {
	p := dir + "/a.txt"
	v := s.put(t, p, fsimpl.BOM+"one\r\ntwo\r\n").Version
	res, err := s.fsys.Write(bg(), p, []byte("one\ntwo\nthree\n"), fs.WriteOptions{Pre: fs.Precondition{Version: v}, KeepStyle: true})
	require.NoError(t, err)
	assert.Equal(t, fsimpl.BOM+"one\r\ntwo\r\nthree\r\n", s.content(t, p))
	assert.Equal(t, fsimpl.BOM+"one\r\ntwo\r\nthree\r\n", string(res.Written))

	// Written back as a read window shows it: the file is unchanged.
	text, err := s.fsys.ReadText(bg(), p, fs.Window{})
	require.NoError(t, err)
	var shown []string
	for _, l := range text.Lines {
		shown = append(shown, l.Text+"\n")
	}
	res, err = s.fsys.Write(bg(), p, []byte(strings.Join(shown, "")), fs.WriteOptions{Pre: fs.Precondition{Version: text.Info.Version}, KeepStyle: true})
	require.NoError(t, err)
	assert.True(t, res.Unchanged, "CRLF and BOM round trip")

	// Without KeepStyle the bytes are written as given.
	_, err = s.fsys.Write(bg(), p, []byte("raw\n"), fs.WriteOptions{})
	require.NoError(t, err)
	assert.Equal(t, "raw\n", s.content(t, p))
}

func (s *suite) createsParents(t *testing.T, dir string) {
	p := dir + "/x/y/z.txt"
	res, err := s.fsys.Write(bg(), p, []byte("deep"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.NoError(t, err)
	assert.True(t, res.Created)
	st, err := s.fsys.Stat(bg(), dir+"/x/y")
	require.NoError(t, err)
	assert.True(t, st.Mode.IsDir())
	assert.Equal(t, "deep", s.content(t, p))
}

func (s *suite) textWindows(t *testing.T, dir string) {
	p := dir + "/lines.txt"
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	b.WriteString(strings.Repeat("é", 30))
	s.put(t, p, fsimpl.BOM+b.String())

	text, err := s.fsys.ReadText(bg(), p, fs.Window{Offset: 3, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: "line 3"}, {Text: "line 4"}}, text.Lines)
	assert.Equal(t, 3, text.Offset)
	assert.Equal(t, 11, text.TotalLines)
	assert.True(t, text.CRLF)
	assert.True(t, text.BOM)

	text, err = s.fsys.ReadText(bg(), p, fs.Window{Offset: 11, MaxLineRunes: 10})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: strings.Repeat("é", 10), Cut: 20}}, text.Lines)

	text, err = s.fsys.ReadText(bg(), p, fs.Window{MaxBytes: 20})
	require.NoError(t, err)
	assert.Len(t, text.Lines, 2)
	assert.True(t, text.Capped)

	empty := dir + "/empty.txt"
	s.put(t, empty, "")
	text, err = s.fsys.ReadText(bg(), empty, fs.Window{})
	require.NoError(t, err)
	assert.Empty(t, text.Lines)
	assert.Equal(t, 0, text.TotalLines)
	assert.NotEmpty(t, text.Info.Version)
}

func (s *suite) pastEnd(t *testing.T, dir string) {
	p := dir + "/a.txt"
	s.put(t, p, "1\n2\n3\n")
	_, err := s.fsys.ReadText(bg(), p, fs.Window{Offset: 4})
	require.ErrorIs(t, err, harness.CodePastEnd)
	var fe *fs.PathError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, int64(3), fe.Total)
}

func (s *suite) notText(t *testing.T, dir string) {
	bin := dir + "/bin"
	s.put(t, bin, "PK\x03\x04\x00\x00 binary")
	_, err := s.fsys.ReadText(bg(), bin, fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotText)
	_, err = s.fsys.Edit(bg(), bin, fs.Edit{Old: "binary", New: "text"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeNotText)
	b, _, err := s.fsys.ReadBytes(bg(), bin, 100)
	require.NoError(t, err, "ReadBytes reads any bytes")
	assert.Equal(t, "PK\x03\x04\x00\x00 binary", string(b))

	latin := dir + "/latin1.txt"
	s.put(t, latin, "caf\xe9\n")
	_, err = s.fsys.ReadText(bg(), latin, fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotText)
	assert.Equal(t, "caf\xe9\n", s.content(t, latin), "refusing leaves the file alone")
}

func (s *suite) notFound(t *testing.T, dir string) {
	s.put(t, dir+"/present", "x")
	p := dir + "/missing.txt"
	_, err := s.fsys.Stat(bg(), p)
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.fsys.ReadText(bg(), p, fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, _, err = s.fsys.ReadBytes(bg(), p, 10)
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "a", New: "b"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.fsys.ReadDir(bg(), dir+"/nodir")
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.fsys.ReadText(bg(), dir+"/nodir/file", fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotFound)
	// A write expecting a version of a file that is gone is stale.
	_, err = s.fsys.Write(bg(), p, []byte("x"), fs.WriteOptions{Pre: fs.Precondition{Version: "gone"}})
	require.ErrorIs(t, err, harness.CodeStale)
	_, err = s.fsys.Stat(bg(), p)
	require.ErrorIs(t, err, harness.CodeNotFound, "a failed precondition creates nothing")
}

func (s *suite) notADirectory(t *testing.T, dir string) {
	s.put(t, dir+"/file", "x")
	p := dir + "/file/child.txt"
	_, err := s.fsys.ReadText(bg(), p, fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotDir)
	_, err = s.fsys.Write(bg(), p, []byte("x"), fs.WriteOptions{})
	require.ErrorIs(t, err, harness.CodeNotDir)
	_, err = s.fsys.ReadDir(bg(), dir+"/file")
	require.ErrorIs(t, err, harness.CodeNotDir)
}

func (s *suite) notRegular(t *testing.T, dir string) {
	s.put(t, dir+"/sub/f", "x")
	d := dir + "/sub"
	_, err := s.fsys.ReadText(bg(), d, fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotRegular)
	_, _, err = s.fsys.ReadBytes(bg(), d, 10)
	require.ErrorIs(t, err, harness.CodeNotRegular)
	_, err = s.fsys.Write(bg(), d, []byte("x"), fs.WriteOptions{})
	require.ErrorIs(t, err, harness.CodeNotRegular)
	_, err = s.fsys.Edit(bg(), d, fs.Edit{Old: "a", New: "b"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeNotRegular)
	st, err := s.fsys.Stat(bg(), d)
	require.NoError(t, err)
	assert.True(t, st.Mode.IsDir())
	assert.Empty(t, st.Version)
}

func (s *suite) invalidPath(t *testing.T, dir string) {
	for _, p := range []string{"", "relative/a.txt", dir + "/nul\x00.txt", dir + "/" + strings.Repeat("n", 300)} {
		_, err := s.fsys.ReadText(bg(), p, fs.Window{})
		require.ErrorIs(t, err, harness.CodeInvalidPath, "%.60q", p)
		_, err = s.fsys.Write(bg(), p, []byte("x"), fs.WriteOptions{})
		require.ErrorIs(t, err, harness.CodeInvalidPath, "%.60q", p)
		_, err = s.fsys.Stat(bg(), p)
		require.ErrorIs(t, err, harness.CodeInvalidPath, "%.60q", p)
	}
}

func (s *suite) outsideRoot(t *testing.T, dir string) {
	if s.root == "/" {
		t.Skip("the file system's root is /: nothing is outside it")
	}
	outside := []string{path.Dir(s.root), s.root + "/../x.txt", path.Dir(s.root) + "/x.txt", s.root + "x/y"}
	for _, p := range outside {
		_, err := s.fsys.ReadText(bg(), p, fs.Window{})
		require.ErrorIs(t, err, harness.CodeOutsideRoot, p)
		_, err = s.fsys.Write(bg(), p, []byte("x"), fs.WriteOptions{})
		require.ErrorIs(t, err, harness.CodeOutsideRoot, p)
		_, err = s.fsys.ReadDir(bg(), p)
		require.ErrorIs(t, err, harness.CodeOutsideRoot, p)
	}
}

func (s *suite) readBytesCap(t *testing.T, dir string) {
	p := dir + "/ten"
	s.put(t, p, "0123456789")
	b, _, err := s.fsys.ReadBytes(bg(), p, 10)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(b))
	b, _, err = s.fsys.ReadBytes(bg(), p, 9)
	require.ErrorIs(t, err, harness.CodeTooLarge)
	assert.Nil(t, b, "never truncated")
	var fe *fs.PathError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, int64(10), fe.Total)
	assert.Equal(t, int64(9), fe.Limit)
}

func (s *suite) edit(t *testing.T, dir string) {
	p := dir + "/a.go"
	v := s.put(t, p, "package a\n\nfunc f() int { return 1 }\nfunc g() int { return 1 }\n").Version
	res, err := s.fsys.Edit(bg(), p, fs.Edit{Old: "func f() int { return 1 }", New: "func f() int { return 2 }"}, fs.Precondition{Version: v})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Replacements)
	assert.Equal(t, "package a\n\nfunc f() int { return 2 }\nfunc g() int { return 1 }\n", string(res.New))
	assert.Equal(t, "package a\n\nfunc f() int { return 1 }\nfunc g() int { return 1 }\n", string(res.Old))
	require.Len(t, res.Spans, 1)
	assert.Equal(t, "func f() int { return 2 }", string(res.New[res.Spans[0].NewStart:res.Spans[0].NewEnd]))
	assert.NotEqual(t, v, res.Info.Version)
	assert.Equal(t, string(res.New), s.content(t, p))

	_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "() int {", New: "() uint {"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeAmbiguousEdit)
	_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "return 9", New: "return 3"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeEditNotFound)
	_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "", New: "x"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeInvalidEdit)
	res, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "int", New: "int64", ReplaceAll: true}, fs.Precondition{})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Replacements)
	assert.Equal(t, "package a\n\nfunc f() int64 { return 2 }\nfunc g() int64 { return 1 }\n", s.content(t, p))
}

func (s *suite) editStyles(t *testing.T, dir string) {
	p := dir + "/win.txt"
	s.put(t, p, fsimpl.BOM+"alpha\r\nbeta\r\ngamma\r\n")
	_, err := s.fsys.Edit(bg(), p, fs.Edit{Old: "alpha\nbeta", New: "one\ntwo\nthree"}, fs.Precondition{})
	require.NoError(t, err)
	assert.Equal(t, fsimpl.BOM+"one\r\ntwo\r\nthree\r\ngamma\r\n", s.content(t, p), "CRLF and BOM kept")
}

func (s *suite) editChecksVersionFirst(t *testing.T, dir string) {
	p := dir + "/a.txt"
	v := s.put(t, p, "before\n").Version
	s.put(t, p, "after!\n")
	for _, e := range []fs.Edit{
		{Old: "before", New: "x"},              // would be found in the old text only
		{Old: "nowhere", New: "x"},             // found nowhere
		{Old: "\n", New: "x"},                  // would be fine
		{Old: "a", New: "b", ReplaceAll: true}, // several
	} {
		_, err := s.fsys.Edit(bg(), p, e, fs.Precondition{Version: v})
		require.ErrorIs(t, err, harness.CodeStale, "%+v", e)
	}
	assert.Equal(t, "after!\n", s.content(t, p))
}

func (s *suite) readDir(t *testing.T, dir string) {
	s.put(t, dir+"/b.txt", "b")
	s.put(t, dir+"/a.txt", "aa")
	s.put(t, dir+"/c/d.txt", "d")
	list, err := s.fsys.ReadDir(bg(), dir)
	require.NoError(t, err)
	var names []string
	for _, fi := range list {
		names = append(names, path.Base(fi.Path))
	}
	assert.Equal(t, []string{"a.txt", "b.txt", "c"}, names)
	assert.Equal(t, dir+"/a.txt", list[0].Path)
	assert.Equal(t, int64(2), list[0].Size)
	assert.True(t, list[2].Mode.IsDir())
}

func (s *suite) aborted(t *testing.T, dir string) {
	p := dir + "/a.txt"
	v := s.put(t, p, "keep\n").Version
	ctx, cancel := context.WithCancel(bg())
	cancel()
	_, err := s.fsys.ReadText(ctx, p, fs.Window{})
	require.ErrorIs(t, err, harness.CodeAborted)
	_, _, err = s.fsys.ReadBytes(ctx, p, 100)
	require.ErrorIs(t, err, harness.CodeAborted)
	_, err = s.fsys.Write(ctx, p, []byte("lost\n"), fs.WriteOptions{Pre: fs.Precondition{Version: v}})
	require.ErrorIs(t, err, harness.CodeAborted)
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.fsys.Edit(ctx, p, fs.Edit{Old: "keep", New: "lost"}, fs.Precondition{Version: v})
	require.ErrorIs(t, err, harness.CodeAborted)
	_, err = s.fsys.Write(ctx, dir+"/new.txt", []byte("x"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.ErrorIs(t, err, harness.CodeAborted)
	assert.Equal(t, "keep\n", s.content(t, p))
	_, err = s.fsys.Stat(bg(), dir+"/new.txt")
	require.ErrorIs(t, err, harness.CodeNotFound)
}

func (s *suite) concurrentCreate(t *testing.T, dir string) {
	p := dir + "/race.txt"
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	var winner string
	for i := range n {
		wg.Go(func() {
			data := fmt.Sprintf("writer %d\n", i)
			_, err := s.fsys.Write(bg(), p, []byte(data), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
			if err == nil {
				mu.Lock()
				winners++
				winner = data
				mu.Unlock()
				return
			}
			assert.ErrorIs(t, err, harness.CodeExists)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, winners, "exactly one create-only write wins")
	assert.Equal(t, winner, s.content(t, p), "and nobody clobbered it")
}

func (s *suite) concurrentReadEdit(t *testing.T, dir string) {
	p := dir + "/shared.txt"
	s.put(t, p, "HEAD\nEND\n")
	const workers, rounds = 8, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	var done []string
	for g := range workers {
		wg.Go(func() {
			for r := range rounds {
				text, err := s.fsys.ReadText(bg(), p, fs.Window{})
				if !assert.NoError(t, err) {
					return
				}
				marker := fmt.Sprintf("g%d-r%d", g, r)
				_, err = s.fsys.Edit(bg(), p, fs.Edit{Old: "END\n", New: marker + "\nEND\n"}, fs.Precondition{Version: text.Info.Version})
				switch {
				case err == nil:
					mu.Lock()
					done = append(done, marker)
					mu.Unlock()
				case errors.Is(err, harness.CodeStale):
				default:
					assert.NoError(t, err)
					return
				}
			}
		})
	}
	wg.Wait()
	final := s.content(t, p)
	require.NotEmpty(t, done, "some edits succeed")
	for _, m := range done {
		assert.Equal(t, 1, strings.Count(final, m+"\n"), "edit %s is in the final content exactly once", m)
	}
	assert.Equal(t, len(done)+2, strings.Count(final, "\n"), "no other edit landed")
	assert.True(t, strings.HasPrefix(final, "HEAD\n") && strings.HasSuffix(final, "END\n"))
}

func (s *suite) iofs(t *testing.T, dir string) {
	s.put(t, dir+"/a.txt", "alpha")
	s.put(t, dir+"/sub/b.txt", "beta\n")
	s.put(t, dir+"/sub/deeper/c.txt", "")
	view := fs.IOFS(bg(), s.fsys, dir)
	require.NoError(t, gofstest.TestFS(view, "a.txt", "sub/b.txt", "sub/deeper/c.txt"))
	b, err := view.Open("sub/b.txt")
	require.NoError(t, err)
	defer b.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(b)
	require.NoError(t, err)
	assert.Equal(t, "beta\n", buf.String())
	_, err = view.Open("../escape")
	require.Error(t, err)
}

// openDir checks fs.DirOpener, when fsys has it: the view reads and
// writes the same files, refuses paths outside its directory, names the
// directory as its root, and closing it leaves fsys usable.
func (s *suite) openDir(t *testing.T, dir string) {
	o, ok := s.fsys.(fs.DirOpener)
	if !ok {
		t.Skip("the file system does not implement fs.DirOpener")
	}
	s.put(t, dir+"/sub/a.txt", "a\n")
	s.put(t, dir+"/b.txt", "b\n")
	v, err := o.OpenDir(bg(), dir+"/sub")
	require.NoError(t, err)
	assert.Equal(t, dir+"/sub", fsimpl.RootOf(v))
	data, info, err := v.ReadBytes(bg(), dir+"/sub/a.txt", 100)
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(data))
	assert.Equal(t, dir+"/sub/a.txt", info.Path)
	list, err := v.ReadDir(bg(), dir+"/sub")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, dir+"/sub/a.txt", list[0].Path)
	_, _, err = v.ReadBytes(bg(), dir+"/b.txt", 100)
	require.ErrorIs(t, err, harness.CodeOutsideRoot, "a sibling of the directory is outside the view")
	_, err = v.Stat(bg(), dir+"/sub/../b.txt")
	require.ErrorIs(t, err, harness.CodeOutsideRoot)
	res, err := v.Write(bg(), dir+"/sub/c.txt", []byte("c\n"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.Equal(t, "c\n", s.content(t, dir+"/sub/c.txt"), "the view writes the same files")
	_, err = o.OpenDir(bg(), dir+"/b.txt")
	require.ErrorIs(t, err, harness.CodeNotDir)
	_, err = o.OpenDir(bg(), dir+"/missing")
	require.ErrorIs(t, err, harness.CodeNotFound)
	ctx, cancel := context.WithCancel(bg())
	cancel()
	_, err = o.OpenDir(ctx, dir+"/sub")
	require.ErrorIs(t, err, harness.CodeAborted)
	if c, ok := v.(io.Closer); ok {
		require.NoError(t, c.Close())
	}
	assert.Equal(t, "b\n", s.content(t, dir+"/b.txt"), "closing the view leaves the file system open")
}
