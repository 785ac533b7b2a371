package permission

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-harness/harness/fs"
)

// FuzzPathsPruning checks the walk's pruning: whenever a Read rule's
// pattern matches a path, no directory above that path (below the
// pattern's walk root) is pruned, so a walk finds every path the rule
// denies. It also checks, on a real tree made of the path, that
// ListDenied lists it or a directory above it.
func FuzzPathsPruning(f *testing.F) {
	for _, s := range [][2]string{
		{"./secrets/**", "secrets/a/b.txt"},
		{".env", "a/b/.env"},
		{"src/**/*.pem", "src/x/y/k.pem"},
		{"*.key", "deep/er/id.key"},
		{"./a/*/c", "a/b/c/d"},
		{"a/**", "a"},
		{"./[ab]*/x", "bz/x"},
		{"//etc/shadow", "etc/shadow"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		if strings.ContainsAny(pattern, "()\x00") || strings.ContainsRune(rel, 0) || len(rel) > 200 {
			return
		}
		r, err := parseRule("Read(" + pattern + ")")
		if err != nil || r.anySpec || r.path.base == baseHome {
			return
		}
		rel = strings.Trim(path.Clean("/"+rel), "/")
		if rel == "" || strings.Contains(rel, "..") {
			return
		}
		ws := "/w"
		if r.path.base == baseRoot {
			ws = "/w" // the path is taken below the root instead
		}
		abs := path.Join(ws, rel)
		if r.path.base == baseRoot {
			abs = "/" + rel
		}
		if !r.path.match(abs, ws, "") {
			return
		}
		pp := &Paths{ws: ws, readDeny: []*rule{r}}
		root := pp.root(r)
		for d := path.Dir(abs); len(d) > len(root) && strings.HasPrefix(d, root+"/"); d = path.Dir(d) {
			if firstMatch([]*rule{r}, newForm(d, ws, "")) != nil {
				break // the walk stops at a matching directory anyway
			}
			if !mayMatchBelow([]*rule{r}, d, ws, "") {
				t.Fatalf("the pattern %q matches %s, but the walk prunes %s (root %s)", pattern, abs, d, root)
			}
		}
		if r.path.base != baseWorkspace || strings.Count(rel, "/") > 8 {
			return
		}
		// On disk: the denied path is listed, or a directory above it.
		dir := t.TempDir()
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if os.MkdirAll(filepath.Dir(full), 0o755) != nil || os.WriteFile(full, nil, 0o644) != nil {
			return
		}
		pd := &Paths{ws: filepath.ToSlash(dir), readDeny: []*rule{r}, dirs: map[string]*dirState{}, links: map[string]*linkSet{}}
		got, err := pd.ListDenied(context.Background(), fs.AccessRead)
		if err != nil {
			t.Fatal(err)
		}
		pd.editDeny = []*rule{r}
		each, err := pd.ListDeniedEach(context.Background(), fs.AccessWrite, fs.AccessRead)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(each[0], got) || !slices.Equal(each[1], got) {
			t.Fatalf("the pattern %q: ListDeniedEach lists %v, ListDenied %v", pattern, each, got)
		}
		want := filepath.ToSlash(full)
		for _, g := range got {
			if g == want || strings.HasPrefix(want, g+"/") {
				return
			}
		}
		t.Fatalf("the pattern %q denies %s, but ListDenied lists %v", pattern, want, got)
	})
}
