package spill

import (
	"bytes"
	"context"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness/internal/spillname"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

func dirPath(t *testing.T, d *dirStore, locator string) string {
	t.Helper()
	sdir, name, ok := parseLocator(locator)
	require.True(t, ok, "locator %q", locator)
	return filepath.Join(d.Root(), sdir, name)
}

func TestDirPermissionsAndLayout(t *testing.T) {
	root := filepath.Join(t.TempDir(), "spill")
	d := mustDir(t, root, StoreConfig{})
	st, err := d.Save(context.Background(), tools.Owner{Session: "s/../1", Tool: "bash", Call: "call 1"}, strings.NewReader("hello"))
	require.NoError(t, err)

	p := dirPath(t, d, st.Locator)
	rel, err := filepath.Rel(root, p)
	require.NoError(t, err)
	assert.False(t, strings.HasPrefix(rel, ".."), "file %s is inside the root", p)
	assert.Equal(t, 2, len(strings.Split(rel, string(filepath.Separator))), "session dir / file")

	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, filePerm, fi.Mode().Perm(), "spill files are private")
	di, err := os.Stat(filepath.Dir(p))
	require.NoError(t, err)
	assert.Equal(t, dirPerm, di.Mode().Perm(), "session directories are private")
	ri, err := os.Stat(root)
	require.NoError(t, err)
	assert.Equal(t, dirPerm, ri.Mode().Perm(), "a root the store creates is private")

	assert.True(t, strings.HasPrefix(filepath.Base(filepath.Dir(p)), "s____1-"), "session dir names keep a readable form: %s", p)
	assert.True(t, strings.HasPrefix(filepath.Base(p), "bash-call_1-"), "file names keep a readable form: %s", p)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
}

// fixedRand always yields the same bytes, so every name collides.
type fixedRand struct{}

func (fixedRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0xab
	}
	return len(p), nil
}

func TestDirCreatesExclusively(t *testing.T) {
	d := mustDir(t, t.TempDir(), StoreConfig{})
	d.rand = fixedRand{}
	ctx := context.Background()
	o := tools.Owner{Session: "s", Tool: "bash", Call: "c"}
	st, err := d.Save(ctx, o, strings.NewReader("first"))
	require.NoError(t, err)
	_, err = d.Save(ctx, o, strings.NewReader("second"))
	require.Error(t, err, "a name that exists is never reused")
	assert.ErrorIs(t, err, iofs.ErrExist)
	got, err := os.ReadFile(dirPath(t, d, st.Locator))
	require.NoError(t, err)
	assert.Equal(t, "first", string(got), "the existing file is untouched")
}

func TestDirRefusesPlantedSymlink(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o600))
	d := mustDir(t, root, StoreConfig{})
	ctx := context.Background()
	st, err := d.Save(ctx, tools.Owner{Session: "s", Tool: "bash", Call: "c"}, strings.NewReader("mine"))
	require.NoError(t, err)
	p := dirPath(t, d, st.Locator)

	// A file of the store replaced by a symlink, inside and outside the root.
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink(outside, p))
	_, err = d.Open(ctx, st.Locator)
	assert.ErrorIs(t, err, harness.CodeNotFound, "a symlink out of the root is refused")
	require.NoError(t, os.Remove(p))
	other, err := d.Save(ctx, tools.Owner{Session: "s", Tool: "bash", Call: "other"}, strings.NewReader("other"))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Base(dirPath(t, d, other.Locator)), p))
	_, err = d.Open(ctx, st.Locator)
	assert.ErrorIs(t, err, harness.CodeNotFound, "a symlink, even inside the root, is not a saved output")

	// A session directory replaced by a symlink to another directory.
	sdir := filepath.Dir(p)
	evil := tools.OutputScheme + spillname.SessionDir("evil") + "/" + filepath.Base(dirPath(t, d, other.Locator))
	require.NoError(t, os.Symlink(sdir, filepath.Join(root, spillname.SessionDir("evil"))))
	_, err = d.Open(ctx, evil)
	assert.ErrorIs(t, err, harness.CodeNotFound)
	// And Save refuses to write through it.
	_, err = d.Save(ctx, tools.Owner{Session: "evil", Tool: "bash", Call: "c"}, strings.NewReader("x"))
	assert.Error(t, err)
}

