package codesearch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
)

// tree is the project both file systems hold for the tests.
var tree = map[string]string{
	"main.go":                "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n",
	"util/strings.go":        "package util\n\n// Reverse reverses s.\nfunc Reverse(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n",
	"util/strings_test.go":   "package util\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {\n\tif Reverse(\"ab\") != \"ba\" {\n\t\tt.Fatal(\"TODO\")\n\t}\n}\n",
	"web/app.ts":             "export function main(): void {\n  console.log('hello');\n}\n",
	"web/app.tsx":            "export const App = () => <div>hello</div>;\n",
	"README.md":              "# Demo\n\nSay hello.\nTODO: more docs\n",
	".gitignore":             "build/\n*.log\n!keep.log\n/dist\n",
	"build/out.go":           "package build // hello\n",
	"debug.log":              "hello from the log\n",
	"keep.log":               "hello kept\n",
	"dist/bundle.js":         "hello()\n",
	"web/dist/x.js":          "hello() // not anchored at web/\n",
	"web/trace.log":          "hello trace\n",
	"web/.gitignore":         "*.tsx\n",
	"web/.ignore":            "!app.tsx\n",
	"docs/.ignore":           "draft.md\n",
	"docs/draft.md":          "hello draft\n",
	"docs/final.md":          "hello final\n",
	".hidden/secret.go":      "package hidden // hello\n",
	".env":                   "HELLO=1\n",
	"data/blob.bin":          "hello\x00\x01\x02",
	".git/info/exclude":      "local-*\n",
	".git/config":            "hello = git internals\n",
	"local-notes.txt":        "hello local\n",
	"crlf.txt":               "first\r\nhello crlf\r\nlast\r\n",
	"deep/a/b/c/d/target.go": "package d\n// hello deep\n",
}

type fixture struct {
	name string
	fsys fs.FileSystem
	root string
	// touch sets a file's modification time, when the file system can.
	touch func(rel string, t time.Time)
}

func fixtures(t *testing.T) []fixture {
	mem := fstest.NewMemFS("/project")
	for p, c := range tree {
		require.NoError(t, mem.SetFile("/project/"+p, []byte(c), 0o644))
	}
	dir := t.TempDir()
	for p, c := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	// Oldest first: main.go is the newest file, README.md the oldest.
	base := time.Now().Add(-time.Hour)
	i := 0
	for p := range tree {
		os.Chtimes(filepath.Join(dir, p), base.Add(time.Duration(i)*time.Second), base.Add(time.Duration(i)*time.Second))
		i++
	}
	os.Chtimes(filepath.Join(dir, "README.md"), base.Add(-time.Hour), base.Add(-time.Hour))
	os.Chtimes(filepath.Join(dir, "main.go"), base.Add(time.Hour), base.Add(time.Hour))
	local, err := fslocal.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { local.Close() })
	return []fixture{
		{name: "memfs", fsys: mem, root: "/project"},
		{name: "fslocal", fsys: local, root: filepath.ToSlash(dir), touch: func(rel string, tm time.Time) {
			os.Chtimes(filepath.Join(dir, rel), tm, tm)
		}},
	}
}

// listed returns the path lines of a result (those after the first
// line, up to a blank line).
func listed(text string) []string {
	lines := strings.Split(text, "\n")[1:]
	var out []string
	for _, l := range lines {
		if l == "" {
			break
		}
		out = append(out, l)
	}
	return out
}

func TestGrepFilesWithMatches(t *testing.T) {
	leakcheck.Check(t)
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			r := newRig(t, fx.fsys)
			res := r.run("grep", map[string]any{"pattern": "hello"})
			require.False(t, res.IsError, res.Text())
			got := listed(res.Text())
			assert.ElementsMatch(t, []string{
				"main.go", "web/app.ts", "web/app.tsx", "web/dist/x.js", "README.md", "keep.log", "docs/final.md", "crlf.txt", "deep/a/b/c/d/target.go",
			}, got, "ignored, hidden, binary and excluded files are left out:\n%s", res.Text())
			assert.Contains(t, res.Text(), "1 file matched but was skipped as binary (a NUL byte).")
			assert.Contains(t, res.Text(), "output_mode content")
			if fx.touch != nil {
				assert.Equal(t, "main.go", got[0], "newest first")
				assert.Equal(t, "README.md", got[len(got)-1], "oldest last")
			}
			require.Equal(t, harness.RenderLocations, res.Render.Kind)
			assert.Len(t, res.Render.Locations, len(got))
			assert.Equal(t, fx.root+"/"+got[0], res.Render.Locations[0].Path)
		})
	}
}

