package instructions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/instructions"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// workspace returns an in-memory workspace rooted at /ws with files.
func workspace(t *testing.T, files map[string]string) fstest.MemFS {
	t.Helper()
	m := fstest.NewMemFS("/ws")
	for p, text := range files {
		require.NoError(t, m.SetFile(p, []byte(text), 0o644))
	}
	return m
}

// home returns a home directory holding files (paths relative to it).
func home(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
	}
	return dir
}

func paths(files []session.ContextFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func TestDiscoveryOrder(t *testing.T) {
	ws := workspace(t, map[string]string{
		"/ws/CLAUDE.md":          "root claude",
		"/ws/AGENTS.md":          "root agents",
		"/ws/a/AGENTS.md":        "a agents",
		"/ws/a/b/CLAUDE.md":      "b claude",
		"/ws/a/b/c/AGENTS.md":    "below cwd: not in the prefix",
		"/ws/other/AGENTS.md":    "a sibling: never",
		"/ws/a/b/notes/NOTES.md": "not an instruction file",
	})
	h := home(t, map[string]string{
		".config/harness/AGENTS.md": "user harness",
		".claude/CLAUDE.md":         "user claude",
	})
	files, err := instructions.New(instructions.Config{Home: h}).Load(context.Background(), ws, "/ws/a/b")
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(h, ".config", "harness", "AGENTS.md"),
		filepath.Join(h, ".claude", "CLAUDE.md"),
		"/ws/AGENTS.md", "/ws/CLAUDE.md", "/ws/a/AGENTS.md", "/ws/a/b/CLAUDE.md",
	}, paths(files), "user-level first, then root to cwd, AGENTS.md before CLAUDE.md")
	for _, f := range files {
		assert.Equal(t, instructions.Kind, f.Kind)
		assert.Equal(t, session.DigestText(f.Text), f.Digest)
		assert.False(t, f.Cut)
	}
	assert.Equal(t, "Instructions from /ws/a/b/CLAUDE.md, for work in /ws/a/b and below:\n\nb claude", files[5].Text)
	assert.Contains(t, files[0].Text, "the user's own")
	assert.EqualValues(t, len("root agents"), files[2].Bytes)

	// Without a home directory no user-level file is read.
	files, err = instructions.New(instructions.Config{}).Load(context.Background(), ws, "/ws/a/b")
	require.NoError(t, err)
	assert.Equal(t, []string{"/ws/AGENTS.md", "/ws/CLAUDE.md", "/ws/a/AGENTS.md", "/ws/a/b/CLAUDE.md"}, paths(files))

	// A host's own names and list.
	files, err = instructions.New(instructions.Config{Names: []string{"CLAUDE.md"}}).Load(context.Background(), ws, "/ws/a/b")
	require.NoError(t, err)
	assert.Equal(t, []string{"/ws/CLAUDE.md", "/ws/a/b/CLAUDE.md"}, paths(files))
	files, err = instructions.New(instructions.Config{Files: []string{"../AGENTS.md", "/ws/other/AGENTS.md"}}).Load(context.Background(), ws, "/ws/a/b")
	require.NoError(t, err)
	assert.Equal(t, []string{"/ws/a/AGENTS.md", "/ws/other/AGENTS.md"}, paths(files))
	_, err = instructions.New(instructions.Config{Files: []string{"missing.md"}}).Load(context.Background(), ws, "/ws")
	require.Error(t, err, "a file the host names must exist")

	// A working directory outside the root is searched alone.
	files, err = instructions.New(instructions.Config{Root: "/ws/a/b"}).Load(context.Background(), ws, "/ws/other")
	require.NoError(t, err)
	assert.Equal(t, []string{"/ws/other/AGENTS.md"}, paths(files))
}

