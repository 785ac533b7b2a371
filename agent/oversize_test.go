package agent_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/spillwriter/noticetest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

type bigIn struct {
	Bytes  int `json:"bytes"`
	Render int `json:"render,omitempty"`
}

// bigOutput returns a text of the asked size, marked at both ends, and
// optionally a terminal render with an output of the other size.
func bigOutput() tools.Tool {
	return tools.Define(tools.Spec{Name: "big", Description: "big", NeverSpill: true},
		func(ctx context.Context, call *tools.Call, in bigIn) (*harness.ToolResult, error) {
			res := harness.TextResult(bigText(in.Bytes))
			if in.Render > 0 {
				exit := 0
				res.Render = &harness.Render{Kind: harness.RenderTerminal, Title: "$ big",
					Terminal: &harness.Terminal{Command: "big", Output: bigText(in.Render), ExitCode: &exit, Status: "exited"}}
			}
			res.Files = []harness.FileAccess{{Op: harness.FileRead, Path: "/w/big.txt", Version: "v1", Complete: true}}
			return res, nil
		})
}

func bigText(n int) string {
	const head, tail = "HEAD-MARK\n", "TAIL-MARK\n"
	if n < len(head)+len(tail) {
		return strings.Repeat("x", n)
	}
	return head + strings.Repeat("line of output\n", (n-len(head)-len(tail))/15) + tail
}

// loggedResult returns the one logged tool result of a session.
func loggedResult(t *testing.T, store session.Store, id string) *session.ToolFinished {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	assert.Empty(t, tr.Warnings)
	var out *session.ToolFinished
	for _, e := range tr.Events {
		if f, ok := e.Data.(*session.ToolFinished); ok {
			require.Nil(t, out, "one result")
			out = f
		}
	}
	require.NotNil(t, out)
	return out
}

func TestOversizedResultSavedWhole(t *testing.T) {
	leakcheck.Check(t) // the save runs in a goroutine of its own
	ctx := context.Background()
	const maxLine = 256 << 10
	store := session.NewMemory(session.StoreConfig{MaxLineSize: maxLine})
	out, err := spill.NewMemory(spill.StoreConfig{})
	require.NoError(t, err)
	model := replay.NewScripted(replay.Call(replay.ToolCall("c1", "big", bigIn{Bytes: 600 << 10})), replay.Response{Text: "done"})
	_, s := newSession(t, agent.WithModel(model), agent.WithTools(bigOutput()), agent.WithStores(agent.Stores{Sessions: store, Output: out}))
	evs, end, err := collect(t, s, ctx, "make output")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "the turn goes on")

	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 1)
	text := ends[0].Result.Text()
	assert.True(t, strings.HasPrefix(text, "HEAD-MARK\n"), "the head is kept")
	assert.Contains(t, text, "TAIL-MARK\n", "the tail is kept")
	assert.Contains(t, text, "The whole output is saved at spill://")
	assert.Contains(t, text, "This result is a preview: the whole result is more than the 262144 bytes the session log holds in one event.")
	assert.Less(t, len(text), 33_000, "a preview the size the spill policy shows")

	// The whole text is in the output store, under the locator shown.
	loc := noticetest.Parse(t, text).Locator
	rc, err := out.Open(ctx, loc)
	require.NoError(t, err)
	whole, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.Equal(t, bigText(600<<10), string(whole))
	n, err := out.Expire(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the one output saved is the one shown")

	// What is logged is what the host got and what the model saw next.
	logged := loggedResult(t, store, s.Header().ID)
	assert.Equal(t, text, logged.Result.Text())
	assert.Equal(t, []harness.FileAccess{{Op: harness.FileRead, Path: "/w/big.txt", Version: "v1", Complete: true}}, logged.Result.Files, "file records are kept while they fit")
	assert.Equal(t, text, resultText(lastResults(model.Requests()[1], 1)[0]))
}

func TestOversizedResultWithoutOutputStore(t *testing.T) {
	ctx := context.Background()
	const maxLine = 64 << 10
	store := session.NewMemory(session.StoreConfig{MaxLineSize: maxLine})
	model := replay.NewScripted(replay.Call(replay.ToolCall("c1", "big", bigIn{Bytes: 200 << 10, Render: 200 << 10})), replay.Response{Text: "done"})
	_, s := newSession(t, agent.WithModel(model), agent.WithTools(bigOutput()), agent.WithStores(agent.Stores{Sessions: store}))
	evs, end, err := collect(t, s, ctx, "make output")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	res := ofType[*agent.ToolCallEnd](evs)[0].Result
	text := res.Text()
	assert.True(t, strings.HasPrefix(text, "HEAD-MARK\n"))
	assert.Contains(t, text, "TAIL-MARK\n")
	assert.Contains(t, text, "The whole output could not be saved (no output store is configured), so this part cannot be read back.")
	assert.Contains(t, text, "This result is a preview")
	assert.LessOrEqual(t, len(text), maxLine/8+200, "cut to fit the log line")

	// The render is slimmed to fit too: the end of the terminal output.
	require.NotNil(t, res.Render)
	require.NotNil(t, res.Render.Terminal)
	assert.Equal(t, "big", res.Render.Terminal.Command)
	assert.Equal(t, 0, *res.Render.Terminal.ExitCode)
	assert.True(t, strings.HasSuffix(res.Render.Terminal.Output, "TAIL-MARK\n"))
	assert.LessOrEqual(t, len(res.Render.Terminal.Output), maxLine/8)

	logged := loggedResult(t, store, s.Header().ID)
	assert.Equal(t, text, logged.Result.Text())
	assert.Equal(t, res.Render, logged.Result.Render)
}

func TestOversizedUserMessageFailsTheTurn(t *testing.T) {
	ctx := context.Background()
	store := session.NewMemory(session.StoreConfig{MaxLineSize: 4096})
	model := replay.NewScripted(replay.Response{Text: "small answer"})
	_, s := newSession(t, agent.WithModel(model), agent.WithStores(agent.Stores{Sessions: store}))
	_, end, err := collect(t, s, ctx, strings.Repeat("too long ", 1000))
	assert.Equal(t, session.ReasonError, end.Reason)
	require.ErrorIs(t, err, harness.CodeTooLarge)
	assert.Contains(t, err.Error(), "agent: logging the user message")
	assert.Contains(t, err.Error(), "more than the log's maximum line size of 4096 bytes")
	assert.Empty(t, model.Requests(), "the model is not called")

	_, end, err = collect(t, s, ctx, "short")
	require.NoError(t, err, "the session stays usable")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	for _, e := range tr.Events {
		if u, ok := e.Data.(*session.UserMessage); ok {
			assert.Equal(t, "short", u.Content[0].Text, "the refused message is not logged")
		}
	}
}
