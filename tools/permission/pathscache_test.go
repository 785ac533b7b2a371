package permission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/longtest"
)

// cacheRules deny a name at any depth, a tree, and changes to .git.
var cacheRules = Rules{Deny: []string{"Read(.env)", "Read(./secrets/**)", "Edit(./.git/**)", "Edit(./vendor/**)"}}

// settle waits until the times of what was just written lie in the file
// system clock's past, so that listings of it are kept.
func settle() { time.Sleep(30 * time.Millisecond) }

// listBoth is what a sandbox asks for: what is denied for reading and for
// changing, from one look.
func listBoth(t testing.TB, pp *Paths) (read, edit []string) {
	t.Helper()
	l, err := pp.ListDeniedEach(context.Background(), fs.AccessRead, fs.AccessWrite)
	require.NoError(t, err)
	return l[0], l[1]
}

// TestPathsCacheKeeps checks that a walk over a tree that has not
// changed reuses the listings and the decisions of the last one, and
// that they give what a policy without a cache lists.
func TestPathsCacheKeeps(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a/b/.env": "E", "a/c/x.go": "x", "secrets/k": "K", ".git/config": "c", "d/e/f/g.txt": "g"})
	settle()
	pp := mustPaths(t, cacheRules, ws)
	read, edit := listBoth(t, pp)
	assert.Equal(t, []string{ws + "/a/b/.env", ws + "/secrets"}, read)
	assert.Equal(t, []string{ws + "/.git"}, edit)
	pp.mu.Lock()
	first := pp.dirs[ws+"/a/b"]
	pp.mu.Unlock()
	require.NotNil(t, first, "a directory older than the look is kept")
	assert.Len(t, first.steps, 1, "the walk's decisions are kept")

	read2, edit2 := listBoth(t, pp)
	assert.Equal(t, read, read2)
	assert.Equal(t, edit, edit2)
	pp.mu.Lock()
	again := pp.dirs[ws+"/a/b"]
	pp.mu.Unlock()
	assert.Same(t, first, again, "an unchanged directory is not listed again")

	fresh := mustPaths(t, cacheRules, ws)
	read3, edit3 := listBoth(t, fresh)
	assert.Equal(t, read3, read2)
	assert.Equal(t, edit3, edit2)
}

// TestPathsCacheRacy: a directory changed in the current tick of the
// file system clock is listed, but its listing is not kept.
func TestPathsCacheRacy(t *testing.T) {
	ws := t.TempDir()
	pp := mustPaths(t, cacheRules, ws)
	writeFiles(t, ws, map[string]string{"a/x": "x"})
	listBoth(t, pp)
	pp.mu.Lock()
	_, kept := pp.dirs[ws+"/a"]
	pp.mu.Unlock()
	// The write and the listing may fall in different ticks; when they
	// fall in the same one, the listing must not be kept. Either way the
	// next test is what matters; this one checks the rule itself.
	st, err := os.Lstat(ws + "/a")
	require.NoError(t, err)
	s, ok := stampOf(st)
	require.True(t, ok)
	lk := &look{now: s.ctime, trust: map[uint64]bool{}}
	assert.False(t, lk.trusted(ws+"/a", s), "a change in the look's own tick is not trusted")
	lk.now = s.ctime + 1
	assert.Equal(t, s.ctime%int64(time.Second) != 0, lk.trusted(ws+"/a", s), "a change before the look is (to the nanosecond, on a file system that stamps them)")
	whole := s
	whole.ctime -= whole.ctime % int64(time.Second)
	lk.now = whole.ctime + int64(time.Second)
	assert.False(t, lk.trusted(ws+"/a", whole), "a change stamped in whole seconds must be older than racy")
	_ = kept
}

