package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// requestTools returns the names of the tools a request offers.
func requestTools(t *testing.T, c captured) []string {
	t.Helper()
	var names []string
	for _, tl := range c.JSON(t)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	return names
}

// systemText returns the request's system message.
func systemText(t *testing.T, c captured) string {
	t.Helper()
	msgs := c.Messages(t)
	require.NotEmpty(t, msgs)
	s, _ := msgs[0]["content"].(string)
	return s
}

// tree writes files (slash paths, directories made) into a new
// workspace.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	}
	return dir
}

// The web tools are offered by default (deferred: listed by load_tools):
// web_fetch always, web_search only with a Brave key; -web=false offers
// neither.
func TestWebToolsWired(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, say("a"), say("b"), say("c"))
	ws := workspace(t, nil)
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runCLI(t, p.env(braveKeyEnv+"=k"), "", "-C", ws, "-sessions", t.TempDir(), "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runCLI(t, p.env(braveKeyEnv+"=k"), "", "-C", ws, "-sessions", t.TempDir(), "-web=false", "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	reqs := p.Requests()
	require.Len(t, reqs, 3)

	assert.Contains(t, offeredTools(t, reqs[0]), "web_fetch")
	assert.NotContains(t, offeredTools(t, reqs[0]), "web_search")
	assert.Contains(t, systemText(t, reqs[0]), "with web_fetch")
	assert.NotContains(t, systemText(t, reqs[0]), "web_search")

	assert.Contains(t, offeredTools(t, reqs[1]), "web_search")
	assert.Contains(t, systemText(t, reqs[1]), "with web_search first")

	assert.NotContains(t, offeredTools(t, reqs[2]), "web_fetch")
	assert.NotContains(t, offeredTools(t, reqs[2]), "web_search")
	assert.NotContains(t, systemText(t, reqs[2]), "web_fetch")
}

// An edit that breaks a Go file: the model reads the new problem in the
// edit's result, the card shows it under the diff, and a problem that
// was there before is not reported.
func TestDiagnosticsWired(t *testing.T) {
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Skip("gopls is not on PATH: install it with go install golang.org/x/tools/gopls@latest")
	}
	leakcheck.Check(t)
	ws := tree(t, map[string]string{
		"go.mod":  "module example.com/demo\n\ngo 1.22\n",
		"main.go": buggy,
		"old.go":  "package main\n\nvar old int = \"pre-existing\"\n",
	})
	p := newProvider(t,
		call(toolCall(0, "c1", "read", map[string]any{"file_path": "main.go"})),
		call(toolCall(0, "c2", "edit", map[string]any{
			"file_path": "main.go", "old_string": `return "Hello, wrold!"`, "new_string": `return undefinedName`,
		})),
		say("done"))
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-diagnostics", "-sandbox", "full-access", "break it")
	require.Equal(t, exitOK, r.code, r.stderr)
	reqs := p.Requests()
	require.Len(t, reqs, 3)
	sent := reqs[2].Text(t)
	assert.Contains(t, sent, "Diagnostics (gopls): 1 new problem")
	assert.Contains(t, sent, "undefined: undefinedName")
	assert.NotContains(t, sent, "pre-existing", "a problem from before the edit is not new")
	assert.Contains(t, r.stdout, "● Edit main.go  +1 -1")
	assert.Contains(t, r.stdout, "  Diagnostics (gopls): 1 new problem after this change:\n  main.go:7:9: error: undefined: undefinedName")
}

// The project's instruction files, skills and hooks: one banner line
// says what was found, the model reads the instructions and the skills'
// list, the skill tool is offered, a PreToolUse hook blocks a command
// and its systemMessage is shown, and /context lists all three.
func TestProjectContextWired(t *testing.T) {
	leakcheck.Check(t)
	ws := tree(t, map[string]string{
		"AGENTS.md":                             "Always answer in haiku.\n",
		".claude/skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n\nRun git log and group the changes.\n",
		".harness/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
			{"type": "command", "command": "echo '{\"systemMessage\": \"checked by the project hook\"}'"},
			{"type": "command", "command": "grep -q forbidden && { echo 'forbidden by the project' >&2; exit 2; }; exit 0"}]}]}}`,
	})
	p := newProvider(t,
		call(toolCall(0, "c1", "bash", map[string]any{"command": "echo forbidden"})),
		say("ok"))
	r := runCLI(t, p.env(), "/context\nrun it\n/context\n", "-C", ws, "-sessions", t.TempDir(), "-sandbox", "full-access")
	require.Equal(t, exitOK, r.code, r.stderr)

	assert.Contains(t, r.stdout, "context: AGENTS.md · 1 skill · 2 hooks\n")
	assert.Contains(t, r.stdout, "⌁ context loaded: AGENTS.md\n")
	assert.Contains(t, r.stdout, "⚑ PreToolUse hook: checked by the project hook")
	assert.Contains(t, r.stdout, "skills: 1  release-notes")
	assert.Contains(t, r.stdout, "hooks: 2\n  PreToolUse [Bash]  echo")
	// Before the first turn the session holds no context yet; after it,
	// the instructions and the skills' list.
	assert.Contains(t, r.stdout, "context files: 0")
	assert.Regexp(t, `context files: 2\n  AGENTS.md  \(instructions, \d+ bytes\)\n  skills  \(skills, \d+ bytes\)`, r.stdout)

	reqs := p.Requests()
	require.Len(t, reqs, 2, "commands never reach the model")
	first := reqs[0].Text(t)
	assert.Contains(t, first, "Always answer in haiku.")
	assert.Contains(t, first, "Write release notes from the git log.")
	assert.NotContains(t, first, "group the changes", "a skill's body is loaded on demand")
	assert.Contains(t, offeredTools(t, reqs[0]), "skill")
	assert.Contains(t, reqs[1].Text(t), "forbidden by the project")
	assert.NotContains(t, reqs[1].Text(t), `forbidden\n`, "the blocked command did not run")
}

// -no-instructions, -no-skills and -no-hooks turn each off.
func TestProjectContextOff(t *testing.T) {
	leakcheck.Check(t)
	ws := tree(t, map[string]string{
		"AGENTS.md":                             "Always answer in haiku.\n",
		".claude/skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n\nbody\n",
		".harness/settings.json":                `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from-the-hook"}]}]}}`,
	})
	p := newProvider(t, say("a"), say("b"))
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-no-instructions", "-no-skills", "-no-hooks", "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "context:")
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "context: AGENTS.md · 1 skill · 1 hook\n")

	reqs := p.Requests()
	off, on := reqs[0].Text(t), reqs[1].Text(t)
	assert.NotContains(t, off, "haiku")
	assert.NotContains(t, off, "Write release notes")
	assert.NotContains(t, off, "from-the-hook")
	assert.NotContains(t, offeredTools(t, reqs[0]), "skill")
	assert.Contains(t, on, "haiku")
	assert.Contains(t, on, "from-the-hook", "UserPromptSubmit output is added as context")
	assert.True(t, strings.Contains(on, "release-notes"))
}
