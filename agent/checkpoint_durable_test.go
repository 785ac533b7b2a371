package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/sessiontest"
	"github.com/go-harness/harness/tools/files"
)

var _ checkpoint.Stager = (*sessiontest.PowerLossAttachments)(nil)

// The checkpoints a turn takes may wait for their sync, but a finished
// turn's are durable: after a power loss, every checkpoint its log names
// loads, with every content it kept. That holds for a turn that changed
// files (its end takes a checkpoint) and for one that did not (its end
// only syncs what its start staged).
func TestFinishedTurnCheckpointsSurvivePowerLoss(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	writeFiles(t, dir, map[string]string{"main.go": "package main\n", "notes.txt": "one\n"})
	ps := sessiontest.NewPowerLossAttachments()
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	model := replay.NewScripted()
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithStores(agent.Stores{Sessions: store, Files: fsys}),
		agent.WithTools(files.Tools(files.Config{})...),
		agent.WithCheckpoints(checkpoint.Config{Store: ps}),
	)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: dir})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })

	// checkAll loads every checkpoint of the log from what survived.
	checkAll := func(wantPoints int) {
		t.Helper()
		tr, err := store.Load(context.Background(), s.Header().ID)
		require.NoError(t, err)
		pts := checkpoint.Points(tr.Events)
		require.Len(t, pts, wantPoints)
		ws, err := checkpoint.Open(dir, checkpoint.Config{Store: ps})
		require.NoError(t, err)
		for _, pt := range pts {
			tree, err := ws.Load(context.Background(), pt.Checkpoint.Manifest)
			require.NoError(t, err, "checkpoint %d (%s) lost its manifest", pt.Seq, pt.Checkpoint.Kind)
			for _, e := range tree.Entries() {
				if e.Kept {
					_, err := ws.Content(context.Background(), &e)
					require.NoError(t, err, "checkpoint %d (%s) lost the content of %s", pt.Seq, pt.Checkpoint.Kind, e.Path)
				}
			}
		}
	}

	// A turn that edits: start, before the call, end.
	model.Push(replay.Call(toolCall("r1", "read", map[string]any{"file_path": "main.go"})))
	model.Push(replay.Call(toolCall("w1", "write", map[string]any{"file_path": "main.go", "content": "package main\n\nfunc main() {}\n"})))
	model.Push(replay.Response{Text: "done"})
	_, end, err := collect(t, s, context.Background(), "change main.go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Zero(t, ps.Unsynced(), "the turn's end synced what its checkpoints staged")
	ps.PowerLoss()
	checkAll(3)

	// Changed between turns, outside the agent: the next turn's first
	// checkpoint stores it; the turn changes nothing, so its end takes
	// no checkpoint, and still syncs.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("two\n"), 0o644))
	model.Push(replay.Response{Text: "nothing to do"})
	_, end, err = collect(t, s, context.Background(), "anything?")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Zero(t, ps.Unsynced(), "a turn that changed nothing synced what its start staged")
	ps.PowerLoss()
	checkAll(4)
}
