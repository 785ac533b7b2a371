package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
)

func todoCall(id string, items ...harness.TodoItem) harness.ToolCall {
	if items == nil {
		items = []harness.TodoItem{}
	}
	return replay.ToolCall(id, "todo", map[string]any{"items": items})
}

var plan = []harness.TodoItem{
	{Content: "read the failing test", Status: harness.TodoDone},
	{Content: "fix the parser", Status: harness.TodoInProgress},
	{Content: "run the tests", Status: harness.TodoPending},
}

// A valid plan replaces the previous one whole: the host gets it as an
// event and as the call's card, the model reads it back, and a resumed
// session has it from the log. An invalid plan is an error result and
// changes nothing.
func TestTodoReplacedWholeAndRestored(t *testing.T) {
	dir := t.TempDir()
	store := func() session.Store { return session.NewJSONL(filepath.Join(dir, "s"), session.StoreConfig{}) }
	m := replay.NewScripted(
		replay.Call(todoCall("t1", plan[1], plan[2])),
		replay.Call(todoCall("t2", plan...)),
		replay.Call(todoCall("t3", harness.TodoItem{Content: "a", Status: "started"}),
			todoCall("t4", harness.TodoItem{Content: "a", Status: "in_progress"}, harness.TodoItem{Content: "b", Status: "in_progress"}),
			todoCall("t5", harness.TodoItem{Content: " ", Status: "done"})),
		replay.Response{Text: "ok"})
	loop, s := newSession(t, agent.WithModel(m), agent.WithTodo(), agent.WithStores(agent.Stores{Sessions: store()}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	up := ofType[*agent.TodoUpdated](evs)
	require.Len(t, up, 2, "only the valid plans")
	assert.Equal(t, []harness.TodoItem{plan[1], plan[2]}, up[0].Items)
	assert.Equal(t, plan, up[1].Items)
	assert.Equal(t, "t2", up[1].CallID)
	assert.Equal(t, plan, s.Todo())
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Equal(t, harness.RenderTodo, ends[1].Result.Render.Kind)
	assert.Equal(t, plan, ends[1].Result.Render.Todo)
	res := toolResults(m.Requests()[2])
	assert.Contains(t, resultText(res[1]), "[x] read the failing test\n[~] fix the parser\n[ ] run the tests")
	bad := lastResults(m.Requests()[3], 3)
	assert.Contains(t, resultText(bad[0]), `status "started"`)
	assert.Contains(t, resultText(bad[1]), "one at a time")
	assert.Contains(t, resultText(bad[2]), "no content")
	for _, r := range bad {
		assert.Equal(t, harness.CodeInvalidArguments, r.Code)
	}
	id := s.Header().ID
	require.NoError(t, loop.Close())

	_, s2 := resumeSession(t, id, agent.WithModel(replay.NewScripted()), agent.WithTodo(), agent.WithStores(agent.Stores{Sessions: store()}))
	assert.Equal(t, plan, s2.Todo(), "the plan comes back from the log")
}

// After compaction summarized the history that held the plan, the model
// is shown the current plan again, before its next call.
func TestTodoReshownAfterCompaction(t *testing.T) {
	script := []replay.Response{replay.Call(todoCall("t1", plan...))}
	for i := range 6 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%d", i), fmt.Sprintf("/w/f%d.go", i), "v1", 1, 400, false)))
	}
	script = append(script, replay.Response{Text: "finished"})
	llm := summarizer("## Goal\nread six files", script...).WithInfo(model.Info{Name: "small", ContextWindow: 4000})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithTodo(),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3}))
	evs, end, err := collect(t, s, context.Background(), "read the files")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs))
	var reminders []*agent.ReminderAdded
	for _, r := range ofType[*agent.ReminderAdded](evs) {
		if r.Source == "todo" {
			reminders = append(reminders, r)
		}
	}
	require.NotEmpty(t, reminders)
	assert.Contains(t, reminders[0].Text, "[~] fix the parser")
	// The first request after the compaction carries the summary and the plan.
	var after *model.Request
	for _, r := range llm.Requests() {
		if len(r.Messages) > 0 && strings.Contains(r.Messages[0].Text(), "<summary of the earlier conversation>") {
			after = r
			break
		}
	}
	require.NotNil(t, after)
	last := after.Messages[len(after.Messages)-1].Text()
	assert.Contains(t, last, "[x] read the failing test")
}
