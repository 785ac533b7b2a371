package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

func TestResumeRebuildsWhatTheModelSaw(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	m1 := replay.NewScripted(
		replay.Response{Reasoning: "think", ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", map[string]any{"text": "x \"quoted\"\n<tag> ü"})}},
		replay.Response{Text: "first answer"},
	)
	loop1, err := agent.New(agent.WithModel(m1), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}), agent.WithSystemPrompt("sys"))
	require.NoError(t, err)
	s1, err := loop1.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, _, err = collect(t, s1, ctx, "turn one")
	require.NoError(t, err)
	id := s1.Header().ID
	seen := m1.Requests()[1].Messages // the last request of turn one
	require.NoError(t, loop1.Close())

	m2 := replay.NewScripted(replay.Response{Text: "second answer"})
	loop2, err := agent.New(agent.WithModel(m2), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}), agent.WithSystemPrompt("sys"))
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, s2.Warnings())
	assert.Equal(t, "/proj", s2.Header().Cwd)
	rebuilt := s2.Messages()
	require.Len(t, rebuilt, len(seen)+1)
	assert.Equal(t, js(seen), js(rebuilt[:len(seen)]), "the rebuilt history is byte for byte what the model saw")
	assert.Equal(t, "first answer", rebuilt[len(seen)].Text())

	_, _, err = collect(t, s2, ctx, "turn two")
	require.NoError(t, err)
	req := m2.Requests()[0]
	assert.Equal(t, js(rebuilt), js(req.Messages[:len(rebuilt)]), "the next turn continues the same history")
	assert.Equal(t, "turn two", req.Messages[len(rebuilt)].Text())
}

func TestResumeAfterCrash(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	store := session.NewJSONL(dir, session.StoreConfig{})
	// A session that died while a call ran.
	log, err := store.Create(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, err = log.Append(ctx,
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("run it")}},
		&session.ModelRequest{Step: 1, Model: "m"},
		&session.AssistantMessage{Step: 1, Finish: "tool_calls", Usage: &harness.Usage{InputTokens: 300, OutputTokens: 40}, Content: []harness.Block{
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"a"}`}},
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c2", Name: "echo", Arguments: `{"text":"b"}`}},
		}},
		&session.ToolStarted{Step: 1, CallID: "c1", Name: "echo"},
	)
	require.NoError(t, err)
	require.NoError(t, log.Close())

	m := replay.NewScripted(replay.Response{Text: "recovered"})
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(echoTool()), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.ResumeSession(ctx, log.Header().ID)
	require.NoError(t, err)
	var warnings []string
	for _, w := range s.Warnings() {
		warnings = append(warnings, w.String())
	}
	assert.Equal(t, []string{
		"turn 1 stopped in step 1 without an end (a crash or a kill); logged as interrupted, with 1 step and 340 tokens used",
		"the echo call c1 was running: its outcome is unknown; the model is told so",
		"the echo call c2 was not run: it had not started; the model is told so",
	}, warnings, "the host is told what was repaired")
	msgs := s.Messages()
	require.Len(t, msgs, 4)
	assert.Equal(t, harness.CodeOutcomeUnknown, msgs[2].Content[0].ToolResult.Code)
	assert.Equal(t, harness.CodeNotRun, msgs[3].Content[0].ToolResult.Code)

	_, end, err := collect(t, s, ctx, "go on")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	sent := m.Requests()[0].Messages
	assert.Equal(t, harness.CodeOutcomeUnknown, sent[2].Content[0].ToolResult.Code, "the model is told the outcome is unknown")

	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	var ends []*session.TurnEnded
	var reasons []string
	for _, e := range tr.Events {
		if te, ok := e.Data.(*session.TurnEnded); ok {
			reasons = append(reasons, te.Reason)
			ends = append(ends, te)
		}
	}
	assert.Equal(t, []string{session.ReasonInterrupted, session.ReasonCompleted}, reasons)
	assert.Equal(t, &session.TurnEnded{Reason: session.ReasonInterrupted, Steps: 1, Usage: harness.Usage{InputTokens: 300, OutputTokens: 40}}, ends[0],
		"the repaired turn end carries the steps and usage the log holds")
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestStartLoggedBeforeSideEffects: when a tool runs, its start (and the
// assistant message that asked for it) is already in the file on disk, so
// a crash during the call leaves a log that says the call started.
func TestStartLoggedBeforeSideEffects(t *testing.T) {
	ctx := context.Background()
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	var seenOnDisk []string
	var sessionID string
	probe := tools.Define(tools.Spec{Name: "probe", Description: "looks at the log", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			tr, err := store.Load(ctx, sessionID)
			if err != nil {
				return nil, err
			}
			for _, e := range tr.Events {
				switch p := e.Data.(type) {
				case *session.ToolStarted:
					seenOnDisk = append(seenOnDisk, "start:"+p.CallID)
				case *session.AssistantMessage:
					seenOnDisk = append(seenOnDisk, "assistant")
				}
			}
			return harness.TextResult("ok"), nil
		})
	model := replay.NewScripted(replay.Call(replay.ToolCall("p1", "probe", nil)), replay.Response{Text: "done"})
	_, s := newSession(t, agent.WithModel(model), agent.WithTools(probe), agent.WithStores(agent.Stores{Sessions: store}))
	sessionID = s.Header().ID
	_, _, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	assert.Equal(t, []string{"assistant", "start:p1"}, seenOnDisk)
}
