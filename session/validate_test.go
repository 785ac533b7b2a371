package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// checkWhole fails when a derived message holds a block without the
// payload its type promises: what renders a transcript dereferences them.
func checkWhole(t *testing.T, msgs []harness.Message) {
	t.Helper()
	for i, m := range msgs {
		if m.Role == harness.RoleTool {
			require.Len(t, m.Content, 1, "message %d", i)
		}
		for j, b := range m.Content {
			switch b.Type {
			case harness.BlockText, harness.BlockReasoning:
			case harness.BlockImage:
				require.NotNil(t, b.Image, "message %d block %d", i, j)
			case harness.BlockToolCall:
				require.NotNil(t, b.ToolCall, "message %d block %d", i, j)
			case harness.BlockToolResult:
				require.NotNil(t, b.ToolResult, "message %d block %d", i, j)
				for k, c := range b.ToolResult.Content {
					if c.Type == "image" {
						require.NotNil(t, c.Image, "message %d block %d item %d", i, j, k)
					}
				}
			default:
				t.Fatalf("message %d block %d has type %q", i, j, b.Type)
			}
		}
	}
}

func TestInvalidBlocksSkippedOnLoad(t *testing.T) {
	s := writeRaw(t, "bad",
		`{"seq":1,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"look"},{"type":"image"}]}}`,
		`{"seq":2,"time":"2026-01-01T00:00:00Z","type":"assistant","data":{"step":1,"content":[{"type":"text","text":"calling"},{"type":"tool_call"},{"type":"tool_result"},{"type":"image"},{"type":"hologram"},{"type":"tool_call","tool_call":{"id":"c1","name":"read","arguments":"{}"}}]}}`,
		`{"seq":3,"time":"2026-01-01T00:00:00Z","type":"tool_start","data":{"step":1,"name":"read"}}`,
		`{"seq":4,"time":"2026-01-01T00:00:00Z","type":"tool_result","data":{"step":1,"call_id":"c1","name":"read","result":{"content":[{"type":"image"},{"type":"text","text":"body"}]}}}`,
		`{"seq":5,"time":"2026-01-01T00:00:00Z","type":"assistant","data":{"step":2,"content":[{"type":"tool_call","tool_call":null},{"type":"text","text":"done"}]}}`,
		`{"seq":6,"time":"2026-01-01T00:00:00Z","type":"turn_end","data":{"reason":"completed","steps":2,"usage":{"input_tokens":0,"output_tokens":0}}}`,
	)
	tr, err := s.Load(context.Background(), "bad")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"line 2: event 1 (user): content item 2 is an image without its image reference; skipped",
		"line 3: event 2 (assistant): content block 2 is a tool_call block without its tool_call; skipped",
		"line 3: event 2 (assistant): content block 3 is a tool_result block without its tool_result; skipped",
		"line 3: event 2 (assistant): content block 4 is an image block without its image; skipped",
		`line 3: event 2 (assistant): content block 5 is a block of type "hologram", unknown to this build; skipped`,
		"line 4: event 3 (tool_start) skipped: it names no call (empty call_id)",
		"line 5: event 4 (tool_result): result content item 1 is an image without its image reference; skipped",
		"line 6: event 5 (assistant): content block 1 is a tool_call block without its tool_call; skipped",
	}, warningTexts(tr.Warnings))

	var seqs []int64
	for _, e := range tr.Events {
		seqs = append(seqs, e.Seq)
	}
	assert.Equal(t, []int64{1, 2, 4, 5, 6}, seqs, "only the event naming no call is skipped; nothing after it is lost")
	h := new(session.History).Add(tr.Events...)
	msgs := h.Messages()
	checkWhole(t, msgs)
	require.Len(t, msgs, 4)
	assert.Equal(t, "look", msgs[0].Text())
	assert.Equal(t, "calling", msgs[1].Text())
	require.Len(t, msgs[1].ToolCalls(), 1)
	assert.Equal(t, "c1", msgs[1].ToolCalls()[0].ID)
	assert.Equal(t, "body", msgs[2].Content[0].ToolResult.Content[0].Text)
	assert.Equal(t, "done", msgs[3].Text())
}

// History built from events that were never loaded (a host's own) leaves
// the same blocks out, without changing the events.
func TestHistoryLeavesOutInvalidBlocks(t *testing.T) {
	am := &session.AssistantMessage{Step: 1, Content: []harness.Block{
		{Type: harness.BlockToolCall}, harness.TextBlock("hi"), {Type: harness.BlockImage}, callBlock("a", "read"),
	}}
	h := new(session.History).Add([]session.Event{ev(1, user("go")), ev(2, am)}...)
	msgs := h.Messages()
	checkWhole(t, msgs)
	require.Len(t, msgs, 3)
	assert.Len(t, msgs[1].Content, 2)
	assert.Len(t, am.Content, 4, "the event itself is not changed")
}
