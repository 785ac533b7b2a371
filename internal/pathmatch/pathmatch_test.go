package pathmatch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern string
		base    bool
		yes     []string
		no      []string
	}{
		{"**/*.go", false, []string{"a.go", "x/a.go", "x/y/z.go"}, []string{"a.go.txt", "x/a.goo", "a/go"}},
		{"*.go", false, []string{"a.go", ".go"}, []string{"x/a.go"}},
		{"*.go", true, []string{"a.go", "x/y/a.go"}, []string{"x/a.gox"}},
		{"src/**/*.ts", false, []string{"src/a.ts", "src/x/y/b.ts"}, []string{"a.ts", "lib/src/a.ts", "src/a.tsx"}},
		{"src/**", false, []string{"src/a", "src/x/y"}, []string{"src", "srcx/a"}},
		{"a/**/b", false, []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/xb", "b", "a/b/c"}},
		{"?.txt", false, []string{"a.txt", "é.txt"}, []string{"ab.txt", "/.txt"}},
		{"[abc]*.md", false, []string{"a.md", "cx.md"}, []string{"d.md"}},
		{"[!abc]*.md", false, []string{"d.md"}, []string{"a.md"}},
		{"[^a-c]x", false, []string{"dx", "Ax"}, []string{"bx"}},
		{"[[:digit:]]*", false, []string{"1a", "9"}, []string{"a1"}},
		{"[]]x", false, []string{"]x"}, []string{"ax"}},
		{`\*.go`, false, []string{"*.go"}, []string{"a.go"}},
		{`a\?`, false, []string{"a?"}, []string{"ab"}},
		{"*.{go,mod}", false, []string{"a.go", "go.mod"}, []string{"a.sum"}},
		{"{cmd,internal}/**/*.go", false, []string{"cmd/x.go", "internal/a/b.go"}, []string{"pkg/x.go"}},
		{"{a,b{c,d}}.txt", false, []string{"a.txt", "bc.txt", "bd.txt"}, []string{"b.txt"}},
		{"{x}.txt", false, []string{"{x}.txt"}, []string{"x.txt"}},
		{"./a/*.go", false, []string{"a/b.go"}, []string{"b.go"}},
		{"foo**bar", false, []string{"foobar", "fooxbar"}, []string{"foo/bar"}},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			g, err := CompileGlob(c.pattern, GlobOptions{Basename: c.base})
			require.NoError(t, err)
			for _, p := range c.yes {
				assert.True(t, g.Match(p), "%s should match %s", c.pattern, p)
			}
			for _, p := range c.no {
				assert.False(t, g.Match(p), "%s should not match %s", c.pattern, p)
			}
		})
	}
}