func TestGrepIgnoreRules(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			r := newRig(t, fx.fsys)
			cases := []struct {
				name string
				args map[string]any
				want []string
			}{
				{"web/dist is not /dist", map[string]any{"pattern": "anchored"}, []string{"web/dist/x.js"}},
				{"explicit path into an ignored directory", map[string]any{"pattern": "hello", "path": "build"}, []string{"build/out.go"}},
				{"explicit ignored file", map[string]any{"pattern": "hello", "path": "debug.log"}, []string{"debug.log"}},
				{"explicit hidden directory", map[string]any{"pattern": "hello", "path": ".hidden"}, []string{".hidden/secret.go"}},
				{"nested .ignore", map[string]any{"pattern": "hello", "path": "docs"}, []string{"docs/final.md"}},
				{"rules of the directories above path apply", map[string]any{"pattern": "hello", "path": "web"}, []string{"web/app.ts", "web/app.tsx", "web/dist/x.js"}},
				{"glob filter", map[string]any{"pattern": "hello", "glob": "*.{ts,tsx}"}, []string{"web/app.ts", "web/app.tsx"}},
				{"negated glob", map[string]any{"pattern": "hello", "glob": "!*.md"}, []string{"main.go", "web/app.ts", "web/app.tsx", "web/dist/x.js", "keep.log", "crlf.txt", "deep/a/b/c/d/target.go"}},
				{"path glob", map[string]any{"pattern": "package", "glob": "util/*_test.go"}, []string{"util/strings_test.go"}},
				{"type", map[string]any{"pattern": "hello|Reverse", "type": "go"}, []string{"main.go", "util/strings.go", "util/strings_test.go", "deep/a/b/c/d/target.go"}},
				{"type ts", map[string]any{"pattern": "hello", "type": "ts"}, []string{"web/app.ts", "web/app.tsx"}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					res := r.run("grep", c.args)
					require.False(t, res.IsError, res.Text())
					assert.ElementsMatch(t, c.want, listed(res.Text()), res.Text())
				})
			}
		})
	}
}

func TestGrepOptions(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			r := newRig(t, fx.fsys, codesearch.Config{Hidden: true, NoIgnore: true})
			got := listed(r.ok("grep", map[string]any{"pattern": "hello", "case_insensitive": true}))
			assert.Contains(t, got, ".hidden/secret.go")
			assert.Contains(t, got, ".env", "case_insensitive finds HELLO")
			assert.Contains(t, got, "debug.log")
			assert.Contains(t, got, "local-notes.txt")
			assert.NotContains(t, got, ".git/config", ".git is skipped even with hidden")
			assert.NotContains(t, got, "data/blob.bin", "binary files are skipped still")
		})
	}
}