func TestImports(t *testing.T) {
	ws := workspace(t, map[string]string{
		"/ws/AGENTS.md": strings.Join([]string{
			"Follow @docs/style.md and @docs/style.md again.",
			"Mail me@example.com, ask @alice, see `@docs/code.md` and @docs/missing.md.",
			"```",
			"@docs/fenced.md",
			"```",
			"Personal: @~/.claude/mine.md. Secrets: @~/.ssh/id_rsa. Outside: @../etc/passwd.",
			"Deep: @deep/1.md",
			"Cycle: @cycle/a.md",
		}, "\n"),
		"/ws/docs/style.md":  "Use tabs. See @rules.md",
		"/ws/docs/rules.md":  "Rule one.",
		"/ws/docs/code.md":   "never imported",
		"/ws/docs/fenced.md": "never imported",
		"/ws/deep/1.md":      "d1 @2.md",
		"/ws/deep/2.md":      "d2 @3.md",
		"/ws/deep/3.md":      "d3 @4.md",
		"/ws/deep/4.md":      "d4 @5.md",
		"/ws/deep/5.md":      "d5 @6.md",
		"/ws/deep/6.md":      "d6 @7.md",
		"/ws/deep/7.md":      "d7",
		"/ws/cycle/a.md":     "A imports @b.md",
		"/ws/cycle/b.md":     "B imports @a.md",
		"/ws/CLAUDE.md":      "@AGENTS.md\n@docs/rules.md",
	})
	h := home(t, map[string]string{".claude/mine.md": "my preferences", ".ssh/id_rsa": "SECRET KEY"})
	files, err := instructions.New(instructions.Config{Home: h}).Load(context.Background(), ws, "/ws")
	require.NoError(t, err)
	require.Equal(t, []string{"/ws/AGENTS.md", "/ws/CLAUDE.md"}, paths(files))
	text := files[0].Text

	assert.Contains(t, text, "[Imported from /ws/docs/style.md:]\nUse tabs. See @rules.md\n[Imported from /ws/docs/rules.md:]\nRule one.\n[End of /ws/docs/rules.md.]\n[End of /ws/docs/style.md.]")
	assert.Contains(t, text, "[@docs/style.md: /ws/docs/style.md is included above.]")
	for _, never := range []string{"never imported", "SECRET KEY", "root:"} {
		assert.NotContains(t, text, never)
	}
	assert.Contains(t, text, "me@example.com, ask @alice", "mentions that are not paths stay text")
	assert.Contains(t, text, "@docs/missing.md.", "a missing file stays as written")
	assert.NotContains(t, text, "missing.md was not imported")
	assert.Contains(t, text, "[Imported from "+filepath.Join(h, ".claude", "mine.md")+":]\nmy preferences")
	assert.Contains(t, text, "[@~/.ssh/id_rsa was not imported: "+filepath.Join(h, ".ssh", "id_rsa")+" is outside the user's configuration directories.]")
	assert.Contains(t, text, "[@../etc/passwd was not imported: /etc/passwd is outside the workspace (/ws).]")
	assert.Contains(t, text, "d5 @6.md", "five hops are followed")
	assert.Contains(t, text, "[@6.md was not imported: imports nest at most 5 deep, and this one is deeper (/ws/AGENTS.md → /ws/deep/1.md → /ws/deep/2.md → /ws/deep/3.md → /ws/deep/4.md → /ws/deep/5.md → /ws/deep/6.md).]")
	assert.NotContains(t, text, "d6")
	assert.Contains(t, text, "[@a.md was not imported: it would include /ws/cycle/a.md again, a cycle (/ws/cycle/a.md → /ws/cycle/b.md → /ws/cycle/a.md).]")
	assert.Equal(t, 1, strings.Count(text, "B imports"))

	// CLAUDE.md importing AGENTS.md does not repeat it.
	assert.Equal(t, "Instructions from /ws/CLAUDE.md, for work in /ws and below:\n\n@AGENTS.md\n[@AGENTS.md: /ws/AGENTS.md is included above.]\n@docs/rules.md\n[@docs/rules.md: /ws/docs/rules.md is included above.]", files[1].Text)

	// Imports off.
	files, err = instructions.New(instructions.Config{MaxImportDepth: -1}).Load(context.Background(), ws, "/ws")
	require.NoError(t, err)
	assert.NotContains(t, files[0].Text, "Imported from")
}

