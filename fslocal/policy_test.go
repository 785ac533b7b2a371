package fslocal_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
)

// idPolicy denies paths below prefixes and, for a file with more than one
// link, the identities in ids; it records the identities it was asked
// about.
type idPolicy struct {
	fstest.DenyPaths
	ids map[[2]uint64]bool

	mu   sync.Mutex
	seen []fs.FileID
}

func (p *idPolicy) CheckPath(ctx context.Context, path string, a fs.Access, id fs.FileID) error {
	p.mu.Lock()
	if id != (fs.FileID{}) {
		p.seen = append(p.seen, id)
	}
	p.mu.Unlock()
	if id.Links > 1 && p.ids[[2]uint64{id.Dev, id.Ino}] {
		return &harness.Error{Code: harness.CodeDenied, Message: "a link of a denied file"}
	}
	return p.DenyPaths.CheckPath(ctx, path, a, id)
}

// policyFixture is a workspace with a denied directory, a locked one and
// an open one.
type policyFixture struct {
	ws     string
	fsys   fslocal.FS
	pol    *idPolicy
	secret string
}

func newPolicyFixture(t *testing.T) *policyFixture {
	ws := filepath.ToSlash(t.TempDir())
	for p, data := range map[string]string{
		"secret/key.txt":  "SECRET\n",
		"locked/conf.txt": "conf\n",
		"data/open.txt":   "open\n",
		"data/hidden.txt": "hidden\n",
		"d/f.txt":         "benign\n",
	} {
		full := filepath.Join(ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(data), 0o644))
	}
	x := &policyFixture{ws: ws, secret: ws + "/secret/key.txt"}
	x.pol = &idPolicy{DenyPaths: fstest.DenyPaths{
		Read:  []string{ws + "/secret", ws + "/data/hidden.txt"},
		Write: []string{ws + "/locked"},
	}}
	x.fsys = newFS(t, ws)
	return x
}

func (x *policyFixture) restricted() fs.FileSystem { return fs.Restrict(x.fsys, x.pol) }

func TestPolicySymlinksResolved(t *testing.T) {
	x := newPolicyFixture(t)
	ws := x.ws
	require.NoError(t, os.Symlink("secret/key.txt", ws+"/link"))
	require.NoError(t, os.Symlink(ws+"/secret", ws+"/dlink"))
	require.NoError(t, os.Symlink("locked/conf.txt", ws+"/conflink"))
	require.NoError(t, os.Symlink("data", ws+"/datalink"))
	r := x.restricted()

	for _, p := range []string{ws + "/link", ws + "/dlink/key.txt", ws + "/dlink"} {
		_, err := r.Stat(bg(), p)
		assert.ErrorIs(t, err, harness.CodeNotFound, p)
		_, _, err = r.ReadBytes(bg(), p, 100)
		assert.ErrorIs(t, err, harness.CodeNotFound, p)
		assert.NotContains(t, err.Error(), "secret", "the error never names where the link leads")
	}
	_, err := r.ReadDir(bg(), ws+"/dlink")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, err = r.(fs.LocalPather).LocalPath(ws + "/dlink")
	assert.ErrorIs(t, err, harness.CodeNotFound, "a hidden directory has no OS path to run a command in")
	_, err = r.Write(bg(), ws+"/link", []byte("x"), fs.WriteOptions{})
	assert.ErrorIs(t, err, harness.CodeDenied)
	_, err = r.Write(bg(), ws+"/conflink", []byte("x"), fs.WriteOptions{})
	assert.ErrorIs(t, err, harness.CodeDenied, "writing through a link to a locked file")
	_, err = r.Write(bg(), ws+"/dlink/new.txt", []byte("x"), fs.WriteOptions{})
	assert.ErrorIs(t, err, harness.CodeDenied)
	assert.NoFileExists(t, ws+"/secret/new.txt")

	// Listing a directory through a link checks its entries by where
	// they really are.
	list, err := r.ReadDir(bg(), ws+"/datalink")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, ws+"/datalink/open.txt", list[0].Path)
	b, _ := os.ReadFile(x.secret)
	assert.Equal(t, "SECRET\n", string(b))
}

