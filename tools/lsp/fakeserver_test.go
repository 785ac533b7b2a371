package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// fake is a server entry that runs this test binary as a fake server in
// the given mode (see TestMain).
func fake(t testing.TB, mode string) (Server, string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return Server{Name: "fake", Command: []string{exe}, Languages: map[string]string{".txt": "plaintext"}}, "HARNESS_LSP_FAKE=" + mode
}

// TestHungServer: a server that stops answering costs an edit at most
// the wait, and the edit is done and says it was not checked.
func TestHungServer(t *testing.T) {
	leakcheck.Check(t)
	srv, env := fake(t, "hang")
	m := newManager(t, Config{Servers: []Server{srv}, Env: []string{env}, Wait: 300 * time.Millisecond, StartWait: 5 * time.Second, MaxRestarts: 1})
	w := newWorkspace(t, map[string]string{"a.txt": "one\n"})
	w.use(m.Middleware())
	w.read("a.txt")
	var pids []int
	for i := 0; i < 8; i++ {
		text := strings.Repeat("x", i+1) + "\n"
		res := w.write("a.txt", text)
		require.False(t, res.IsError, res.Text())
		assert.Equal(t, text, w.file("a.txt"), "the change is made whatever the server does")
		note := Note(res)
		switch {
		case i < 6:
			assert.Equal(t, "Diagnostics (fake): the server did not report within 300ms; this change was not checked. Build or test to check it.", note, "write %d", i)
			pids = append(pids, serverPIDOrZero(m, "fake"))
		case i == 6:
			// Three unanswered requests in a row restart the server (at
			// write 3); after MaxRestarts restarts it is given up.
			assert.Equal(t, "Diagnostics (fake): unavailable: fake stopped answering 2 times; it is not used for this workspace any more. This change was not checked.", note)
		default:
			assert.Empty(t, note, "said once")
		}
	}
	assert.Equal(t, pids[0], pids[2])
	assert.NotEqual(t, pids[2], pids[3], "restarted after three unanswered requests")
	assert.Equal(t, pids[3], pids[5])
	require.NoError(t, m.Close())
}

// TestDeafServer: a server that stops reading its input does not block
// an edit once the pipe to it is full.
func TestDeafServer(t *testing.T) {
	srv, env := fake(t, "deaf")
	m := newManager(t, Config{Servers: []Server{srv}, Env: []string{env}, Wait: 300 * time.Millisecond})
	big := strings.Repeat("a line of text\n", 200_000) // 3 MiB: more than a pipe holds
	w := newWorkspace(t, map[string]string{"a.txt": big})
	w.use(m.Middleware())
	w.read("a.txt")
	res := w.write("a.txt", big+"more\n")
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, Note(res), "Diagnostics (fake): ")
	assert.Contains(t, Note(res), "this change was not checked")
	assert.Equal(t, big+"more\n", w.file("a.txt"))
}

// TestServerHungAtStart: a server that never answers initialize is
// stopped after StartWait, and the edit says why it was not checked.
func TestServerHungAtStart(t *testing.T) {
	leakcheck.Check(t)
	srv, env := fake(t, "hang-init")
	// Wait is long so that the write waits out the start the read warmed
	// (which holds the server for StartWait) even on a loaded machine,
	// rather than finding the server busy.
	m := newManager(t, Config{Servers: []Server{srv}, Env: []string{env}, Wait: 3 * time.Second, StartWait: 300 * time.Millisecond, MaxRestarts: 1})
	w := newWorkspace(t, map[string]string{"a.txt": "one\n"})
	w.use(m.Middleware())
	w.read("a.txt")
	res := w.write("a.txt", "two\n")
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, Note(res), "Diagnostics (fake): unavailable: fake did not initialize: context deadline exceeded")
	assert.Equal(t, "two\n", w.file("a.txt"))
	require.NoError(t, m.Close())
}

