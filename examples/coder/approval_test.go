package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
)

func argsCall(name string, args map[string]any) harness.ToolCall {
	b, _ := json.Marshal(args)
	return harness.ToolCall{ID: "c", Name: name, Arguments: string(b)}
}

// Issue 35, item 6: the question shows what is approved.
func TestApprovalDetail(t *testing.T) {
	got := approvalDetail(argsCall("edit", map[string]any{"file_path": "a.go", "old_string": "return a - b", "new_string": "return a + b\n// fixed"}), 18)
	assert.Equal(t, []string{"replaces 1 line with 2 lines", "- return a - b", "+ return a + b", "+ // fixed"}, got)

	got = approvalDetail(argsCall("write", map[string]any{"file_path": "n.txt", "content": "one\ntwo\n"}), 18)
	assert.Equal(t, []string{"content: 2 lines, 8 bytes", "│ one", "│ two"}, got)

	// Within the height: a 100-line write shows its head and the count.
	long := strings.Repeat("line\n", 100)
	got = approvalDetail(argsCall("write", map[string]any{"file_path": "n.txt", "content": long}), 8)
	assert.Len(t, got, 8)
	assert.Equal(t, "content: 100 lines, 500 bytes", got[0])
	assert.Equal(t, "… 94 more lines", got[7])

	// A long edit keeps both sides in view.
	got = approvalDetail(argsCall("edit", map[string]any{"file_path": "a.go", "old_string": long, "new_string": long + "x"}), 10)
	assert.Len(t, got, 10)
	assert.Contains(t, got, "- line")
	assert.Contains(t, got, "+ line")

	assert.Nil(t, approvalDetail(argsCall("bash", map[string]any{"command": "ls"}), 10))
	assert.Nil(t, approvalDetail(harness.ToolCall{Name: "write", Arguments: "{not json"}, 10))
	assert.Equal(t, []string{"abc…"}, cutTo([]string{"abcdefgh"}, 4))
}

// FuzzApprovalDetail: whatever the arguments, the detail fits in the
// lines it is given.
func FuzzApprovalDetail(f *testing.F) {
	f.Add("edit", `{"old_string":"a\nb\nc","new_string":"d"}`, 5)
	f.Add("write", `{"content":"x\ny\nz\n"}`, 3)
	f.Add("edit", `{"old_string":"","new_string":""}`, 1)
	f.Fuzz(func(t *testing.T, name, args string, maxLines int) {
		if maxLines > 1000 {
			return
		}
		got := approvalDetail(harness.ToolCall{Name: name, Arguments: args}, maxLines)
		if limit := max(maxLines, 3); len(got) > limit {
			t.Fatalf("%d lines for a budget of %d: %q", len(got), limit, got)
		}
	})
}
