package shell

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// TestThroughAgentLoop drives the tools from a scripted model through the
// real loop: state persists across steps, one-shot bash does not share
// it, the shell's settings are in the session log, and closing the loop
// stops what the shell left running.
func TestThroughAgentLoop(t *testing.T) {
	leakcheck.Check(t)
	tag := shelltest.SleepTag(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))

	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "shell_open", map[string]any{})),
		replay.Call(replay.ToolCall("c2", "shell_send", map[string]any{"session_id": "sh1", "command": "cd sub && export GREETING=hi"})),
		replay.Call(replay.ToolCall("c3", "shell_send", map[string]any{"session_id": "sh1", "command": `echo "$GREETING from $PWD"; sleep ` + tag + ` &`})),
		replay.Call(replay.ToolCall("c4", "bash", map[string]any{"command": `echo "${GREETING-unset} in $PWD"`})),
		replay.Response{Text: "done"},
	)
	store := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(Tools(Config{})...), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.NewSession(context.Background(), session.Header{Cwd: root})
	require.NoError(t, err)
	var results []string
	for ev, err := range sess.Run(context.Background(), "use a shell") {
		require.NoError(t, err)
		if end, ok := ev.(*agent.ToolCallEnd); ok {
			require.False(t, end.Result.IsError, end.Result.Text())
			results = append(results, end.Result.Text())
		}
	}
	require.Len(t, results, 4)
	sub := filepath.Join(root, "sub")
	assert.Contains(t, results[0], "Opened shell sh1")
	assert.Equal(t, "[cwd "+sub+"]", shelltest.LastLine(results[1]))
	assert.True(t, strings.HasPrefix(results[2], "hi from "+sub+"\n"), results[2])
	assert.True(t, strings.HasPrefix(results[3], "unset in "+root+"\n"), "one-shot bash starts fresh in the session's directory: %s", results[3])

	tr, err := store.Load(context.Background(), sess.Header().ID)
	require.NoError(t, err)
	var recs, sandboxes []*session.ToolRecord
	for _, e := range tr.Events {
		if r, ok := e.Data.(*session.ToolRecord); ok {
			if r.Name == "sandbox" {
				sandboxes = append(sandboxes, r)
				continue
			}
			recs = append(recs, r)
		}
	}
	require.Len(t, sandboxes, 1, "bash records the sandbox in force once")
	assert.Equal(t, "bash", sandboxes[0].Tool)
	var rec sandboxRecord
	require.NoError(t, json.Unmarshal(sandboxes[0].Data, &rec))
	assert.Equal(t, "none: commands run unconfined", rec.Sandbox)
	assert.Contains(t, rec.Environment, "without variables that look like credentials", "the log says what commands get of the environment")
	require.Len(t, recs, 1)
	assert.Equal(t, "shell_open", recs[0].Name)
	assert.Equal(t, "c1", recs[0].CallID)
	assert.Contains(t, string(recs[0].Data), `"PAGER=cat"`)
	assert.Contains(t, string(recs[0].Data), `"dir":"`+root+`"`)

	// The background sleep outlives the turn. The shell forks it and
	// returns at once, so it may not have become `sleep` yet: wait for it.
	shelltest.RequireTagged(t, tag)
	require.NoError(t, loop.Close())
	shelltest.RequireNoTagged(t, tag)
}
