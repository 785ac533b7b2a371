package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/files"
)

// A file read in one process can be edited after a resume in another,
// if it did not change: the ledger comes back from the log. A file that
// changed since is refused as stale, as in the process that read it.
func TestResumedSessionEditsWhatItRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("hello\n"), 0o644))
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	defer fsys.Close()
	store := sessionStore()
	opts := func(m *replay.Model) []agent.Option {
		return []agent.Option{agent.WithModel(m), agent.WithTools(files.Read(files.Config{}), files.Edit(files.Config{})),
			agent.WithStores(agent.Stores{Sessions: store, Files: fsys})}
	}
	read := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("r1", "read", map[string]any{"file_path": "a.txt"}),
			replay.ToolCall("r2", "read", map[string]any{"file_path": "b.txt"}),
		}},
		replay.Response{Text: "read them"},
	)
	loop1, err := agent.New(opts(read)...)
	require.NoError(t, err)
	s1, err := loop1.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	_, end, err := collect(t, s1, ctx, "read a and b")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	id := s1.Header().ID
	require.NoError(t, loop1.Close())

	// b.txt changes behind the session's back.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("changed\n"), 0o644))

	edit := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("e1", "edit", map[string]any{"file_path": "a.txt", "old_string": "hello", "new_string": "bye"}),
			replay.ToolCall("e2", "edit", map[string]any{"file_path": "b.txt", "old_string": "changed", "new_string": "bye"}),
		}},
		replay.Response{Text: "edited"},
	)
	loop2, err := agent.New(opts(edit)...)
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(ctx, id)
	require.NoError(t, err)
	_, end, err = collect(t, s2, ctx, "edit them")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	res := lastResults(edit.Requests()[1], 2)
	require.Len(t, res, 2)
	assert.False(t, res[0].IsError, "a.txt was read and did not change: %s", resultText(res[0]))
	assert.True(t, res[1].IsError, "b.txt changed since it was read")
	assert.Equal(t, harness.CodeStale, res[1].Code)
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "bye\n", string(got))
	got, err = os.ReadFile(filepath.Join(dir, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(got))
}
