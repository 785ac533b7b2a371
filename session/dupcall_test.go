package session_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// readStep is one step whose single call, with the given id, reads
// lines 1-10 of /w/a.go at version v1.
func readStep(seq int64, step int, id, body string) []session.Event {
	return []session.Event{
		ev(seq, &session.AssistantMessage{Step: step, Content: []harness.Block{callBlock(id, "read")}}),
		ev(seq+1, &session.ToolStarted{Step: step, CallID: id, Name: "read"}),
		ev(seq+2, &session.ToolFinished{Step: step, CallID: id, Name: "read", Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock(body)},
			Files:   []harness.FileAccess{{Op: harness.FileRead, Path: "/w/a.go", Version: "v1", StartLine: 1, EndLine: 10}},
		}}),
	}
}

// A provider that numbers its calls per step (call_0 in step 1 and again
// in step 2): pruning supersedes the old read and keeps the new one.
func TestPruningWithReusedCallIDs(t *testing.T) {
	events := []session.Event{ev(1, user("go"))}
	events = append(events, readStep(2, 1, "call_0", "old body")...)
	events = append(events, readStep(5, 2, "call_0", "new body")...)
	h := new(session.History).Add(events...)
	calls := h.Superseded()
	require.Len(t, calls, 1)
	assert.Equal(t, session.PrunedCall{CallID: "call_0", Seq: 4,
		Placeholder: "[pruned: the read result for /w/a.go lines 1-10 was superseded by a later read of the same lines (a later call also named call_0); the session log keeps the original]",
	}, calls[0])
	h.Add(ev(8, &session.Pruned{Calls: calls}))
	msgs := h.Messages()
	require.Len(t, msgs, 5)
	assert.Equal(t, calls[0].Placeholder, msgs[2].Content[0].ToolResult.Content[0].Text)
	assert.Equal(t, "new body", msgs[4].Content[0].ToolResult.Content[0].Text, "the newest result stays")
	assert.Empty(t, h.Superseded())
}

// A log written before prunings named results by seq: the pruning names
// call_0 only, and resuming must not replace the newest result with it.
func TestResumeLogWithReusedCallIDs(t *testing.T) {
	placeholder := "[pruned: the read result for /w/a.go lines 1-10 was superseded by a later read of the same lines (call call_0); the session log keeps the original]"
	var lines []string
	add := func(seq int64, typ, data string) {
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-01T00:00:00Z","type":%q,"data":%s}`, seq, typ, data))
	}
	step := func(seq int64, n int, body string) {
		add(seq, "assistant", fmt.Sprintf(`{"step":%d,"content":[{"type":"tool_call","tool_call":{"id":"call_0","name":"read","arguments":"{}"}}]}`, n))
		add(seq+1, "tool_start", fmt.Sprintf(`{"step":%d,"call_id":"call_0","name":"read"}`, n))
		add(seq+2, "tool_result", fmt.Sprintf(`{"step":%d,"call_id":"call_0","name":"read","result":{"content":[{"type":"text","text":%q}],"files":[{"op":"read","path":"/w/a.go","version":"v1","start_line":1,"end_line":10}]}}`, n, body))
	}
	add(1, "user", `{"content":[{"type":"text","text":"go"}]}`)
	step(2, 1, "old body")
	step(5, 2, "new body")
	add(8, "prune", fmt.Sprintf(`{"calls":[{"call_id":"call_0","placeholder":%q}]}`, placeholder))
	add(9, "assistant", `{"step":3,"content":[{"type":"text","text":"done"}]}`)
	add(10, "turn_end", `{"reason":"completed","steps":3,"usage":{"input_tokens":0,"output_tokens":0}}`)
	s := writeRaw(t, "dups", lines...)

	log, tr, err := s.Open(context.Background(), "dups")
	require.NoError(t, err)
	defer log.Close()
	assert.Empty(t, tr.Warnings)
	h := new(session.History).Add(tr.Events...)
	msgs := h.Messages()
	require.Len(t, msgs, 6)
	assert.Equal(t, placeholder, msgs[2].Content[0].ToolResult.Content[0].Text, "the old read is pruned")
	assert.Equal(t, "new body", msgs[4].Content[0].ToolResult.Content[0].Text, "the newest read is not")
	assert.Empty(t, h.Superseded(), "nothing is left to prune: the newest read is superseded by nothing")
}

// Ids repeated within one step (a log no current build writes) still give
// each call its own result, in order; a result of another step fills no
// slot of this one.
func TestHistoryWithRepeatedIDsInAStep(t *testing.T) {
	h := new(session.History).Add([]session.Event{
		ev(1, user("go")),
		ev(2, &session.AssistantMessage{Step: 1, Content: []harness.Block{callBlock("a", "x"), callBlock("a", "x")}}),
		ev(3, &session.ToolStarted{Step: 1, CallID: "a"}),
		ev(4, &session.ToolStarted{Step: 1, CallID: "a"}),
		ev(5, &session.ToolFinished{Step: 1, CallID: "a", Result: *harness.TextResult("first")}),
		ev(6, &session.ToolFinished{Step: 1, CallID: "a", Result: *harness.TextResult("second")}),
		ev(7, &session.AssistantMessage{Step: 2, Content: []harness.Block{callBlock("b", "x")}}),
		ev(8, &session.ToolFinished{Step: 1, CallID: "b", Result: *harness.TextResult("stray")}),
	}...)
	msgs := h.Messages()
	require.Len(t, msgs, 6)
	assert.Equal(t, "first", msgs[2].Content[0].ToolResult.Content[0].Text)
	assert.Equal(t, "second", msgs[3].Content[0].ToolResult.Content[0].Text)
	assert.Equal(t, harness.CodeNotRun, msgs[5].Content[0].ToolResult.Code, "a result logged for another step is not this call's")
	assert.True(t, h.CallIDUsed("a"))
	assert.True(t, h.CallIDUsed("b"))
	assert.False(t, h.CallIDUsed("c"))
}
