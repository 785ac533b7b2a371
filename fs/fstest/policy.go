package fstest

import (
	"context"
	"errors"
	iofs "io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// DenyPaths is an fs.PathPolicy for tests: it denies reading the paths
// in Read and changing those in Write, each with everything below it.
// It knows nothing of hard links.
type DenyPaths struct {
	Read, Write []string
}

// CheckPath implements fs.PathPolicy.
func (d DenyPaths) CheckPath(_ context.Context, p string, a fs.Access, _ fs.FileID) error {
	below := func(list []string) (string, bool) {
		for _, q := range list {
			if p == q || strings.HasPrefix(p, strings.TrimSuffix(q, "/")+"/") {
				return q, true
			}
		}
		return "", false
	}
	if a&fs.AccessRead != 0 {
		if q, ok := below(d.Read); ok {
			return &harness.Error{Code: harness.CodeDenied, Message: "reading " + q + " is denied"}
		}
	}
	if a&fs.AccessWrite != 0 {
		if q, ok := below(d.Write); ok {
			return &harness.Error{Code: harness.CodeDenied, Message: "changing " + q + " is denied"}
		}
	}
	return nil
}

// TestRestricted checks fs.Restrict over fsys: fsys restricted by a
// policy that denies nothing it uses passes the conformance suite
// ([TestFileSystem]), and paths a policy denies behave as fs.Restrict
// says: invisible to reads and listings (a "not found" that reads as
// one for an absent path), refused to changes with harness.CodeDenied,
// in views (fs.DirOpener) and through fs.IOFS too. fsys must be writable
// below its root.
func TestRestricted(t *testing.T, fsys fs.FileSystem) {
	root := fsimpl.RootOf(fsys)
	base := path.Join(root, "restricted-"+strings.ReplaceAll(t.Name(), "/", "_"))
	t.Run("Conformance", func(t *testing.T) {
		TestFileSystem(t, fs.Restrict(fsys, DenyPaths{Read: []string{path.Join(root, "never-used-by-the-suite")}}))
	})
	t.Run("Denied", func(t *testing.T) {
		checkDenied(t, fsys, base)
	})
}

func checkDenied(t *testing.T, fsys fs.FileSystem, dir string) {
	s := &suite{fsys: fsys}
	s.put(t, dir+"/open.txt", "open\n")
	s.put(t, dir+"/secret/key.txt", "SECRET\n")
	s.put(t, dir+"/secret/sub/deep.txt", "DEEP\n")
	s.put(t, dir+"/locked/conf.txt", "conf\n")
	pol := DenyPaths{Read: []string{dir + "/secret"}, Write: []string{dir + "/locked"}}
	r := fs.Restrict(fsys, pol)
	assert.Equal(t, pol, fs.PolicyOf(r), "PolicyOf reports the policy")
	assert.Nil(t, fs.PolicyOf(fsys))
	assert.Equal(t, fsimpl.RootOf(fsys), fsimpl.RootOf(r), "the root is the file system's")

	// A denied path reads as an absent one, word for word.
	absent := dir + "/absent.txt"
	same := func(op string, denied, missing error) {
		t.Helper()
		require.ErrorIs(t, denied, harness.CodeNotFound, op)
		require.ErrorIs(t, denied, iofs.ErrNotExist, op)
		require.ErrorIs(t, missing, harness.CodeNotFound, op)
		assert.NotContains(t, denied.Error(), "denied", op)
		a := strings.ReplaceAll(denied.Error(), dir+"/secret/key.txt", "P")
		b := strings.ReplaceAll(missing.Error(), absent, "P")
		assert.Equal(t, b, a, "%s: a denied path and an absent one read alike", op)
	}
	secret := dir + "/secret/key.txt"
	_, err1 := r.Stat(bg(), secret)
	_, err2 := r.Stat(bg(), absent)
	same("stat", err1, err2)
	_, err1 = r.ReadText(bg(), secret, fs.Window{})
	_, err2 = r.ReadText(bg(), absent, fs.Window{})
	same("read", err1, err2)
	_, _, err1 = r.ReadBytes(bg(), secret, 100)
	_, _, err2 = r.ReadBytes(bg(), absent, 100)
	same("readbytes", err1, err2)
	o := r.(fs.Opener)
	_, _, err1 = o.Open(bg(), secret)
	_, _, err2 = o.Open(bg(), absent)
	same("open", err1, err2)
	for _, p := range []string{dir + "/secret", dir + "/secret/sub", dir + "/secret/sub/deep.txt", dir + "/secret/../secret/key.txt"} {
		_, err := r.Stat(bg(), p)
		assert.ErrorIs(t, err, harness.CodeNotFound, p)
	}
	_, err := r.ReadDir(bg(), dir+"/secret")
	assert.ErrorIs(t, err, harness.CodeNotFound, "a denied directory cannot be listed")
	_, err = r.(fs.DirOpener).OpenDir(bg(), dir+"/secret")
	assert.ErrorIs(t, err, harness.CodeNotFound, "nor opened as a view")

	// Listings leave denied entries out.
	names := func(fsys fs.FileSystem, d string) []string {
		t.Helper()
		list, err := fsys.ReadDir(bg(), d)
		require.NoError(t, err)
		var out []string
		for _, fi := range list {
			out = append(out, path.Base(fi.Path))
		}
		return out
	}
	assert.Equal(t, []string{"locked", "open.txt"}, names(r, dir))
	v, err := r.(fs.DirOpener).OpenDir(bg(), dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"locked", "open.txt"}, names(v, dir), "a view leaves them out too")
	_, _, err = v.ReadBytes(bg(), secret, 100)
	assert.ErrorIs(t, err, harness.CodeNotFound, "and hides them")
	if c, ok := v.(interface{ Close() error }); ok {
		require.NoError(t, c.Close())
	}
	var walked []string
	require.NoError(t, iofs.WalkDir(fs.IOFS(bg(), r, dir), ".", func(p string, d iofs.DirEntry, err error) error {
		walked = append(walked, p)
		return err
	}))
	assert.Equal(t, []string{".", "locked", "locked/conf.txt", "open.txt"}, walked, "io/fs walks do not see denied paths")

	// Changes of denied paths are refused, and say why.
	for _, p := range []string{dir + "/locked/conf.txt", dir + "/locked/new.txt", secret, dir + "/secret/new.txt"} {
		_, err := r.Write(bg(), p, []byte("changed\n"), fs.WriteOptions{})
		require.ErrorIs(t, err, harness.CodeDenied, p)
		assert.Contains(t, err.Error(), "is denied", p)
	}
	conf, _ := r.Stat(bg(), dir+"/locked/conf.txt")
	_, err = r.Edit(bg(), dir+"/locked/conf.txt", fs.Edit{Old: "conf", New: "changed"}, fs.Precondition{Version: conf.Version})
	require.ErrorIs(t, err, harness.CodeDenied)
	_, err = r.Edit(bg(), secret, fs.Edit{Old: "SECRET", New: "changed"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeDenied)
	assert.NotContains(t, err.Error(), "SECRET")
	assert.Equal(t, "conf\n", s.content(t, dir+"/locked/conf.txt"), "nothing changed")
	assert.Equal(t, "SECRET\n", s.content(t, secret))
	_, err = fsys.Stat(bg(), dir+"/secret/new.txt")
	assert.ErrorIs(t, err, harness.CodeNotFound, "nothing was created")

	// What is only write-denied reads; what is allowed works.
	data, _, err := r.ReadBytes(bg(), dir+"/locked/conf.txt", 100)
	require.NoError(t, err)
	assert.Equal(t, "conf\n", string(data))
	res, err := r.Write(bg(), dir+"/open.txt", []byte("new\n"), fs.WriteOptions{})
	require.NoError(t, err)
	assert.Equal(t, "open\n", string(res.Previous))
	assert.True(t, slices.Contains(names(r, dir), "open.txt"))
	// Relative and malformed paths still fail as the file system says.
	_, err = r.Stat(bg(), "relative.txt")
	assert.ErrorIs(t, err, harness.CodeInvalidPath)
	assert.False(t, errors.Is(err, harness.CodeNotFound))
}