// TestPushedDiagnostics: a server without pull diagnostics is read from
// what it publishes, versions included.
func TestPushedDiagnostics(t *testing.T) {
	srv, env := fake(t, "echo")
	m := newManager(t, Config{Servers: []Server{srv}, Env: []string{env}})
	w := newWorkspace(t, map[string]string{"a.txt": "fine\nERROR old\n", "b.txt": "ERROR elsewhere\n"})
	w.use(m.Middleware())
	w.read("a.txt")
	res := w.edit("a.txt", "fine", "ERROR new")
	assert.Equal(t, "Diagnostics (fake): 1 new problem after this change:\na.txt:1:1: error: found ERROR new (fake)", Note(res))
	res = w.edit("a.txt", "ERROR new\nERROR old", "ok")
	assert.Equal(t, "Diagnostics (fake): no new problems after this change. (2 earlier problems are gone.)", Note(res))
	res = w.edit("a.txt", "ok", "ok too")
	assert.Equal(t, "Diagnostics (fake): no new problems after this change.", Note(res), "no publish for an unchanged file is an answer")
	res = w.edit("a.txt", "ok too", "ERROR \x1b[2J\x07 bell")
	assert.Equal(t, "Diagnostics (fake): 1 new problem after this change:\na.txt:1:1: error: found ERROR [2J bell (fake)", Note(res), "control characters do not reach the terminal")
}

// TestServerEnvironment: a server does not get variables that look like
// credentials, unless passed by name.
func TestServerEnvironment(t *testing.T) {
	srv, env := fake(t, "env")
	out := filepath.Join(t.TempDir(), "env")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-secret")
	t.Setenv("HARNESS_TEST_PLAIN", "plain")
	m := newManager(t, Config{Servers: []Server{srv}, Env: []string{env, "HARNESS_LSP_FAKE_OUT=" + out}, PassEnv: []string{"GITHUB_*"}})
	w := newWorkspace(t, map[string]string{"a.txt": "x\n"})
	w.use(m.Middleware())
	w.read("a.txt")
	w.write("a.txt", "y\n")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	vars := strings.Split(string(b), "\n")
	assert.NotContains(t, vars, "OPENAI_API_KEY=sk-secret")
	assert.Contains(t, vars, "GITHUB_TOKEN=ghp-secret")
	assert.Contains(t, vars, "HARNESS_TEST_PLAIN=plain")
}

// TestNoServerFromTheWorkspace: a server program inside the workspace is
// never run, named by path or found on a PATH that leads there.
func TestNoServerFromTheWorkspace(t *testing.T) {
	w := newWorkspace(t, map[string]string{"a.txt": "x\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\ntouch " + marker + "\nsleep 5\n"
	bin := filepath.Join(w.dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "evil-ls"), []byte(script), 0o755))
	outside := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(bin, "evil-ls"), filepath.Join(outside, "linked-ls")))

	for _, cmd := range [][]string{{filepath.Join(bin, "evil-ls")}, {"evil-ls"}, {"linked-ls"}, {"bin/evil-ls"}} {
		t.Setenv("PATH", bin+string(os.PathListSeparator)+outside+string(os.PathListSeparator)+os.Getenv("PATH"))
		m := newManager(t, Config{Servers: []Server{{Name: "evil", Command: cmd, Languages: map[string]string{".txt": "plaintext"}}}})
		w.use(m.Middleware())
		w.read("a.txt")
		res := w.write("a.txt", "y\n")
		require.False(t, res.IsError, res.Text())
		note := Note(res)
		assert.Contains(t, note, "Diagnostics (evil): unavailable: ", cmd)
		if cmd[0] == "bin/evil-ls" {
			assert.Contains(t, note, "is a relative path")
		} else {
			assert.Contains(t, note, "inside the workspace: programs from the workspace are never run", cmd)
		}
		// Said once; later changes pass quietly.
		w.read("a.txt")
		res = w.write("a.txt", "z\n")
		assert.Empty(t, Note(res))
		require.NoError(t, m.Close())
	}
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "the workspace's program never ran")
}

// TestMissingServerIsSilent: a server that is not installed adds nothing.
func TestMissingServerIsSilent(t *testing.T) {
	m := newManager(t, Config{Servers: []Server{{Name: "nope", Command: []string{"no-such-language-server-xyz"}, Languages: map[string]string{".txt": "plaintext"}}}})
	w := newWorkspace(t, map[string]string{"a.txt": "x\n"})
	w.use(m.Middleware())
	w.read("a.txt")
	res := w.write("a.txt", "y\n")
	require.False(t, res.IsError)
	assert.Len(t, res.Content, 1)
}
