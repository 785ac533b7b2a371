//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// TestHostileConfigFiles: a .harness/settings.json or .mcp.json that is a
// link to /dev/zero, a FIFO nothing writes to, a directory, or JSON cut
// short makes the coder stop (settings) or skip the servers (.mcp.json)
// at once, naming the file; nothing hangs or grows without end.
func TestHostileConfigFiles(t *testing.T) {
	leakcheck.Check(t)
	makers := map[string]func(path string) error{
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":              func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"directory":         func(p string) error { return os.Mkdir(p, 0o755) },
		"cut short":         func(p string) error { return os.WriteFile(p, []byte(`{"permissions": {"allow": ["Read"]`), 0o644) },
	}
	want := map[string]string{
		"link to /dev/zero": "(a symbolic link to /dev/zero) is a character device, not a regular file",
		"fifo":              "is a named pipe (FIFO)",
		"directory":         "is a directory",
		"cut short":         "incomplete JSON at byte 34",
	}
	for name, mk := range makers {
		t.Run("settings "+name, func(t *testing.T) {
			ws := workspace(t, nil)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".harness"), 0o755))
			path := filepath.Join(ws, ".harness", "settings.json")
			require.NoError(t, mk(path))
			p := newProvider(t, say("ok"))
			r := within(t, func() result {
				return runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-p", "x")
			})
			assert.NotEqual(t, exitOK, r.code)
			assert.Contains(t, r.stderr, path)
			assert.Contains(t, r.stderr, want[name])
		})
		t.Run("mcp "+name, func(t *testing.T) {
			ws := workspace(t, nil)
			path := filepath.Join(ws, ".mcp.json")
			require.NoError(t, mk(path))
			p := newProvider(t, say("ok"))
			r := within(t, func() result {
				return runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-p", "x")
			})
			require.Equal(t, exitOK, r.code, r.stderr)
			out := r.stdout + r.stderr
			assert.Contains(t, out, "(MCP servers skipped)")
			if name == "cut short" {
				assert.Contains(t, out, "the configuration is not valid JSON: incomplete JSON at byte 34")
			} else {
				assert.Contains(t, out, path+" ")
				assert.Contains(t, out, want[name])
			}
		})
	}
}

// within runs f, failing the test if it takes more than a minute (a
// loaded machine is slow; only a hang takes that long).
func within(t *testing.T, f func() result) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- f() }()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Fatal("the coder hangs")
		return result{}
	}
}
