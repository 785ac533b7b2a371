package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/stretchr/testify/assert"
)

// The live view keeps a terminal's block to its last lines, and a view
// that fell behind says how much it skipped.
func TestLiveViewBounded(t *testing.T) {
	var b strings.Builder
	h := newHuman(&b, HumanOptions{Width: 80})
	h.Event(&agent.ToolCallProgress{CallID: "c", Name: "bash", Output: "a\nb", Dropped: 2048})
	h.Event(&agent.ToolCallProgress{CallID: "c", Name: "bash", Output: "c\r\nprogress 10%\rprogress 100%\n"})
	assert.Equal(t, "⋯ bash output:\n  │ … 2.0 KiB skipped\n  │ a\n  │ bc\n  │ progress 100%\n", b.String())
	assert.Equal(t, 4, h.settleLive("c"))

	b.Reset()
	h = newHuman(&b, HumanOptions{Width: 80})
	h.spin = true // a terminal, without the ticking goroutine
	for i := range 20 {
		h.Event(&agent.ToolCallProgress{CallID: "c", Name: "bash", Output: fmt.Sprintf("line %d\n", i)})
	}
	last := b.String()[strings.LastIndex(b.String(), "\x1b[J")+3:]
	assert.Equal(t, "  │ line 15\n  │ line 16\n  │ line 17\n  │ line 18\n  │ line 19\n", last)
	assert.Equal(t, 0, h.settleLive("c"))
	assert.True(t, strings.HasSuffix(b.String(), "\x1b[5A\r\x1b[J"), "the block is erased before the card")
}

// Calls running in parallel each keep a line of the terminal's live
// block, in the order they started, not only the one that reported last;
// when one ends, the block of the others is drawn again after its card.
// Piped, each run of lines says whose it is.
func TestLiveParallelCalls(t *testing.T) {
	var b strings.Builder
	h := newHuman(&b, HumanOptions{Width: 80})
	h.spin = true // a terminal, without the ticking goroutine
	h.Event(&agent.ToolCallStart{Call: harness.ToolCall{ID: "a", Name: "bash", Arguments: `{"command":"make a"}`}, Render: harness.RenderTerminal})
	h.Event(&agent.ToolCallStart{Call: harness.ToolCall{ID: "b", Name: "fetch"}})
	h.Event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a1\na2\n"})
	h.Event(&agent.ToolCallProgress{CallID: "b", Name: "fetch", Output: "b1\nb2 half"})
	last := func() string { return b.String()[strings.LastIndex(b.String(), "\x1b[J")+3:] }
	assert.Equal(t, "  │ bash: a2\n  │ fetch: b2 half\n", last(), "one line per running call, in start order")
	h.Event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a3 progress 10%\ra3 progress 90%"})
	assert.Equal(t, "  │ bash: a3 progress 90%\n  │ fetch: b2 half\n", last())
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "b", Name: "fetch"}, Result: harness.TextResult("fetched")})
	tail := last()
	assert.Contains(t, tail, "● fetch\n", "the card of the call that ended")
	assert.True(t, strings.HasSuffix(tail, "  │ a1\n  │ a2\n  │ a3 progress 90%\n"), "then the block of the one still running, its last lines: %q", tail)

	// Many at once: the block stays within its lines.
	b.Reset()
	h = newHuman(&b, HumanOptions{Width: 80})
	h.spin = true
	for i := range 7 {
		id := fmt.Sprintf("c%d", i)
		h.Event(&agent.ToolCallStart{Call: harness.ToolCall{ID: id, Name: "bash"}})
		h.Event(&agent.ToolCallProgress{CallID: id, Name: "bash", Output: id + " out\n"})
	}
	assert.Equal(t, "  │ bash: c0 out\n  │ bash: c1 out\n  │ bash: c2 out\n  │ bash: c3 out\n  │ … 3 more running\n", last())

	// Piped, interleaved lines are attributed.
	b.Reset()
	h = newHuman(&b, HumanOptions{Width: 80})
	h.Event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a1\n"})
	h.Event(&agent.ToolCallProgress{CallID: "b", Name: "fetch", Output: "b1\n"})
	h.Event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a2\n"})
	assert.Equal(t, "⋯ bash output:\n  │ a1\n⋯ fetch output:\n  │ b1\n⋯ bash output:\n  │ a2\n", b.String())
}

// A notice while a live block is drawn (an MCP server's status line, say)
// goes above the block, which is drawn again below it.
func TestLiveBlockBelowNotice(t *testing.T) {
	var b strings.Builder
	h := newHuman(&b, HumanOptions{Width: 80})
	h.spin = true // a terminal, without the ticking goroutine
	h.Event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a1\na2\n"})
	h.Notice(NoticeInfo, "mcp docs: connected (3 tools)")
	assert.Equal(t, "  │ a1\n  │ a2\n\x1b[2A\r\x1b[Jmcp docs: connected (3 tools)\n  │ a1\n  │ a2\n", b.String())
}