func TestGrepContent(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			r := newRig(t, fx.fsys)
			text := r.ok("grep", map[string]any{"pattern": "r\\[i\\]|return", "path": "util", "output_mode": "content", "context": 1})
			assert.Equal(t, `2 matching lines in 1 file for the pattern "r\\[i\\]|return" under util:

util/strings.go
6-	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
7:		r[i], r[j] = r[j], r[i]
8-	}
9:	return string(r)
10-}`, text)
			res := r.run("grep", map[string]any{"pattern": "TODO", "output_mode": "content", "before_context": 1})
			assert.Equal(t, `2 matching lines in 2 files for the pattern "TODO" under `+fx.root+`:

README.md
3-Say hello.
4:TODO: more docs

util/strings_test.go
6-	if Reverse("ab") != "ba" {
7:		t.Fatal("TODO")`, res.Text())
			assert.Equal(t, []harness.Location{
				{Path: fx.root + "/README.md", StartLine: 3, EndLine: 4},
				{Path: fx.root + "/util/strings_test.go", StartLine: 6, EndLine: 7},
			}, res.Render.Locations)
			text = r.ok("grep", map[string]any{"pattern": "crlf$", "path": "crlf.txt", "output_mode": "content"})
			assert.Contains(t, text, "\n2:hello crlf", "a CR is not shown")
			text = r.ok("grep", map[string]any{"pattern": "func main", "output_mode": "count"})
			assert.Contains(t, text, "1 line in 1 file match")
			assert.Contains(t, text, "\nmain.go:1")
		})
	}
}

func TestGrepMultiline(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			r := newRig(t, fx.fsys)
			text := r.ok("grep", map[string]any{"pattern": `func main\(\) \{.*?\}`, "multiline": true, "output_mode": "content"})
			assert.Contains(t, text, "1 match in 1 file")
			assert.Contains(t, text, "main.go\n5:func main() {\n6:\tfmt.Println(\"hello\")\n7:}")
			res := r.run("grep", map[string]any{"pattern": `hello\nSay`})
			require.True(t, res.IsError)
			assert.Contains(t, res.Text(), "set multiline")
		})
	}
}

