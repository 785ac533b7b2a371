package ui

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/tools/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden screens under testdata/golden")

// goldenTurn is a scripted turn: reasoning, a read, an edit, a bash
// command whose output streams live, the answer and the footer.
func goldenTurn() []agent.Event {
	exit0 := 0
	old := "package main\n\nfunc add(a, b int) int { return a - b }\n"
	bash := harness.ToolCall{ID: "c3", Name: "bash", Arguments: `{"command":"go test ./..."}`}
	return []agent.Event{
		&agent.ReasoningDelta{Step: 1, Text: "The test says add subtracts.\nI will read the file first."},
		&agent.TextDelta{Step: 1, Text: "Let me look at calc.go."},
		&agent.ToolCallStart{Step: 1, Call: harness.ToolCall{ID: "c1", Name: "read", Arguments: `{"file_path":"calc.go"}`}, Render: harness.RenderLocations},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c1", Name: "read"}, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("1: package main")},
			Render:  &harness.Render{Kind: harness.RenderLocations, Title: "Read calc.go", Locations: []harness.Location{{Path: "/ws/calc.go", StartLine: 1, EndLine: 3}}},
		}},
		&agent.StepEnd{Step: 1, Finish: "tool_calls", ToolCalls: 1},
		&agent.ToolCallStart{Step: 2, Call: harness.ToolCall{ID: "c2", Name: "edit"}, Render: harness.RenderDiff},
		&agent.ToolCallEnd{Step: 2, Call: harness.ToolCall{ID: "c2", Name: "edit"}, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("edited")},
			Render: &harness.Render{Kind: harness.RenderDiff, Title: "Edit calc.go", Diff: &harness.Diff{
				Path: "/ws/calc.go", OldText: &old, NewText: "package main\n\nfunc add(a, b int) int { return a + b }\n", Added: 1, Removed: 1,
				Hunks: []harness.Hunk{{OldStart: 2, OldLines: 2, NewStart: 2, NewLines: 2, Lines: []string{" ", "-func add(a, b int) int { return a - b }", "+func add(a, b int) int { return a + b }"}}},
			}},
		}},
		&agent.StepEnd{Step: 2, Finish: "tool_calls", ToolCalls: 1},
		&agent.ToolCallStart{Step: 3, Call: bash, Render: harness.RenderTerminal},
		&agent.ToolCallProgress{Step: 3, CallID: "c3", Name: "bash", Output: "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n"},
		&agent.ToolCallProgress{Step: 3, CallID: "c3", Name: "bash", Output: "PASS\nok  \texample.com/calc\t0.004s"},
		&agent.ToolCallEnd{Step: 3, Call: bash, Duration: 1500 * time.Millisecond, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("ok")},
			Render: &harness.Render{Kind: harness.RenderTerminal, Title: "go test ./...", Terminal: &harness.Terminal{
				Command: "go test ./...", Cwd: "/ws", Output: "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\nPASS\nok  \texample.com/calc\t0.004s\n", ExitCode: &exit0, Status: "exited",
			}},
		}},
		&agent.StepEnd{Step: 3, Finish: "tool_calls", ToolCalls: 1},
		&agent.TextDelta{Step: 4, Text: "Fixed: add now adds, and the tests pass.\n"},
		&agent.TurnEnd{Reason: "completed", Steps: 4, Usage: harness.Usage{InputTokens: 12_400, CacheHitTokens: 9_800, OutputTokens: 310, ReasoningTokens: 40}},
	}
}

// The coder's screens at 80 and 120 columns, piped and on a terminal
// (without colour), are the checked-in ones; go test -run Golden
// -update rewrites them.
func TestGoldenScreens(t *testing.T) {
	for _, width := range []int{80, 120} {
		for _, tty := range []bool{false, true} {
			name := "piped-" + strconv.Itoa(width)
			if tty {
				name = "terminal-" + strconv.Itoa(width)
			}
			t.Run(name, func(t *testing.T) {
				var out lockedBuffer
				h := newHuman(&out, HumanOptions{Reasoning: true, Root: "/ws", Width: width})
				h.spin = tty // the redraws, without the ticking goroutine
				at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
				h.now = func() time.Time { at = at.Add(time.Second); return at }
				h.Banner(BannerInfo{Model: "deepseek-chat", BaseURL: "https://api.example.com/v1", Workspace: "/ws", SessionID: "20260102-030405-abcdef", Cwd: "/ws"})
				h.BeginTurn("fix the add test", true)
				for _, ev := range goldenTurn() {
					h.Event(ev)
				}
				h.spin = false // no goroutine to stop
				h.Close()
				got := out.String()
				path := filepath.Join("testdata", "golden", name+".txt")
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test -run Golden -update to write it")
				assert.Equal(t, string(want), got)
			})
		}
	}
}

// The MCP servers' events while the coder runs are one dim status line
// each, the checked-in screen; those before the view is attached (the
// start-up lines sum them up) and after it is detached are not shown.
func TestGoldenMCPEvents(t *testing.T) {
	evs := []mcp.Event{
		{Kind: mcp.EventStopped, Server: "docs", Err: errors.New("mcp: the server exited: exit status 1")},
		{Kind: mcp.EventConnected, Server: "docs", Message: "3 tools"},
		{Kind: mcp.EventToolsChanged, Server: "docs", Message: "4 tools"},
		{Kind: mcp.EventToolSkipped, Server: "docs", Tool: "mcp__docs__bad", Err: errors.New("its input schema is not an object")},
		{Kind: mcp.EventConnectFailed, Server: "search", Err: errors.New("mcp: connecting to search: dial tcp: connection refused\nretry later")},
	}
	for _, color := range []bool{false, true} {
		var out lockedBuffer
		h := newHuman(&out, HumanOptions{Color: color, Root: "/ws", Width: 80})
		var m MCPEvents
		m.Event(mcp.Event{Kind: mcp.EventConnected, Server: "early", Message: "1 tools"})
		m.Attach(h)
		for _, e := range evs {
			m.Event(e)
		}
		m.Attach(nil)
		m.Event(mcp.Event{Kind: mcp.EventStopped, Server: "late", Err: errors.New("closed")})
		h.Close()
		got := out.String()
		assert.NotContains(t, got, "mcp early")
		assert.NotContains(t, got, "mcp late")
		if color {
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			events := 0
			for _, l := range lines {
				assert.True(t, strings.HasPrefix(l, "\x1b["+sgrDim+"m") && strings.HasSuffix(l, "\x1b[0m"), "dim: %q", l)
				if !strings.HasPrefix(l, "\x1b["+sgrDim+"m  ") {
					events++ // not a wrapped line's continuation
				}
			}
			assert.Equal(t, len(evs), events)
			continue
		}
		path := filepath.Join("testdata", "golden", "mcp-events.txt")
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run Golden -update to write it")
		assert.Equal(t, string(want), got)
	}
}
