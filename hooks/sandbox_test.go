package hooks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/hooks"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/shell"
)

// Under the shell tools' sandbox, a hook sees the workspace and not the
// host's private files.
func TestHooksRunUnderTheSandbox(t *testing.T) {
	ws := t.TempDir()
	sb, err := shell.Bubblewrap(shell.BubblewrapConfig{Workspace: ws})
	if err != nil {
		t.Skipf("no bubblewrap sandbox here: %v", err)
	}
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "credentials")
	require.NoError(t, os.WriteFile(secret, []byte("TOPSECRET"), 0o600))
	out := filepath.Join(ws, "seen.txt")
	r := settings(t, ws, hookDoc("UserPromptSubmit", "{ cat "+secret+"; echo HOME=$HOME; echo PROJECT=$CLAUDE_PROJECT_DIR; } > "+out+" 2>&1; echo sandboxed", 0), hooks.Config{Sandbox: sb})
	m := replay.NewScripted(replay.Response{Text: "hi"})
	_, s := newLoop(t, m, r, session.NewMemory(session.StoreConfig{}), ws)
	_, end := run(t, s, "hello")
	require.NoError(t, end.Err)
	data, err := os.ReadFile(out)
	require.NoError(t, err, "the hook ran and wrote in the workspace")
	assert.NotContains(t, string(data), "TOPSECRET", "the host's files outside the workspace are hidden")
	assert.Contains(t, string(data), "HOME=/tmp")
	assert.Contains(t, string(data), "PROJECT="+ws)
	assert.Contains(t, m.Requests()[0].Messages[1].Text(), "sandboxed")
}