func TestGrepCapped(t *testing.T) {
	mem := fstest.NewMemFS("/p")
	var big strings.Builder
	for i := range 300 {
		big.WriteString("match line\n")
		if i%50 == 0 {
			big.WriteString("other\n")
		}
	}
	require.NoError(t, mem.SetFile("/p/big.txt", []byte(big.String()), 0o644))
	for i := range 150 {
		require.NoError(t, mem.SetFile("/p/f/"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt", []byte("match\n"), 0o644))
	}
	r := newRig(t, mem)
	text := r.ok("grep", map[string]any{"pattern": "match"})
	assert.True(t, strings.HasPrefix(text, "151 files in /p match the pattern \"match\"; the 100 most recently modified:"), text)
	assert.Contains(t, text, "51 more files not shown: narrow the search with path, glob or type, or raise head_limit (at most 1000).")
	assert.Len(t, listed(text), 100)
	text = r.ok("grep", map[string]any{"pattern": "match", "output_mode": "content", "head_limit": 5, "path": "big.txt"})
	assert.True(t, strings.HasPrefix(text, "300 matching lines in 1 file for the pattern \"match\" under big.txt; the first 5 shown:"), text)
	assert.Contains(t, text, "295 more matching lines not shown")
	assert.Equal(t, 5, strings.Count(text, ":match line"))
	text = r.ok("grep", map[string]any{"pattern": "match", "output_mode": "count", "head_limit": 3})
	assert.Contains(t, text, "450 lines in 151 files match")
	assert.Contains(t, text, "148 more files not shown")
}

func TestGrepErrors(t *testing.T) {
	mem := fstest.NewMemFS("/p")
	require.NoError(t, mem.SetFile("/p/a.txt", []byte("x\n"), 0o644))
	r := newRig(t, mem)
	cases := []struct {
		args map[string]any
		code harness.Code
		want string
	}{
		{map[string]any{"pattern": ""}, harness.CodeInvalidArguments, "pattern is empty"},
		{map[string]any{"pattern": "a(b"}, harness.CodeInvalidArguments, "set literal to true"},
		{map[string]any{"pattern": "x", "output_mode": "lines"}, harness.CodeInvalidArguments, "files_with_matches, content or count"},
		{map[string]any{"pattern": "x", "type": "klingon"}, harness.CodeInvalidArguments, "Known types: c, clojure"},
		{map[string]any{"pattern": "x", "glob": "a[b"}, harness.CodeInvalidArguments, "not valid"},
		{map[string]any{"pattern": "x", "context": 99}, harness.CodeInvalidArguments, "between 0 and 20"},
		{map[string]any{"pattern": "x", "head_limit": -1}, harness.CodeInvalidArguments, "head_limit must be positive"},
		{map[string]any{"pattern": "x", "path": "missing"}, harness.CodeNotFound, "does not exist"},
		{map[string]any{"pattern": "x", "path": "/elsewhere"}, harness.CodeOutsideRoot, "outside the workspace"},
		{map[string]any{"pattern": "x", "path": "spill://abc"}, harness.CodeInvalidArguments, "read, offset and limit"},
	}
	for _, c := range cases {
		res := r.run("grep", c.args)
		require.True(t, res.IsError, "%v: %s", c.args, res.Text())
		assert.Equal(t, c.code, res.Code, "%v", c.args)
		assert.Contains(t, res.Text(), c.want)
	}
	res := r.run("glob", map[string]any{"pattern": "a[b"})
	assert.Equal(t, harness.CodeInvalidArguments, res.Code)
	res = r.run("glob", map[string]any{"pattern": "*", "path": "a.txt"})
	assert.Contains(t, res.Text(), "is a file")
	noFS := &tools.Env{Cwd: "/"}
	r.env = noFS
	res = r.run("grep", map[string]any{"pattern": "x"})
	assert.Equal(t, harness.CodeToolFailed, res.Code)
	assert.Contains(t, res.Text(), "no file system")
}

func TestGlob(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			r := newRig(t, fx.fsys)
			cases := []struct {
				pattern, path string
				want          []string
			}{
				{"**/*.go", "", []string{"main.go", "util/strings.go", "util/strings_test.go", "deep/a/b/c/d/target.go"}},
				{"*.go", "", []string{"main.go"}},
				{"*.go", "util", []string{"util/strings.go", "util/strings_test.go"}},
				{"util/*_test.go", "", []string{"util/strings_test.go"}},
				{"web/**", "", []string{"web/app.ts", "web/app.tsx", "web/dist/x.js"}},
				{"**/*.{md,txt}", "", []string{"README.md", "docs/final.md", "crlf.txt"}},
				{"**/.hidden/*", "", []string{".hidden/secret.go"}},
				{"build/*.go", "", []string{"build/out.go"}}, // named in the pattern: searched though ignored
				{"nothing/*.go", "", nil},
				{fx.root + "/util/*.go", "", []string{"util/strings.go", "util/strings_test.go"}},
				{"**/target.go", "deep", []string{"deep/a/b/c/d/target.go"}},
			}
			for _, c := range cases {
				args := map[string]any{"pattern": c.pattern}
				if c.path != "" {
					args["path"] = c.path
				}
				res := r.run("glob", args)
				require.False(t, res.IsError, res.Text())
				if c.want == nil {
					assert.True(t, strings.HasPrefix(res.Text(), "No files match"), res.Text())
					continue
				}
				assert.ElementsMatch(t, c.want, listed(res.Text()), "%s in %q: %s", c.pattern, c.path, res.Text())
				assert.Len(t, res.Render.Locations, len(c.want))
			}
			if fx.touch != nil {
				got := listed(r.ok("glob", map[string]any{"pattern": "**/*", "limit": 2}))
				assert.Equal(t, "main.go", got[0], "newest first")
				// Deep and shallow files, listed without a status call
				// each: the matches still carry their times.
				now := time.Now()
				fx.touch("deep/a/b/c/d/target.go", now.Add(3*time.Hour))
				fx.touch("docs/final.md", now.Add(2*time.Hour))
				got = listed(r.ok("glob", map[string]any{"pattern": "**/*", "limit": 3}))
				assert.Equal(t, []string{"deep/a/b/c/d/target.go", "docs/final.md", "main.go"}, got, "newest first")
				got = listed(r.ok("grep", map[string]any{"pattern": "hello", "head_limit": 3}))
				assert.Equal(t, []string{"deep/a/b/c/d/target.go", "docs/final.md", "main.go"}, got, "grep: newest first")
			}
			text := r.ok("glob", map[string]any{"pattern": "target.go"})
			assert.Contains(t, text, "1 file matches **/target.go at any depth")
		})
	}
}

