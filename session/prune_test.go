package session_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func readResult(id string, f harness.FileAccess) []session.Event {
	return []session.Event{
		ev(0, &session.AssistantMessage{Content: []harness.Block{callBlock(id, "read")}}),
		ev(0, &session.ToolFinished{CallID: id, Name: "read", Result: harness.ToolResult{Content: []harness.Block{harness.TextBlock("body of " + id)}, Files: []harness.FileAccess{f}}}),
	}
}

func TestSupersededIsIdempotent(t *testing.T) {
	events := []session.Event{ev(0, user("go"))}
	events = append(events, readResult("a", harness.FileAccess{Op: harness.FileRead, Path: "/x", Version: "1", StartLine: 5, EndLine: 9})...)
	events = append(events, readResult("b", harness.FileAccess{Op: harness.FileRead, Path: "/x", Version: "1", StartLine: 1, EndLine: 20})...)
	h := new(session.History).Add(events...)
	calls := h.Superseded()
	require.Len(t, calls, 1)
	assert.Equal(t, "a", calls[0].CallID)
	assert.Equal(t, "[pruned: the read result for /x lines 5-9 was superseded by a later read of the same lines (call b); the session log keeps the original]", calls[0].Placeholder)
	h.Add(ev(0, &session.Pruned{Calls: calls}))
	assert.Empty(t, h.Superseded(), "a pruned result is not pruned again")
	msgs := h.Messages()
	assert.Equal(t, calls[0].Placeholder, msgs[2].Content[0].ToolResult.Content[0].Text)
	assert.Equal(t, "body of b", msgs[4].Content[0].ToolResult.Content[0].Text)
	h.Add(ev(0, &session.Pruned{Calls: calls}))
	assert.Equal(t, calls[0].Placeholder, h.Messages()[2].Content[0].ToolResult.Content[0].Text, "applying twice changes nothing")
}

func TestSupersededNeedsProof(t *testing.T) {
	cases := []struct {
		name         string
		first, later harness.FileAccess
		pruned       bool
	}{
		{"covered window", fa(harness.FileRead, "1", 10, 20, false), fa(harness.FileRead, "1", 1, 30, false), true},
		{"whole file", fa(harness.FileRead, "1", 10, 20, false), fa(harness.FileRead, "1", 0, 0, true), true},
		{"partial overlap", fa(harness.FileRead, "1", 10, 20, false), fa(harness.FileRead, "1", 15, 30, false), false},
		{"whole file not covered by a window", fa(harness.FileRead, "1", 0, 0, true), fa(harness.FileRead, "1", 1, 1000, false), false},
		{"other version", fa(harness.FileRead, "1", 10, 20, false), fa(harness.FileRead, "2", 1, 30, false), false},
		{"unknown version", fa(harness.FileRead, "", 10, 20, false), fa(harness.FileRead, "", 1, 30, false), false},
		{"later write", fa(harness.FileRead, "1", 10, 20, false), fa(harness.FileWrite, "2", 0, 0, false), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := []session.Event{ev(0, user("go"))}
			events = append(events, readResult("a", c.first)...)
			events = append(events, readResult("b", c.later)...)
			got := new(session.History).Add(events...).Superseded()
			assert.Equal(t, c.pruned, len(got) == 1 && got[0].CallID == "a", "%+v", got)
		})
	}
}

func fa(op harness.FileOp, version string, start, end int, complete bool) harness.FileAccess {
	return harness.FileAccess{Op: op, Path: "/x", Version: version, StartLine: start, EndLine: end, Complete: complete}
}

func TestCompactedHistory(t *testing.T) {
	events := []session.Event{ev(0, user("go"))}
	events = append(events, readResult("a", fa(harness.FileRead, "1", 1, 5, false))...)
	events = append(events, readResult("b", fa(harness.FileRead, "1", 1, 9, false))...)
	events = append(events, ev(0, &session.Compacted{Messages: 3, Summary: "read a"}))
	h := new(session.History).Add(events...)
	msgs := h.Messages()
	require.Len(t, msgs, 3)
	assert.Contains(t, msgs[0].Text(), "read a")
	assert.Equal(t, "b", msgs[2].Content[0].ToolResult.CallID)
	assert.Empty(t, h.Superseded(), "results folded into the summary are not pruned")
}