// TestPathsCacheAttack changes the tree right after each look, in the
// same directories, and checks that the next look lists what became
// denied every time: a file made, a directory renamed to a denied name,
// a denied link, a file renamed over, and the directory's times set back
// to what they were.
func TestPathsCacheAttack(t *testing.T) {
	rounds := longtest.Pick(40, 1000)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"src/a.go": "x", "src/deep/b.go": "y", ".git/HEAD": "h"})
	settle()
	pp := mustPaths(t, cacheRules, ws)
	attacks := []struct {
		name   string
		do     func(i int) string // returns the path that must be listed
		inEdit bool
	}{
		{"a new file", func(i int) string {
			p := fmt.Sprintf("%s/src/deep/n%d/.env", ws, i)
			require.NoError(t, os.Mkdir(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte("E"), 0o644))
			return p
		}, false},
		{"a file in a kept directory", func(i int) string {
			p := ws + "/src/.env"
			require.NoError(t, os.WriteFile(p, []byte("E"), 0o644))
			return p
		}, false},
		{"a directory renamed to a name denied for reading", func(i int) string {
			tmp := fmt.Sprintf("%s/src/t%d", ws, i)
			require.NoError(t, os.MkdirAll(tmp+"/k", 0o755))
			require.NoError(t, os.Rename(tmp, ws+"/secrets"))
			return ws + "/secrets"
		}, false},
		{"a directory renamed to a name denied for changing", func(i int) string {
			tmp := fmt.Sprintf("%s/src/t%d", ws, i)
			require.NoError(t, os.MkdirAll(tmp+"/k", 0o755))
			require.NoError(t, os.Rename(tmp, ws+"/vendor"))
			return ws + "/vendor"
		}, true},
		{"a denied link", func(i int) string {
			p := ws + "/src/deep/.env"
			require.NoError(t, os.Symlink("../a.go", p))
			return p
		}, false},
		{"a file renamed over to a denied name", func(i int) string {
			p := ws + "/src/.env"
			require.NoError(t, os.WriteFile(ws+"/src/tmp", []byte("E"), 0o644))
			require.NoError(t, os.Rename(ws+"/src/tmp", p))
			return p
		}, false},
		{"times set back", func(i int) string {
			st, err := os.Stat(ws + "/src")
			require.NoError(t, err)
			p := ws + "/src/.env"
			require.NoError(t, os.WriteFile(p, []byte("E"), 0o644))
			require.NoError(t, os.Chtimes(ws+"/src", st.ModTime(), st.ModTime()))
			return p
		}, false},
	}
	for i := range rounds {
		a := attacks[i%len(attacks)]
		before, _ := listBoth(t, pp)
		want := a.do(i)
		read, edit := listBoth(t, pp)
		if !a.inEdit && !slices.Contains(read, want) {
			t.Fatalf("round %d (%s): %s is not listed right after it appeared: %v (before: %v)", i, a.name, want, read, before)
		}
		if a.inEdit && !slices.Contains(edit, want) {
			t.Fatalf("round %d (%s): %s is not listed as denied for changing: %v", i, a.name, want, edit)
		}
		// Undo, and let the tree settle every other round so that both
		// kept and racy listings meet the attacks.
		require.NoError(t, os.RemoveAll(want))
		require.NoError(t, os.RemoveAll(ws+"/src/tmp"))
		if i%2 == 0 {
			settle()
		}
	}
}

// TestPathsCacheClockSetBack: the cache is emptied when the real-time
// clock moved back against the monotonic one since the last walk.
func TestPathsCacheClockSetBack(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a/x": "x"})
	settle()
	pp := mustPaths(t, cacheRules, ws)
	listBoth(t, pp)
	pp.mu.Lock()
	require.NotEmpty(t, pp.dirs)
	// As if the clock had been 10 s ahead at the last walk.
	pp.clockSkew += int64(10 * time.Second)
	pp.mu.Unlock()
	lk := &look{}
	pp.mu.Lock()
	lk.begin(pp)
	n := len(pp.dirs)
	pp.mu.Unlock()
	assert.Zero(t, n, "a clock set back empties the cache")
	listBoth(t, pp)
	pp.mu.Lock()
	n = len(pp.dirs)
	pp.mu.Unlock()
	assert.NotZero(t, n, "and a slewed or steady clock keeps it")
}

func TestPathsDeniedByName(t *testing.T) {
	pp := mustPaths(t, Rules{Deny: []string{"Read(.env)", "Read(*.pem)", "Read(./secrets/**)", "Read(**/id_rsa)", "Edit(./.git/**)", "Edit(*.lock)"}, Ask: []string{"Read(.npmrc)"}}, "/w")
	for _, c := range []struct {
		p    string
		a    fs.Access
		want bool
	}{
		{"/w/a/b/.env", fs.AccessRead, true},
		{"/w/.env", fs.AccessRead, true},
		{"/w/certs/x.pem", fs.AccessRead, true},
		{"/w/x/.npmrc", fs.AccessRead, true}, // an ask rule denies where nobody can be asked
		{"/w/secrets", fs.AccessRead, false},
		{"/w/a/id_rsa", fs.AccessRead, false}, // a pattern with a slash keeps its pins, even one that matches at any depth
		{"/w/.git", fs.AccessWrite, false},
		{"/w/a/go.lock", fs.AccessWrite, true},
		{"/w/a/go.lock", fs.AccessRead, false},
		{"/w", fs.AccessRead, false},
		{"/elsewhere/.env", fs.AccessRead, false},
	} {
		assert.Equal(t, c.want, pp.DeniedByName(c.p, c.a), "%s %v", c.p, c.a)
	}
	all := mustPaths(t, Rules{Deny: []string{"Read"}}, "/w")
	assert.True(t, all.DeniedByName("/w/a", fs.AccessRead))
}
