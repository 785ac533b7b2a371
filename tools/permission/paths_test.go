package permission

import (
	"context"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

func mustPaths(t testing.TB, r Rules, ws string) *Paths {
	t.Helper()
	p, err := New(r)
	require.NoError(t, err)
	return p.Paths(ws)
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(data), 0o644))
	}
}

func idOf(t testing.TB, p string) fs.FileID {
	t.Helper()
	st, err := os.Stat(p)
	require.NoError(t, err)
	sys := st.Sys().(*syscall.Stat_t)
	return fs.FileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino), Links: uint64(sys.Nlink), Changed: sys.Ctim.Nano()}
}

func TestPathsCheck(t *testing.T) {
	ws := "/w"
	ctx := context.Background()
	r := issueRules
	r.Ask = []string{"Read(./private/**)", "Edit(docs/*.md)"}
	r.Deny = append(r.Deny, "Read(.env)", "Read(//etc/shadow)", "Edit(~/.ssh/**)")
	r.Home = "/home/u"
	pp := mustPaths(t, r, ws)
	rd, wr, ls := fs.AccessRead, fs.AccessWrite, fs.AccessRead|fs.AccessListed
	cases := []struct {
		p    string
		a    fs.Access
		rule string // "" allowed
	}{
		{"/w/secrets", rd, "Read(./secrets/**)"},
		{"/w/secrets/key.txt", rd, "Read(./secrets/**)"},
		{"/w/secrets/a/b/c", rd, "Read(./secrets/**)"},
		{"/w/secrets/key.txt", wr, ""}, // Restrict checks reading beside writing
		{"/w/secretsx/key.txt", rd, ""},
		{"/w/sub/secrets/key.txt", rd, ""}, // anchored at the workspace
		{"/w/.git/config", rd, ""},
		{"/w/.git/config", wr, "Edit(./.git/**)"},
		{"/w/.git", wr, "Edit(./.git/**)"},
		{"/w/.gitignore", wr, ""},
		{"/w/.env", rd, "Read(.env)"},
		{"/w/a/b/.env", rd, "Read(.env)"},
		{"/w/a/.env/x", rd, "Read(.env)"},
		{"/etc/shadow", rd, "Read(//etc/shadow)"},
		{"/home/u/.ssh/id_rsa", wr, "Edit(~/.ssh/**)"},
		{"/home/u/.ssh/id_rsa", rd, ""},
		// Ask rules deny only where nobody was asked.
		{"/w/private/notes.txt", rd, ""},
		{"/w/private/notes.txt", ls, "Read(./private/**)"},
		{"/w/private", ls, "Read(./private/**)"},
		{"/w/docs/a.md", wr, ""},
		{"/w/docs/a.md", wr | fs.AccessListed, "Edit(docs/*.md)"},
		{"/w/src/main.go", ls, ""},
	}
	for _, c := range cases {
		err := pp.CheckPath(ctx, c.p, c.a, fs.FileID{})
		if c.rule == "" {
			assert.NoError(t, err, "%s %v", c.p, c.a)
			continue
		}
		require.Error(t, err, "%s %v", c.p, c.a)
		assert.ErrorIs(t, err, harness.CodeDenied)
		assert.Contains(t, err.Error(), "the rule "+c.rule+" denies", c.p)
	}
	assert.False(t, pp.Empty())
	assert.True(t, mustPaths(t, Rules{Allow: []string{"Read"}, Deny: []string{"Bash(rm:*)", "read"}}, ws).Empty(), "only Read and Edit rules make paths")

	// A pattern of only "." and "/" elements is the base itself (it made
	// matching panic once).
	dot := mustPaths(t, Rules{Deny: []string{"Read(.//.)"}}, ws)
	assert.Error(t, dot.CheckPath(ctx, "/w/any/file", rd, fs.FileID{}))
	assert.NoError(t, dot.CheckPath(ctx, "/elsewhere", rd, fs.FileID{}))

	// A rule without a path covers every path.
	all := mustPaths(t, Rules{Deny: []string{"Edit"}}, ws)
	assert.Error(t, all.CheckPath(ctx, "/anything", wr, fs.FileID{}))
	assert.NoError(t, all.CheckPath(ctx, "/anything", rd, fs.FileID{}))
}

