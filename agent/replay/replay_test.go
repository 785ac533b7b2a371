package replay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type in struct {
	Text string `json:"text"`
}

func echo(prefix string) tools.Tool {
	return tools.Define(tools.Spec{Name: "echo", Description: "Echo text back."},
		func(ctx context.Context, call *tools.Call, in in) (*harness.ToolResult, error) {
			return harness.TextResult(prefix + in.Text), nil
		})
}

// record runs a two-turn session with a scripted model and returns its
// transcript and the events the host saw.
func record(t *testing.T) (*session.Transcript, [][]string) {
	t.Helper()
	store := session.NewMemory(session.StoreConfig{})
	m := replay.NewScripted(
		replay.Response{Reasoning: "plan", ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", map[string]any{"text": "a"}), replay.ToolCall("c2", "echo", map[string]any{"text": "b"})},
			Usage: &harness.Usage{InputTokens: 50, OutputTokens: 5, CacheHitTokens: 10}},
		replay.Response{Text: "turn one done"},
		replay.Call(replay.ToolCall("c3", "echo", map[string]any{"text": "c"})),
		replay.Response{Text: "turn two done"},
	)
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(echo("echo: ")), agent.WithStores(agent.Stores{Sessions: store}), agent.WithSystemPrompt("sys"))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	var seen [][]string
	for _, p := range []string{"one", "two"} {
		seen = append(seen, run(t, s, p))
	}
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	return tr, seen
}

// run returns a compact trace of a turn's events.
func run(t *testing.T, s *agent.Session, prompt string) []string {
	var trace []string
	for ev, err := range s.Run(context.Background(), prompt) {
		switch e := ev.(type) {
		case *agent.TextDelta:
			trace = append(trace, "text:"+e.Text)
		case *agent.ReasoningDelta:
			trace = append(trace, "reasoning:"+e.Text)
		case *agent.ToolCallEnd:
			trace = append(trace, "tool:"+e.Call.ID+":"+e.Result.Text())
		case *agent.ModelUsage:
			trace = append(trace, "usage")
		case *agent.TurnEnd:
			trace = append(trace, "end:"+e.Reason)
			if err != nil {
				trace = append(trace, "error:"+err.Error())
			}
		}
	}
	return trace
}

func replayWith(t *testing.T, tr *session.Transcript, system string, tool tools.Tool) [][]string {
	t.Helper()
	m, err := replay.NewStrict(tr)
	require.NoError(t, err)
	assert.Equal(t, 4, m.Calls())
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(tool), agent.WithSystemPrompt(system))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	var seen [][]string
	for _, p := range []string{"one", "two"} {
		seen = append(seen, run(t, s, p))
	}
	return seen
}

func TestReplayReproducesEvents(t *testing.T) {
	tr, live := record(t)
	got := replayWith(t, tr, "sys", echo("echo: "))
	assert.Equal(t, live, got)
	assert.Equal(t, []string{"reasoning:plan", "usage", "tool:c1:echo: a", "tool:c2:echo: b", "text:turn one done", "end:completed"}, got[0])
}

func TestStrictReplayNamesDrift(t *testing.T) {
	tr, _ := record(t)

	got := replayWith(t, tr, "a different system prompt", echo("echo: "))
	last := got[0][len(got[0])-1]
	assert.Contains(t, last, "model call 1 (turn 1, step 1) drifted")
	assert.Contains(t, last, "system prompt differs")

	got = replayWith(t, tr, "sys", echo("ECHO "))
	last = got[0][len(got[0])-1]
	assert.Contains(t, last, "model call 2 (turn 1, step 2) drifted")
	assert.Contains(t, last, "history differs: message 3 (tool)")
	assert.Contains(t, last, "ECHO a")

	m, err := replay.NewStrict(tr)
	require.NoError(t, err)
	var de *harness.Error
	for _, e := range m.Stream(context.Background(), &model.Request{System: "x"}) {
		require.True(t, errors.As(e, &de))
	}
	assert.Equal(t, harness.CodeReplayDrift, de.Code)
	assert.Contains(t, de.Message, "model call 1 (turn 1, step 1) drifted from the recording: the system prompt differs")
}

func TestReplayRunsOut(t *testing.T) {
	tr, _ := record(t)
	m, err := replay.New(tr)
	require.NoError(t, err)
	// Not strict: the empty requests, which drift from every recorded
	// one, are answered with the recording's answers in order.
	for range 4 {
		for _, err := range m.Stream(context.Background(), &model.Request{}) {
			require.NoError(t, err)
		}
	}
	var last error
	for _, err := range m.Stream(context.Background(), &model.Request{}) {
		last = err
	}
	assert.ErrorContains(t, last, "the recording has 4 model calls; the live session asked for call 5")
	assert.Len(t, m.Requests(), 5, "a replay keeps the requests as a scripted model does")

	// A replay takes more responses after its recording, as a script does.
	m.Push(replay.Response{Text: "one more"})
	var text string
	for c, err := range m.Stream(context.Background(), &model.Request{}) {
		require.NoError(t, err)
		text += c.Text
	}
	assert.Equal(t, "one more", text)
	assert.Equal(t, "test-model", m.WithInfo(model.Info{Name: "test-model"}).Info().Name)

	_, err = replay.New(&session.Transcript{Header: session.Header{ID: "x"}})
	assert.ErrorContains(t, err, "no recorded model calls")
}