func TestUserFilesAreConfined(t *testing.T) {
	h := home(t, map[string]string{
		".claude/CLAUDE.md": "@notes.md @../.ssh/key @/etc/hostname",
		".claude/notes.md":  "user notes",
		".ssh/key":          "SECRET",
	})
	outside := filepath.Join(t.TempDir(), "elsewhere.md")
	require.NoError(t, os.WriteFile(outside, []byte("OUTSIDE"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(h, ".claude", "linked.md")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(h, ".config-fifo"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(h, ".config", "harness"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(h, ".config-fifo"), filepath.Join(h, ".config", "harness", "AGENTS.md")))

	l := instructions.New(instructions.Config{Home: h})
	files, err := l.Load(context.Background(), nil, "/ws")
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Contains(t, files[0].Text, "was not read", "a FIFO is not read (nor waited on)")
	text := files[1].Text
	assert.Contains(t, text, "user notes")
	assert.NotContains(t, text, "SECRET")
	assert.Contains(t, text, "is outside the user's configuration directories")

	l = instructions.New(instructions.Config{UserFiles: []string{filepath.Join(h, ".claude", "linked.md")}})
	files, err = l.Load(context.Background(), nil, "/ws")
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.NotContains(t, files[0].Text, "OUTSIDE", "a link out of the configuration directory is not followed")
	assert.Contains(t, files[0].Text, "is a link to")
}

func TestCaps(t *testing.T) {
	big := strings.Repeat("line of instructions\n", 100) // 2100 bytes
	ws := workspace(t, map[string]string{
		"/ws/AGENTS.md":   big,
		"/ws/a/AGENTS.md": "second file",
		"/ws/a/CLAUDE.md": strings.Repeat("x", 5000),
	})
	files, err := instructions.New(instructions.Config{MaxBytes: 1000, MaxFileBytes: 4096}).Load(context.Background(), ws, "/ws/a")
	require.NoError(t, err)
	require.Equal(t, []string{"/ws/AGENTS.md", "/ws/a/AGENTS.md", "/ws/a/CLAUDE.md"}, paths(files))
	first := files[0]
	assert.True(t, first.Cut)
	assert.EqualValues(t, 2100, first.Bytes)
	assert.Contains(t, first.Text, "line of instructions\n\n[The instructions were cut here: /ws/AGENTS.md holds 2100 bytes with its imports, and only the first")
	assert.Contains(t, first.Text, "at most 1000 bytes of the prompt together. Read the file for the rest.]")
	assert.LessOrEqual(t, len(first.Text), 1000+300, "the text stays near the cap")
	assert.True(t, files[1].Cut, "the files after the cap keep only their notice")
	assert.Equal(t, "Instructions from /ws/a/AGENTS.md, for work in /ws/a and below:\n\n[Left out: instruction files may take at most 1000 bytes of the prompt together, and the files before this one took them all. Read /ws/a/AGENTS.md for its 11 bytes.]\n", files[1].Text)
	files, err = instructions.New(instructions.Config{MaxFileBytes: 4096}).Load(context.Background(), ws, "/ws/a")
	require.NoError(t, err)
	assert.Contains(t, files[2].Text, "This file was not read: it is larger than the 4096 bytes an instruction file may have.")
	for _, f := range files {
		assert.Equal(t, session.DigestText(f.Text), f.Digest)
	}
}

func TestNested(t *testing.T) {
	ws := workspace(t, map[string]string{
		"/ws/AGENTS.md":             "root",
		"/ws/pkg/AGENTS.md":         "pkg rules @../AGENTS.md",
		"/ws/pkg/inner/CLAUDE.md":   "inner rules",
		"/ws/pkg/inner/deep/x.go":   "package deep",
		"/ws/lib/AGENTS.md":         "lib rules",
		"/ws/lib/y.go":              "package lib",
		"/ws/pkg/inner/deep/z.go":   "package deep",
		"/ws/outside-cwd/AGENTS.md": "never",
	})
	l := instructions.New(instructions.Config{})
	prefix, err := l.Load(context.Background(), ws, "/ws")
	require.NoError(t, err)
	q := agent.ContextQuery{Cwd: "/ws", FS: ws, Loaded: prefix}
	files, err := l.Nested(context.Background(), q, []string{"/ws/pkg/inner/deep/x.go", "/ws/lib/y.go", "/ws/pkg/inner/deep/z.go", "/ws/AGENTS.md", "/elsewhere/a.go"})
	require.NoError(t, err)
	assert.Equal(t, []string{"/ws/pkg/AGENTS.md", "/ws/pkg/inner/CLAUDE.md", "/ws/lib/AGENTS.md"}, paths(files))
	assert.Equal(t, "Instructions from /ws/pkg/AGENTS.md, for work in /ws/pkg and below (they refine the instructions given before for that part of the project):\n\npkg rules @../AGENTS.md\n[@../AGENTS.md: /ws/AGENTS.md is included above.]", files[0].Text)

	_, err = instructions.New(instructions.Config{NoNested: true}).Nested(context.Background(), q, []string{"/ws/lib/y.go"})
	require.NoError(t, err)
	files, _ = instructions.New(instructions.Config{NoNested: true}).Nested(context.Background(), q, []string{"/ws/lib/y.go"})
	assert.Empty(t, files)
}

func TestPathPolicyHidesFiles(t *testing.T) {
	ws := workspace(t, map[string]string{
		"/ws/AGENTS.md":         "visible @private/notes.md",
		"/ws/private/notes.md":  "HIDDEN",
		"/ws/private/AGENTS.md": "HIDDEN TOO",
	})
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(private/**)"}, Home: "/home/u"})
	require.NoError(t, err)
	restricted := fs.Restrict(ws, pol.Paths("/ws"))
	files, err := instructions.New(instructions.Config{}).Load(context.Background(), restricted, "/ws/private")
	require.NoError(t, err)
	require.Equal(t, []string{"/ws/AGENTS.md"}, paths(files))
	assert.NotContains(t, files[0].Text, "HIDDEN")
	assert.Contains(t, files[0].Text, "@private/notes.md", "a denied file reads as absent: the mention stays text")
}