func TestGlobCapped(t *testing.T) {
	mem := fstest.NewMemFS("/p")
	for i := range 250 {
		require.NoError(t, mem.SetFile("/p/d"+string(rune('a'+i%5))+"/f"+strings.Repeat("y", i/5)+".go", nil, 0o644))
	}
	r := newRig(t, mem)
	text := r.ok("glob", map[string]any{"pattern": "**/*.go"})
	assert.True(t, strings.HasPrefix(text, "250 files in /p match \"**/*.go\"; the 100 most recently modified:"), text)
	assert.Contains(t, text, "(150 more not shown: narrow the pattern or the path, or raise limit (at most 1000).)")
	assert.Len(t, listed(text), 100)
}

// TestSymlinks checks that links are never followed: not out of the
// root, not round a loop.
func TestSymlinks(t *testing.T) {
	leakcheck.Check(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("hello secret\n"), 0o644))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello inside\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("hello sub\n"), 0o644))
	for name, target := range map[string]string{
		"escape":      outside,
		"escape.txt":  filepath.Join(outside, "secret.txt"),
		"sub/loop":    "..",
		"sub/self":    "self",
		"inside.txt":  "a.txt",
		"dangling":    "nowhere",
		"sub/up/../x": "",
	} {
		if target == "" {
			continue
		}
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	defer fsys.Close()
	r := newRig(t, fsys)
	text := r.ok("grep", map[string]any{"pattern": "hello"})
	assert.ElementsMatch(t, []string{"a.txt", "sub/b.txt"}, listed(text))
	assert.NotContains(t, text, "secret")
	text = r.ok("glob", map[string]any{"pattern": "**/*"})
	assert.ElementsMatch(t, []string{"a.txt", "sub/b.txt"}, listed(text))
	res := r.run("grep", map[string]any{"pattern": "hello", "path": "escape"})
	assert.Equal(t, harness.CodeOutsideRoot, res.Code, res.Text())
	res = r.run("grep", map[string]any{"pattern": "hello", "path": "escape.txt"})
	assert.Equal(t, harness.CodeOutsideRoot, res.Code, res.Text())
	text = r.ok("grep", map[string]any{"pattern": "hello", "path": "inside.txt"})
	assert.Contains(t, text, "inside.txt", "a link named explicitly that stays inside is searched")
}

// TestSpecialFiles checks that a FIFO in the tree is never opened.
func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644))
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	defer fsys.Close()
	r := newRig(t, fsys)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := r.call(ctx, "grep", map[string]any{"pattern": "hello"})
	require.False(t, res.IsError, res.Text())
	assert.Equal(t, []string{"a.txt"}, listed(res.Text()))
}

// TestCancel checks that a cancelled search returns promptly and leaves
// no goroutine behind.
func TestCancel(t *testing.T) {
	leakcheck.Check(t)
	mem := fstest.NewMemFS("/p")
	for i := range 2000 {
		require.NoError(t, mem.SetFile("/p/d"+string(rune('a'+i%20))+"/f"+strings.Repeat("z", i/20)+".txt", []byte(strings.Repeat("some text here\n", 200)), 0o644))
	}
	r := newRig(t, mem)
	for _, tool := range []string{"grep", "glob"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		args := map[string]any{"pattern": "needle"}
		if tool == "glob" {
			args["pattern"] = "**/*.txt"
		}
		start := time.Now()
		res := r.call(ctx, tool, args)
		assert.True(t, res.IsError, tool)
		assert.Equal(t, harness.CodeAborted, res.Code, "%s: %s", tool, res.Text())
		assert.Less(t, time.Since(start), 5*time.Second)
		ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
		res = r.call(ctx, tool, args)
		cancel()
		if res.IsError {
			assert.Contains(t, []harness.Code{harness.CodeAborted, harness.CodeTimeout}, res.Code, res.Text())
		}
	}
}