type errAfter struct {
	n   int
	err error
}

func (r *errAfter) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(r.n, len(p))
	r.n -= k
	return k, nil
}

func TestDirRemovesPartialFile(t *testing.T) {
	root := t.TempDir()
	d := mustDir(t, root, StoreConfig{})
	_, err := d.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "c"}, &errAfter{n: 1 << 20, err: io.ErrClosedPipe})
	require.ErrorIs(t, err, io.ErrClosedPipe)
	entries, err := os.ReadDir(filepath.Join(root, spillname.SessionDir("s")))
	require.NoError(t, err)
	assert.Empty(t, entries, "no partial spill file is left behind")
}

func TestDirExpireByModTime(t *testing.T) {
	root := t.TempDir()
	d := mustDir(t, root, StoreConfig{})
	ctx := context.Background()
	old, err := d.Save(ctx, tools.Owner{Session: "a", Tool: "bash", Call: "1"}, strings.NewReader("old"))
	require.NoError(t, err)
	fresh, err := d.Save(ctx, tools.Owner{Session: "a", Tool: "bash", Call: "2"}, strings.NewReader("fresh"))
	require.NoError(t, err)
	lone, err := d.Save(ctx, tools.Owner{Session: "b", Tool: "bash", Call: "3"}, strings.NewReader("lone"))
	require.NoError(t, err)
	week := time.Now().Add(-8 * 24 * time.Hour)
	for _, loc := range []string{old.Locator, lone.Locator} {
		require.NoError(t, os.Chtimes(dirPath(t, d, loc), week, week))
	}
	require.NoError(t, os.Chtimes(filepath.Dir(dirPath(t, d, lone.Locator)), week, week))
	// A stranger's file in a session directory is not the store's.
	stranger := filepath.Join(filepath.Dir(dirPath(t, d, old.Locator)), "notes.md")
	require.NoError(t, os.WriteFile(stranger, []byte("keep"), 0o600))
	require.NoError(t, os.Chtimes(stranger, week, week))

	n, err := d.Expire(ctx, time.Now().Add(-7*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = d.Open(ctx, old.Locator)
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, err = d.Open(ctx, lone.Locator)
	assert.ErrorIs(t, err, harness.CodeNotFound)
	rc, err := d.Open(ctx, fresh.Locator)
	require.NoError(t, err)
	b, _ := io.ReadAll(rc)
	rc.Close()
	assert.Equal(t, "fresh", string(b))
	_, err = os.Stat(stranger)
	assert.NoError(t, err, "files that are not spill files are left alone")
	_, err = os.Stat(filepath.Join(root, spillname.SessionDir("b")))
	assert.ErrorIs(t, err, iofs.ErrNotExist, "an old session directory left empty is removed")
}

func TestDirMissingRoot(t *testing.T) {
	d := mustDir(t, filepath.Join(t.TempDir(), "never"), StoreConfig{})
	ctx := context.Background()
	_, err := d.Open(ctx, tools.OutputScheme+spillname.SessionDir("s")+"/bash-c-0123456789abcdef.txt")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	n, err := d.Expire(ctx, time.Now())
	assert.NoError(t, err)
	assert.Zero(t, n)
	assert.NoError(t, d.DeleteSession(ctx, "s"))
}

func TestLocatorErrorText(t *testing.T) {
	_, err := mustMemory(t, StoreConfig{}).Open(context.Background(), "spill://nope\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"spill://nope\x0a"`, "the locator is quoted with control bytes escaped")
	assert.Contains(t, err.Error(), "removed by retention")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.Equal(t, harness.Code("not_found"), harness.CodeOf(err))
	assert.True(t, bytes.Contains([]byte(err.Error()), []byte("no saved output")))
}

func FuzzParseLocator(f *testing.F) {
	st, _ := mustMemory(f, StoreConfig{}).Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "c1"}, strings.NewReader("x"))
	for _, s := range []string{st.Locator, tools.OutputScheme + "../x", tools.OutputScheme + "a-00000000/b-c-0000000000000000.txt", "", "spill://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		sdir, name, ok := parseLocator(loc)
		if !ok {
			return
		}
		require.Equal(t, tools.OutputScheme+sdir+"/"+name, loc)
		for _, part := range []string{sdir, name} {
			require.NotContains(t, []string{"", ".", ".."}, part)
			require.NotContains(t, part, "/")
			require.NotContains(t, part, "\\")
			require.NotContains(t, part, "\x00")
		}
		root := "/spill-root"
		p := filepath.Join(root, sdir, name)
		require.Equal(t, filepath.Clean(p), p)
		require.True(t, strings.HasPrefix(p, root+"/"), "%q stays inside the root", p)
	})
}

