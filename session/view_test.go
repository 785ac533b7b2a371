package session_test

import (
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// TestViewIsASnapshot: View shares the history's messages instead of
// copying them, and a later change in place (a pruning, a call closed
// without a result) leaves a view handed out before unchanged.
func TestViewIsASnapshot(t *testing.T) {
	h := new(session.History).Add(ev(0, &session.UserMessage{Content: []harness.Block{harness.TextBlock("go")}}))
	h.Add(readResult("c1", harness.FileAccess{Op: harness.FileRead, Path: "/a.go", Complete: true})...)
	before := h.View()
	if len(before) != 3 || before[2].Content[0].ToolResult.Content[0].Text != "body of c1" {
		t.Fatalf("view: %+v", before)
	}
	if again := h.View(); &again[0] != &before[0] {
		t.Fatal("View copied the messages although no call waits for a result")
	}
	h.Add(ev(0, &session.Pruned{Calls: []session.PrunedCall{{CallID: "c1", Placeholder: "pruned"}}}))
	if got := before[2].Content[0].ToolResult.Content[0].Text; got != "body of c1" {
		t.Fatalf("a pruning changed a view handed out before it: %q", got)
	}
	if got := h.View()[2].Content[0].ToolResult.Content[0].Text; got != "pruned" {
		t.Fatalf("the view after the pruning: %q", got)
	}
	// A call waiting for its result: the view is a copy, with the
	// synthetic result Messages gives.
	h.Add(ev(0, &session.AssistantMessage{Content: []harness.Block{callBlock("c2", "read")}}))
	v := h.View()
	if len(v) != 5 || v[4].Content[0].ToolResult == nil || v[4].Content[0].ToolResult.CallID != "c2" || len(v[4].Content[0].ToolResult.Content) == 0 {
		t.Fatalf("view with a waiting call: %+v", v[4])
	}
}
