package lsp

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
)

// requireGopls skips the test when gopls is not installed.
func requireGopls(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Skip("gopls not installed (go install golang.org/x/tools/gopls@v0.23.0)")
	}
}

// workspace is a real directory with the file tools over it, dispatched
// through a middleware as the loop dispatches.
type workspace struct {
	t    testing.TB
	dir  string
	fsys fs.FileSystem
	env  *tools.Env
	reg  *tools.Registry
	mw   tools.Middleware
	n    int
}

func newWorkspace(t testing.TB, files map[string]string) *workspace {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	f, err := fslocal.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return &workspace{t: t, dir: dir, fsys: f, env: &tools.Env{SessionID: "s", Cwd: f.Root(), FS: f, State: &tools.State{}, Logger: slog.New(slog.DiscardHandler)}}
}

// use sets the middleware calls go through.
func (w *workspace) use(mw tools.Middleware) {
	reg, err := tools.NewRegistry(files.Read(files.Config{}), files.Write(files.Config{}), files.Edit(files.Config{}))
	require.NoError(w.t, err)
	w.reg, w.mw = reg, mw
}

func (w *workspace) call(name string, args map[string]any) *harness.ToolResult {
	w.t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(w.t, err)
	w.n++
	c := &tools.Call{ID: "c" + string(rune('a'+w.n%26)), Name: name, Arguments: string(raw), Step: 1, Env: w.env}
	if res := w.reg.Check(c); res != nil {
		return res
	}
	h := toolexec.Executor()
	if w.mw != nil {
		h = w.mw(h)
	}
	return h(context.Background(), c)
}

func (w *workspace) read(name string) *harness.ToolResult {
	return w.call("read", map[string]any{"file_path": name})
}

func (w *workspace) edit(name, old, new string) *harness.ToolResult {
	return w.call("edit", map[string]any{"file_path": name, "old_string": old, "new_string": new})
}

func (w *workspace) write(name, content string) *harness.ToolResult {
	return w.call("write", map[string]any{"file_path": name, "content": content})
}

func (w *workspace) file(name string) string {
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	require.NoError(w.t, err)
	return string(b)
}

func newManager(t testing.TB, cfg Config) *Manager {
	t.Helper()
	m, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}
