package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tickCommand prints a line every interval for about the given time:
// 3 s under HARNESS_LONG_TESTS=1, a fraction of a second by default.
func tickCommand() (cmd string, ticks int) {
	ticks, pause := 4, "0.15"
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		ticks, pause = 10, "0.3"
	}
	return fmt.Sprintf("for i in $(seq 1 %d); do echo tick $i; sleep %s; done", ticks, pause), ticks
}

// Piped, a running command's lines are appended as they arrive, before
// its card, and the card does not print them again.
func TestLiveOutputPiped(t *testing.T) {
	leakcheck.Check(t)
	cmd, ticks := tickCommand()
	p := newProvider(t, call(toolCall(0, "c1", "bash", map[string]any{"command": cmd})), say("done"))
	ws := workspace(t, nil)
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	res := make(chan result, 1)
	go func() {
		res <- runTo(context.Background(), out, errOut, p.env(), strings.NewReader(""), nil, "-C", ws, "-sessions", t.TempDir(), "-permission-mode", "bypass", "tick")
	}()
	require.True(t, out.waitFor("│ tick 1\n"), out.String())
	assert.NotContains(t, out.String(), "● $ ", "the first line shows while the command still runs")
	r := <-res
	require.Equal(t, exitOK, r.code, errOut.String())
	got := out.String()
	for i := 1; i <= ticks; i++ {
		assert.Equal(t, 1, strings.Count(got, fmt.Sprintf("│ tick %d\n", i)), "tick %d is printed once", i)
	}
	assert.Contains(t, got, fmt.Sprintf("│ tick %d\n● $ %s", ticks, cmd), "the card follows the live lines")
	assert.Contains(t, got, fmt.Sprintf("│ (%d lines of output above)\n  exit 0\n", ticks))
}

// On a terminal the last lines are redrawn in place while the command
// runs, and erased before the final card, which shows them once.
func TestLiveOutputOnTerminal(t *testing.T) {
	leakcheck.Check(t)
	cmd, ticks := tickCommand()
	p := newProvider(t, call(toolCall(0, "c1", "bash", map[string]any{"command": cmd})), say("done"))
	ws := workspace(t, nil)
	ctl, tty := openPTY(t, 80, 24)
	screen := screenReader(ctl)
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"-C", ws, "-sessions", t.TempDir(), "-permission-mode", "bypass", "tick"},
			p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	require.True(t, screen.waitFor("│ tick 2"), screen.String())
	assert.NotContains(t, screen.String(), "● $ ")
	select {
	case code := <-done:
		require.Equal(t, exitOK, code, screen.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not end")
	}
	// The run has written everything, but the reader of the terminal may
	// not have read it all yet: wait for the card's last line.
	require.True(t, screen.waitFor("exit 0"), screen.String())
	raw := screen.String()
	assert.Regexp(t, regexp.MustCompile(`\x1b\[\d+A\r\x1b\[J`), raw, "the live block is redrawn in place")
	final := raw[strings.LastIndex(raw, "\x1b[J")+len("\x1b[J"):]
	assert.Contains(t, final, "● $ "+cmd)
	for i := max(1, ticks-cardTerminalLines+1); i <= ticks; i++ {
		assert.Equal(t, 1, strings.Count(final, fmt.Sprintf("│ tick %d\r\n", i)), "the final card shows tick %d once", i)
	}
	assert.Contains(t, final, "exit 0")
}

// The live view keeps a terminal's block to its last lines, and a view
// that fell behind says how much it skipped.
func TestLiveViewBounded(t *testing.T) {
	var b strings.Builder
	h := newHuman(&b, humanOptions{Width: 80})
	h.event(&agent.ToolCallProgress{CallID: "c", Name: "bash", Output: "a\nb", Dropped: 2048})
	h.event(&agent.ToolCallProgress{CallID: "c", Name: "bash", Output: "c\r\nprogress 10%\rprogress 100%\n"})
	assert.Equal(t, "⋯ bash output:\n  │ … 2.0 KiB skipped\n  │ a\n  │ bc\n  │ progress 100%\n", b.String())
	assert.Equal(t, 4, h.settleLive("c"))

	b.Reset()
	h = newHuman(&b, humanOptions{Width: 80})
	h.spin = true // a terminal, without the ticking goroutine
	for i := range 20 {
		h.event(&agent.ToolCallProgress{CallID: "c", Name: "bash", Output: fmt.Sprintf("line %d\n", i)})
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
	h := newHuman(&b, humanOptions{Width: 80})
	h.spin = true // a terminal, without the ticking goroutine
	h.event(&agent.ToolCallStart{Call: harness.ToolCall{ID: "a", Name: "bash", Arguments: `{"command":"make a"}`}, Render: harness.RenderTerminal})
	h.event(&agent.ToolCallStart{Call: harness.ToolCall{ID: "b", Name: "fetch"}})
	h.event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a1\na2\n"})
	h.event(&agent.ToolCallProgress{CallID: "b", Name: "fetch", Output: "b1\nb2 half"})
	last := func() string { return b.String()[strings.LastIndex(b.String(), "\x1b[J")+3:] }
	assert.Equal(t, "  │ bash: a2\n  │ fetch: b2 half\n", last(), "one line per running call, in start order")
	h.event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a3 progress 10%\ra3 progress 90%"})
	assert.Equal(t, "  │ bash: a3 progress 90%\n  │ fetch: b2 half\n", last())
	h.event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "b", Name: "fetch"}, Result: harness.TextResult("fetched")})
	tail := last()
	assert.Contains(t, tail, "● fetch\n", "the card of the call that ended")
	assert.True(t, strings.HasSuffix(tail, "  │ a1\n  │ a2\n  │ a3 progress 90%\n"), "then the block of the one still running, its last lines: %q", tail)

	// Many at once: the block stays within its lines.
	b.Reset()
	h = newHuman(&b, humanOptions{Width: 80})
	h.spin = true
	for i := range 7 {
		id := fmt.Sprintf("c%d", i)
		h.event(&agent.ToolCallStart{Call: harness.ToolCall{ID: id, Name: "bash"}})
		h.event(&agent.ToolCallProgress{CallID: id, Name: "bash", Output: id + " out\n"})
	}
	assert.Equal(t, "  │ bash: c0 out\n  │ bash: c1 out\n  │ bash: c2 out\n  │ bash: c3 out\n  │ … 3 more running\n", last())

	// Piped, interleaved lines are attributed.
	b.Reset()
	h = newHuman(&b, humanOptions{Width: 80})
	h.event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a1\n"})
	h.event(&agent.ToolCallProgress{CallID: "b", Name: "fetch", Output: "b1\n"})
	h.event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a2\n"})
	assert.Equal(t, "⋯ bash output:\n  │ a1\n⋯ fetch output:\n  │ b1\n⋯ bash output:\n  │ a2\n", b.String())
}

// A notice while a live block is drawn (an MCP server's status line, say)
// goes above the block, which is drawn again below it.
func TestLiveBlockBelowNotice(t *testing.T) {
	var b strings.Builder
	h := newHuman(&b, humanOptions{Width: 80})
	h.spin = true // a terminal, without the ticking goroutine
	h.event(&agent.ToolCallProgress{CallID: "a", Name: "bash", Output: "a1\na2\n"})
	h.notice(noticeInfo, "mcp docs: connected (3 tools)")
	assert.Equal(t, "  │ a1\n  │ a2\n\x1b[2A\r\x1b[Jmcp docs: connected (3 tools)\n  │ a1\n  │ a2\n", b.String())
}
