package temporal_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/agent/temporal/internal/effect"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/shell"
)

// moveSession runs a turn whose first step is call on one worker, stops
// that worker, and runs a second turn on another. It returns the model's
// requests: two of the first turn, then two of the second.
func moveSession(t *testing.T, call harness.ToolCall) []*model.Request {
	t.Helper()
	addr, pgBase := servers(t)
	_, store := newSchema(t, pgBase)
	c := dialTemporal(t, addr)
	dir := t.TempDir()
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{call}},
		replay.Response{Text: "started"},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("fx1", "record_effect", map[string]any{})}},
		replay.Response{Text: "recorded"},
	)
	queue := randomName("harness-moved-")
	opts := []agent.Option{
		agent.WithModel(m),
		agent.WithTools(append(shell.Tools(shell.Config{}), effect.Tool(filepath.Join(dir, "effects")))...),
		agent.WithStores(agent.Stores{Sessions: store, Files: fsys}),
	}
	start := func() *temporal.Worker {
		w, err := temporal.NewWorker(temporal.Config{Client: c, TaskQueue: queue, Agent: opts, Store: store})
		require.NoError(t, err)
		require.NoError(t, w.Start())
		return w
	}
	tc := temporal.NewClient(c, temporal.ClientConfig{TaskQueue: queue})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := randomName("s-")

	a := start()
	turn, err := tc.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{}, Prompt: "start it"})
	require.NoError(t, err)
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, "started", res.Answer)
	require.NoError(t, a.Stop()) // what the call started goes with the worker

	b := start()
	defer func() { require.NoError(t, b.Stop()) }()
	turn, err = tc.Start(ctx, temporal.TurnInput{SessionID: id, Prompt: "record it"})
	require.NoError(t, err)
	res, err = turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "recorded", res.Answer)
	assert.Equal(t, b.TaskQueue(), res.Worker)
	reqs := m.Requests()
	require.Len(t, reqs, 4)
	return reqs
}

// mentions reports whether a message of req holds text.
func mentions(req *model.Request, text string) bool {
	for _, msg := range req.Messages {
		if strings.Contains(msg.Text(), text) {
			return true
		}
	}
	return false
}

// A session whose turns move to another worker is told that the shells
// it opened on the first are gone: it is never left to find out.
func TestMovedSessionIsToldItsShellsAreGone(t *testing.T) {
	reqs := moveSession(t, replay.ToolCall("open1", "shell_open", map[string]any{}))
	const gone = "persistent shells opened earlier (shell_open) are gone"
	assert.False(t, mentions(reqs[2], gone), "not before the first step on the new worker")
	assert.True(t, mentions(reqs[3], gone), "after the first step on the new worker, the model knows")
}

// A background job of a session whose turns move to another worker is
// reported lost to its model, as the loop reports one after a restart.
func TestMovedSessionIsToldItsJobsAreLost(t *testing.T) {
	reqs := moveSession(t, replay.ToolCall("bg1", "bash", map[string]any{"command": "sleep 30", "run_in_background": true}))
	assert.False(t, mentions(reqs[1], "(bash) lost"), "the job runs while the first worker does")
	assert.True(t, mentions(reqs[2], "(bash) lost"), "the new worker's first request tells the model")
}