func TestPathsHardLinks(t *testing.T) {
	ws := t.TempDir()
	ctx := context.Background()
	writeFiles(t, ws, map[string]string{
		"secrets/key.txt":   "SECRET",
		"secrets/other.txt": "OTHER",
		".git/config":       "[core]",
		"src/a.go":          "package a",
		"deep/x/.env":       "TOKEN=1",
	})
	r := issueRules
	r.Deny = append(r.Deny, "Read(.env)")
	pp := mustPaths(t, r, ws)

	// A file with one link costs nothing and is allowed.
	require.NoError(t, pp.CheckPath(ctx, ws+"/src/a.go", fs.AccessRead, idOf(t, ws+"/src/a.go")))

	require.NoError(t, os.Link(ws+"/secrets/key.txt", ws+"/src/innocent.txt"))
	err := pp.CheckPath(ctx, ws+"/src/innocent.txt", fs.AccessRead, idOf(t, ws+"/src/innocent.txt"))
	require.ErrorIs(t, err, harness.CodeDenied)
	assert.Contains(t, err.Error(), "hard link")
	assert.Contains(t, err.Error(), "Read(./secrets/**)")
	assert.NotContains(t, err.Error(), "key.txt", "the other name is not told")

	require.NoError(t, os.Link(ws+"/.git/config", ws+"/src/conf"))
	id := idOf(t, ws+"/src/conf")
	assert.NoError(t, pp.CheckPath(ctx, ws+"/src/conf", fs.AccessRead, id), ".git is only edit-denied")
	assert.ErrorIs(t, pp.CheckPath(ctx, ws+"/src/conf", fs.AccessWrite, id), harness.CodeDenied)

	require.NoError(t, os.Link(ws+"/deep/x/.env", ws+"/src/env-copy"))
	assert.ErrorIs(t, pp.CheckPath(ctx, ws+"/src/env-copy", fs.AccessRead, idOf(t, ws+"/src/env-copy")), harness.CodeDenied, "unanchored patterns are found at any depth")

	// Two links both outside denied trees are fine.
	require.NoError(t, os.Link(ws+"/src/a.go", ws+"/src/b.go"))
	assert.NoError(t, pp.CheckPath(ctx, ws+"/src/b.go", fs.AccessRead, idOf(t, ws+"/src/b.go")))

	// The cache sees a file that became denied later: a link made into
	// a cached directory, and a new directory.
	writeFiles(t, ws, map[string]string{"src/late.txt": "LATE"})
	require.NoError(t, os.Link(ws+"/src/late.txt", ws+"/src/late2.txt"))
	assert.NoError(t, pp.CheckPath(ctx, ws+"/src/late.txt", fs.AccessRead, idOf(t, ws+"/src/late.txt")))
	require.NoError(t, os.MkdirAll(ws+"/secrets/new", 0o755))
	require.NoError(t, os.Link(ws+"/src/late.txt", ws+"/secrets/new/late.txt"))
	assert.ErrorIs(t, pp.CheckPath(ctx, ws+"/src/late.txt", fs.AccessRead, idOf(t, ws+"/src/late.txt")), harness.CodeDenied)
}