func TestDirBudgetCountsWhatASessionKeptBefore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	first := mustDir(t, root, StoreConfig{})
	_, err := first.Save(ctx, tools.Owner{Session: "s", Tool: "bash", Call: "1"}, strings.NewReader(strings.Repeat("a", 800)))
	require.NoError(t, err)
	// Another process, later, with a budget of 1000 bytes a session.
	again := mustDir(t, root, StoreConfig{SessionBudget: 1000})
	_, err = again.Save(ctx, tools.Owner{Session: "s", Tool: "bash", Call: "2"}, strings.NewReader(strings.Repeat("b", 300)))
	var be *BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, int64(800), be.Used, "the files already there count")
	assert.Equal(t, "s", be.Session)
	entries, err := os.ReadDir(filepath.Join(root, spillname.SessionDir("s")))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the refused output left no file behind")
	_, err = again.Save(ctx, tools.Owner{Session: "s", Tool: "bash", Call: "3"}, strings.NewReader(strings.Repeat("c", 200)))
	require.NoError(t, err)
}

func TestBudgetErrorText(t *testing.T) {
	err := &BudgetError{Session: "s", Budget: DefaultSessionBudget, Used: DefaultSessionBudget - 10}
	assert.Equal(t, "spill: the output does not fit in what is left of the session's spill budget of 4.0 GiB: 4.0 GiB of it is taken by outputs kept until they expire or are deleted", err.Error())
	// The budget's own error, as Save returns it, has the code.
	b := newBudget(100)
	saveErr := b.reserve("d", "s", 200, 0, nil)
	assert.Equal(t, harness.CodeSpillBudget, harness.CodeOf(saveErr))
	assert.ErrorIs(t, saveErr, harness.CodeSpillBudget)
	var be *BudgetError
	require.ErrorAs(t, saveErr, &be)
	assert.Equal(t, int64(100), be.Budget)
	assert.Equal(t, be.Error(), saveErr.Error(), "the message is the detail's")
	assert.Contains(t, (&BudgetError{Budget: 1000, Used: 1}).Error(), "budget of 1000 bytes: 1 byte of it is taken")
	assert.Equal(t, "spill: the output is larger than the session's whole spill budget of 1.0 MiB", (&BudgetError{Budget: 1 << 20}).Error())
}

func mustDir(t testing.TB, dir string, cfg StoreConfig) *dirStore {
	t.Helper()
	d, err := NewDir(dir, cfg)
	require.NoError(t, err)
	return d.(*dirStore)
}

func mustMemory(t testing.TB, cfg StoreConfig) Store {
	t.Helper()
	m, err := NewMemory(cfg)
	require.NoError(t, err)
	return m
}