func TestGlobErrors(t *testing.T) {
	for _, p := range []string{"", "a[bc", `a\`, "{a,b", "a}", strings.Repeat("{a,b}", 9)} {
		_, err := CompileGlob(p, GlobOptions{})
		assert.ErrorIs(t, err, ErrPattern, "%q", p)
	}
}

func TestGlobNegatedAndPrefix(t *testing.T) {
	g, err := CompileGlob("!vendor/**", GlobOptions{Negatable: true})
	require.NoError(t, err)
	assert.True(t, g.Negated())
	assert.True(t, g.Match("vendor/a.go"))
	for _, c := range []struct{ pattern, prefix string }{
		{"src/lib/**/*.go", "src/lib"}, {"**/*.go", ""}, {"a/b.go", "a"}, {"{a/x,a/y}/*.go", "a"}, {"*.go", ""},
	} {
		g, err := CompileGlob(c.pattern, GlobOptions{})
		require.NoError(t, err)
		assert.Equal(t, c.prefix, g.LiteralPrefix(), c.pattern)
	}
	g, _ = CompileGlob("src/*/x.go", GlobOptions{})
	assert.True(t, g.MayMatchUnder("src"))
	assert.True(t, g.MayMatchUnder("src/a"))
	assert.False(t, g.MayMatchUnder("src/a/b"), "too deep")
	assert.False(t, g.MayMatchUnder("lib"))
	g, _ = CompileGlob("**/x.go", GlobOptions{})
	assert.True(t, g.MayMatchUnder("any/depth/at/all"))
}

// TestRules checks git's documented gitignore semantics, case by case.
func TestRules(t *testing.T) {
	type probe struct {
		path  string
		dir   bool
		want  Decision
		about string
	}
	cases := []struct {
		name   string
		rules  string
		probes []probe
	}{
		{"comments and blanks", "# a comment\n\n   \n\\#hash\n", []probe{
			{"# a comment", false, None, "a comment is no rule"},
			{"#hash", false, Ignored, `\# starts a literal #`},
		}},
		{"basename at any depth", "*.log\n", []probe{
			{"a.log", false, Ignored, ""}, {"x/y/a.log", false, Ignored, "no slash: any level"}, {"a.logs", false, None, ""},
		}},
		{"negation, last rule wins", "*.log\n!keep.log\n", []probe{
			{"a.log", false, Ignored, ""}, {"keep.log", false, Included, "re-included"}, {"x/keep.log", false, Included, ""},
		}},
		{"negation before the rule loses", "!keep.log\n*.log\n", []probe{
			{"keep.log", false, Ignored, "the later rule wins"},
		}},
		{"literal bang", "\\!important\n", []probe{
			{"!important", false, Ignored, ""}, {"important", false, None, ""},
		}},
		{"leading slash anchors", "/build\n", []probe{
			{"build", true, Ignored, ""}, {"x/build", true, None, "anchored to the top"},
		}},
		{"middle slash anchors", "doc/frotz\n", []probe{
			{"doc/frotz", true, Ignored, ""}, {"a/doc/frotz", true, None, "relative to the file's directory"},
		}},
		{"trailing slash: directories only", "frotz/\n", []probe{
			{"frotz", true, Ignored, ""}, {"a/frotz", true, Ignored, "no other slash: any level"}, {"frotz", false, None, "a file is not matched"},
		}},
		{"leading **/", "**/foo\n", []probe{
			{"foo", false, Ignored, ""}, {"a/b/foo", false, Ignored, ""}, {"a/foox", false, None, ""},
		}},
		{"**/ with a path", "**/foo/bar\n", []probe{
			{"foo/bar", false, Ignored, ""}, {"x/foo/bar", false, Ignored, ""}, {"foo/x/bar", false, None, ""},
		}},
		{"trailing /**", "abc/**\n", []probe{
			{"abc/x", false, Ignored, ""}, {"abc/x/y", true, Ignored, ""}, {"abc", true, None, "not the directory itself"},
		}},
		{"middle /**/", "a/**/b\n", []probe{
			{"a/b", false, Ignored, "zero directories"}, {"a/x/b", false, Ignored, ""}, {"a/x/y/b", false, Ignored, ""},
		}},
		{"other ** is *", "foo**bar\n", []probe{
			{"fooxbar", false, Ignored, ""}, {"foobar", false, Ignored, ""},
		}},
		{"star does not cross slash", "a/*.c\n", []probe{
			{"a/x.c", false, Ignored, ""}, {"a/b/x.c", false, None, ""},
		}},
		{"question mark and classes", "file?.[ch]\n[!x]y\n", []probe{
			{"file1.c", false, Ignored, ""}, {"file12.c", false, None, ""}, {"file1.o", false, None, ""}, {"ay", false, Ignored, ""}, {"xy", false, None, ""},
		}},
		{"trailing spaces", "trail  \nspace\\ \n", []probe{
			{"trail", false, Ignored, "unescaped trailing spaces are dropped"}, {"space ", false, Ignored, "an escaped one is kept"}, {"space", false, None, ""},
		}},
		{"escaped wildcards", "\\*.txt\nq\\?\n", []probe{
			{"*.txt", false, Ignored, ""}, {"a.txt", false, None, ""}, {"q?", false, Ignored, ""}, {"qa", false, None, ""},
		}},
		{"malformed matches nothing", "a[b\nc\\\nok\n", []probe{
			{"a[b", false, None, ""}, {"ab", false, None, ""}, {"c\\", false, None, ""}, {"ok", false, Ignored, ""},
		}},
		{"CRLF", "*.tmp\r\n", []probe{{"a.tmp", false, Ignored, ""}}},
		{"negated directory rule", "logs/\n!logs/\n", []probe{{"logs", true, Included, ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := ParseRules([]byte(c.rules))
			for _, p := range c.probes {
				assert.Equal(t, p.want, rs.Match(p.path, p.dir), "%q (dir %v) %s", p.path, p.dir, p.about)
			}
		})
	}
}