func TestPathsListDenied(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	ctx := context.Background()
	writeFiles(t, ws, map[string]string{
		"secrets/key.txt":   "S",
		"secrets/sub/b.txt": "S",
		".git/config":       "c",
		".env":              "E",
		"a/b/.env":          "E",
		"certs/x.pem":       "P",
		"certs/x.crt":       "C",
		"src/main.go":       "package main",
		"private/notes":     "N",
		"vendor/x/.env":     "E",
		"vendor/x/y.go":     "package x",
	})
	writeFiles(t, home, map[string]string{".ssh/id_rsa": "K"})
	require.NoError(t, os.Symlink("src", ws+"/.env.link"))
	require.NoError(t, os.Symlink("../src", ws+"/a/.env"))
	r := issueRules
	r.Deny = append(r.Deny, "Read(.env)", "Read(./certs/*.pem)", "Read(~/.ssh/**)", "Read(./missing/**)")
	r.Deny = append(r.Deny, "Edit(./vendor/**)")
	r.Ask = []string{"Read(./private/**)"}
	r.Home = home
	pp := mustPaths(t, r, ws)
	got, err := pp.ListDenied(ctx, fs.AccessRead)
	require.NoError(t, err)
	want := []string{home + "/.ssh", ws + "/.env", ws + "/a/.env", ws + "/a/b/.env", ws + "/certs/x.pem", ws + "/private", ws + "/secrets", ws + "/vendor/x/.env"}
	slices.Sort(want)
	assert.Equal(t, want, got, "links are listed, not followed; a file denied for reading inside a directory denied for changing is listed")
	got, err = pp.ListDenied(ctx, fs.AccessWrite)
	require.NoError(t, err)
	assert.Equal(t, []string{ws + "/.git", ws + "/vendor"}, got)

	// From one look at the file system, the same lists.
	each, err := pp.ListDeniedEach(ctx, fs.AccessRead, fs.AccessWrite)
	require.NoError(t, err)
	assert.Equal(t, [][]string{want, {ws + "/.git", ws + "/vendor"}}, each)
	each, err = pp.ListDeniedEach(ctx, fs.AccessWrite, fs.AccessRead)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{ws + "/.git", ws + "/vendor"}, want}, each, "in either order")

	all := mustPaths(t, Rules{Deny: []string{"Read"}}, ws)
	got, err = all.ListDenied(ctx, fs.AccessRead)
	require.NoError(t, err)
	assert.Equal(t, []string{ws}, got, "a rule without a path stands for the workspace")
}

// BenchmarkPathsCheck measures a check against the issue's rules plus a
// hundred more path rules: the cost every file access pays.
func BenchmarkPathsCheck(b *testing.B) {
	r := issueRules
	for i := range 100 {
		r.Deny = append(r.Deny, fmt.Sprintf("Read(./gen/%d/**)", i))
	}
	pp := mustPaths(b, r, "/w")
	ctx := context.Background()
	for b.Loop() {
		if pp.CheckPath(ctx, "/w/src/pkg/file.go", fs.AccessRead, fs.FileID{}) != nil {
			b.Fatal("denied")
		}
	}
}

// BenchmarkPathsHardLink measures the check of a file with two links
// when an unanchored pattern (.env) makes the whole workspace a tree to
// search: "walk" when the file changed since the last walk (each
// directory is lstat'ed, and listed again only if it changed), "cached"
// when it did not.
func BenchmarkPathsHardLink(b *testing.B) {
	ws := b.TempDir()
	files := map[string]string{}
	for d := range 200 {
		for f := range 10 {
			files[fmt.Sprintf("pkg%d/sub/f%d.go", d, f)] = "x"
		}
	}
	writeFiles(b, ws, files)
	require.NoError(b, os.Link(ws+"/pkg0/sub/f0.go", ws+"/pkg0/sub/link.go"))
	// As a workspace is: changed more than a moment ago.
	old := time.Now().Add(-time.Hour)
	require.NoError(b, filepath.WalkDir(ws, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
	r := issueRules
	r.Deny = append(r.Deny, "Read(.env)")
	pp := mustPaths(b, r, ws)
	id := idOf(b, ws+"/pkg0/sub/link.go")
	ctx := context.Background()
	b.Run("walk", func(b *testing.B) {
		fresh := id
		fresh.Changed = 0 // unknown: always look again
		for b.Loop() {
			if pp.CheckPath(ctx, ws+"/pkg0/sub/link.go", fs.AccessRead, fresh) != nil {
				b.Fatal("denied")
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		// Past the window in which a status change time cannot be
		// trusted to order events.
		time.Sleep(time.Until(time.Unix(0, id.Changed).Add(racy + 100*time.Millisecond)))
		pp.CheckPath(ctx, ws+"/pkg0/sub/link.go", fs.AccessRead, id)
		for b.Loop() {
			if pp.CheckPath(ctx, ws+"/pkg0/sub/link.go", fs.AccessRead, id) != nil {
				b.Fatal("denied")
			}
		}
	})
}
