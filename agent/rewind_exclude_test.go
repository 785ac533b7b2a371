package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRewindKeepsTheHostsExclude: with path rules in the permission
// policy, the host's own checkpoint.Config.Exclude still leaves its paths
// out, so a rewind neither records nor restores them.
func TestRewindKeepsTheHostsExclude(t *testing.T) {
	e := newRewindEnv(t, map[string]string{"a.go": "package a\n", "notes.txt": "mine\n", "secrets/k": "key\n"})
	ws, err := fslocal.New(e.dir)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	loop, err := agent.New(
		agent.WithModel(e.model),
		agent.WithStores(agent.Stores{Sessions: e.store, Files: ws, Attachments: e.atts}),
		agent.WithTools(slices.Concat(files.Tools(files.Config{}), shell.Tools(shell.Config{}))...),
		agent.WithPermissions(policy(t, permission.Rules{Deny: []string{"Read(./secrets/**)"}, Mode: permission.ModeBypass})),
		agent.WithCheckpoints(checkpoint.Config{Exclude: func(rel string, isDir bool) bool { return rel == "notes.txt" }}),
	)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	e.loop = loop
	s := e.session(t)
	e.turn(t, s, "edit both", []harness.ToolCall{toolCall("b1", "bash", map[string]any{"command": "echo 'package a // changed' > a.go && echo agent > notes.txt"})})
	_, err = s.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{Scope: agent.RewindFiles})
	require.NoError(t, err)
	a, _ := os.ReadFile(filepath.Join(e.dir, "a.go"))
	assert.Equal(t, "package a\n", string(a), "a.go is checkpointed and restored")
	n, _ := os.ReadFile(filepath.Join(e.dir, "notes.txt"))
	assert.Equal(t, "agent\n", string(n), "notes.txt is the host's Exclude: never recorded, never restored")
}