// TestPolicyLinkSwappedAfterCheck swaps a directory of a checked path for
// a link to the denied directory between the check and the open: the
// kernel's path of the opened file catches it.
func TestPolicyLinkSwappedAfterCheck(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the opened file's path is checked on Linux")
	}
	for _, withPolicy := range []bool{false, true} {
		x := newPolicyFixture(t)
		ws := x.ws
		swap := func(stage, rel string) {
			if stage == "open" && rel == "d/f.txt" {
				require.NoError(t, os.Rename(ws+"/d", ws+"/d.away"))
				require.NoError(t, os.Rename(ws+"/secret/key.txt", ws+"/secret/f.txt"))
				require.NoError(t, os.Symlink("secret", ws+"/d"))
			}
		}
		fslocal.SetHook(x.fsys, swap)
		var fsys fs.FileSystem = x.fsys
		if withPolicy {
			fsys = x.restricted()
		}
		data, _, err := fsys.ReadBytes(bg(), ws+"/d/f.txt", 100)
		if !withPolicy {
			require.NoError(t, err)
			require.Equal(t, "SECRET\n", string(data), "the race is real: without a policy the swapped link is followed")
			continue
		}
		require.ErrorIs(t, err, harness.CodeNotFound)
		assert.Empty(t, data)
	}
}

func TestPolicyWriteSwappedAfterCheck(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the temporary file's path is checked on Linux")
	}
	x := newPolicyFixture(t)
	ws := x.ws
	fslocal.SetHook(x.fsys, func(stage, rel string) {
		if stage == "write:locked" {
			require.NoError(t, os.Rename(ws+"/d", ws+"/d.away"))
			require.NoError(t, os.Symlink("locked", ws+"/d"))
		}
	})
	_, err := x.restricted().Write(bg(), ws+"/d/new.txt", []byte("planted\n"), fs.WriteOptions{Pre: fs.Precondition{Absent: true}})
	require.ErrorIs(t, err, harness.CodeDenied)
	assert.NoFileExists(t, ws+"/locked/new.txt")
	entries, err := os.ReadDir(ws + "/locked")
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left in the locked directory")
}

func TestPolicyHardLinks(t *testing.T) {
	x := newPolicyFixture(t)
	ws := x.ws
	require.NoError(t, os.Link(x.secret, ws+"/data/hl.txt"))
	st, err := os.Stat(x.secret)
	require.NoError(t, err)
	sys := st.Sys().(*syscall.Stat_t)
	x.pol.ids = map[[2]uint64]bool{{uint64(sys.Dev), uint64(sys.Ino)}: true}
	r := x.restricted()

	_, _, err = r.ReadBytes(bg(), ws+"/data/hl.txt", 100)
	require.ErrorIs(t, err, harness.CodeNotFound, "a hard link to a denied file reads nothing")
	_, err = r.ReadText(bg(), ws+"/data/hl.txt", fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotFound)
	_, err = r.Edit(bg(), ws+"/data/hl.txt", fs.Edit{Old: "SECRET", New: "x"}, fs.Precondition{})
	require.ErrorIs(t, err, harness.CodeDenied)
	assert.NotContains(t, err.Error(), "SECRET")
	list, err := r.ReadDir(bg(), ws+"/data")
	require.NoError(t, err)
	for _, fi := range list {
		assert.False(t, strings.HasSuffix(fi.Path, "/hl.txt"), "the link is left out of listings")
	}
	x.pol.mu.Lock()
	defer x.pol.mu.Unlock()
	require.NotEmpty(t, x.pol.seen)
	for _, id := range x.pol.seen {
		if id.Ino == uint64(sys.Ino) {
			assert.Equal(t, uint64(2), id.Links)
		}
	}
}

func TestPolicyViewCloseLeavesFSOpen(t *testing.T) {
	x := newPolicyFixture(t)
	v := x.fsys.(fs.PolicyEnforcer).WithPathPolicy(x.pol)
	require.NoError(t, v.(interface{ Close() error }).Close())
	_, err := x.fsys.Stat(bg(), x.ws+"/d/f.txt")
	require.NoError(t, err, "closing the policy view leaves the file system open")
	_, err = v.Stat(bg(), x.ws+"/d/f.txt")
	require.NoError(t, err)
	_, err = v.Stat(bg(), x.secret)
	require.ErrorIs(t, err, harness.CodeDenied, "the view alone reports denials as such")
}