func TestSpecs(t *testing.T) {
	for _, tool := range codesearch.Tools(codesearch.Config{}) {
		s := tool.Spec()
		assert.True(t, s.ConcurrencySafe, s.Name)
		assert.False(t, s.SideEffects, s.Name)
		assert.Equal(t, tools.FamilyLocal, s.Family, s.Name)
		assert.Equal(t, harness.RenderLocations, s.Render, s.Name)
	}
	assert.Equal(t, "glob", codesearch.Tools(codesearch.Config{})[0].Spec().Name)
	assert.Equal(t, "grep", codesearch.Tools(codesearch.Config{})[1].Spec().Name)
	_, err := tools.NewRegistry(codesearch.Tools(codesearch.Config{Workers: -1})...)
	require.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), "Workers must not be negative")
	_, err = tools.NewRegistry(codesearch.Tools(codesearch.Config{Workers: 1})...)
	require.NoError(t, err)
}

// TestConcurrentCalls runs both tools from many goroutines at once.
func TestConcurrentCalls(t *testing.T) {
	for _, fx := range fixtures(t) {
		r := newRig(t, fx.fsys)
		want := r.ok("grep", map[string]any{"pattern": "hello", "output_mode": "content"})
		done := make(chan string, 16)
		for i := range 16 {
			go func() {
				if i%2 == 0 {
					done <- r.ok("grep", map[string]any{"pattern": "hello", "output_mode": "content"})
				} else {
					r.ok("glob", map[string]any{"pattern": "**/*"})
					done <- want
				}
			}()
		}
		for range 16 {
			assert.Equal(t, want, <-done, fx.name)
		}
	}
}

// openFDs counts the process's open descriptors, or -1 where the system
// cannot say.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// A directory with more files than a worker visits itself is shared out
// in batches: whatever the worker count, every file is searched once,
// the totals and the order of the results are the same, and every
// directory view and file is closed afterwards, also when the call is
// cancelled part way.
func TestLargeDirectories(t *testing.T) {
	leakcheck.Check(t)
	dir := t.TempDir()
	write := func(rel, content string) {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	wantFiles, wantLines := 0, 0
	for i := range 700 {
		rel := fmt.Sprintf("flat/f%04d.txt", i)
		if i%7 == 0 {
			rel = fmt.Sprintf("flat/sub%d/g%04d.txt", i%3, i)
		}
		content := strings.Repeat("nothing here\n", 20)
		if i%5 == 0 {
			content += "the Needle\nanother NEEDLE\n"
			wantFiles++
			wantLines += 2
		}
		write(rel, content)
	}
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	defer fsys.Close()
	before := openFDs()
	var first string
	for _, workers := range []int{1, 2, 3, 4} {
		r := newRig(t, fsys, codesearch.Config{Workers: workers})
		text := r.ok("grep", map[string]any{"pattern": "needle", "case_insensitive": true, "output_mode": "count", "head_limit": 1000})
		assert.Contains(t, text, fmt.Sprintf("%d lines in %d files match", wantLines, wantFiles), "workers %d", workers)
		content := r.ok("grep", map[string]any{"pattern": "needle", "literal": true, "case_insensitive": true, "output_mode": "content", "head_limit": 50})
		if first == "" {
			first = content
		}
		assert.Equal(t, first, content, "workers %d: the same lines in the same order", workers)
		text = r.ok("glob", map[string]any{"pattern": "flat/**/*.txt"})
		assert.True(t, strings.HasPrefix(text, "700 files in"), "workers %d: %s", workers, text)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Microsecond)
		r.call(ctx, "grep", map[string]any{"pattern": "needle"})
		cancel()
	}
	assert.True(t, strings.HasPrefix(first, fmt.Sprintf("%d matching lines in %d files", wantLines, wantFiles)), first)
	assert.Contains(t, first, "\nflat/f0005.txt\n21:the Needle\n22:another NEEDLE\n\nflat/f0010.txt\n", "the first files by path")
	if before >= 0 {
		assert.Equal(t, before, openFDs(), "every view and file closed")
	}
}