func TestStack(t *testing.T) {
	var s *Stack
	s = s.Push("/r", ParseRules([]byte("*.log\nbuild/\n")))
	sub := s.Push("/r/sub", ParseRules([]byte("!keep.log\n")), ParseRules([]byte("keep.log\n")))
	assert.True(t, s.Ignored("/r/a.log", false))
	assert.True(t, s.Ignored("/r/x/build", true))
	assert.False(t, s.Ignored("/r/x/build", false))
	assert.True(t, sub.Ignored("/r/sub/a.log", false), "the parent's rule applies below")
	assert.False(t, sub.Ignored("/r/sub/keep.log", false), "the closer directory wins, and its first file (.ignore) over its second")
	assert.True(t, s.Ignored("/r/sub/keep.log", false), "siblings do not see sub's rules")
	assert.Same(t, s, s.Push("/r/empty", ParseRules([]byte("# nothing\n"))), "a file without rules adds nothing")
	root := (*Stack)(nil).Push("/", ParseRules([]byte("/top\n")))
	assert.True(t, root.Ignored("/top", true))
	assert.False(t, root.Ignored("/a/top", true))
}

// TestRulesAgainstGit builds a tree with nested .gitignore files and an
// info/exclude file, and compares every path's decision with `git
// check-ignore`.
func TestRulesAgainstGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; the table in TestRules still checks git's documented semantics")
	}
	dir := t.TempDir()
	run := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		return string(out), err
	}
	_, err = run("", "init", "-q", ".")
	require.NoError(t, err)
	ignores := map[string]string{
		".gitignore":            "*.log\n!keep.log\n/build/\ndoc/*.tmp\n**/gen/**\nspace\\ \n\\#lit\n[a-c]?.bin\nnested/deep/\n*.o\n!special.o\n",
		"sub/.gitignore":        "!*.log\nlocal\n/anch\nx/**/y\n",
		"sub/deeper/.gitignore": "keep.log\n*.txt\n!ok.txt\n",
		".git/info/exclude":     "excluded-*\n!excluded-not\n",
	}
	for p, c := range ignores {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	files := []string{
		"a.log", "keep.log", "build/x", "src/build/x", "doc/a.tmp", "doc/sub/a.tmp", "x/gen/y/z", "gen/a", "gen",
		"space ", "#lit", "ab.bin", "dx.bin", "nested/deep/f", "a/nested/deep/f", "m.o", "special.o",
		"sub/a.log", "sub/local", "sub/q/local", "sub/anch", "sub/q/anch", "sub/x/y", "sub/x/1/2/y", "x/y",
		"sub/deeper/keep.log", "sub/deeper/a.txt", "sub/deeper/ok.txt", "sub/deeper/more/b.txt",
		"excluded-1", "sub/excluded-2", "excluded-not", "plain.go",
	}
	var paths []string
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
		if f == "gen" {
			continue // a directory name, via gen/a
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
		paths = append(paths, f)
	}
	out, err := run(strings.Join(paths, "\n")+"\n", "check-ignore", "--stdin", "--no-index")
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("git check-ignore: %v", err)
	}
	gitSays := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			gitSays[l] = true
		}
	}
	stackFor := func(dirRel string) *Stack {
		s := (*Stack)(nil).Push("/w", ParseRules([]byte(ignores[".git/info/exclude"])))
		s = s.Push("/w", ParseRules([]byte(ignores[".gitignore"])))
		cur := "/w"
		for _, part := range strings.Split(dirRel, "/") {
			if part == "" || part == "." {
				continue
			}
			cur += "/" + part
			rel := strings.TrimPrefix(cur, "/w/")
			s = s.Push(cur, ParseRules([]byte(ignores[rel+"/.gitignore"])))
		}
		return s
	}
	// Ours: a path is ignored when it or a parent directory is, as a walk
	// sees it.
	ours := func(rel string) bool {
		parts := strings.Split(rel, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			if stackFor(strings.Join(parts[:i], "/")).Ignored("/w/"+p, i < len(parts)-1) {
				return true
			}
		}
		return false
	}
	sort.Strings(paths)
	for _, p := range paths {
		assert.Equal(t, gitSays[p], ours(p), "%s: git says ignored=%v", p, gitSays[p])
	}
}
