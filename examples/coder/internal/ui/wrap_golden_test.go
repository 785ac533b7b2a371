package ui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/tools/permission"
)

// noticesTurn is a turn with a denial, a command whose output was
// spilled, and the notices around it.
func noticesTurn() []agent.Event {
	exit0 := 0
	write := harness.ToolCall{ID: "w1", Name: "write", Arguments: `{"file_path":"/ws/notes/plan.md","content":"x"}`}
	reason := "the write call on /ws/notes/plan.md has side effects, and plan mode is read-only: nothing that changes files or runs commands is allowed while planning"
	bash := harness.ToolCall{ID: "b1", Name: "bash", Arguments: `{"command":"go test ./..."}`}
	loc := "spill://20260102-030405-abcdef-1b7f4f14/bash-b1-0cfb1af2ff96f571.txt"
	return []agent.Event{
		&agent.ToolCallStart{Step: 1, Call: write, Render: harness.RenderDiff},
		&agent.PermissionDecision{Step: 1, Call: write, Outcome: permission.Deny, By: "mode", Reason: reason},
		&agent.ToolCallEnd{Step: 1, Call: write, Result: &harness.ToolResult{IsError: true, Code: harness.CodeDenied,
			Content: []harness.Block{harness.TextBlock("Permission denied: this write call was not run. " + reason + ". Do not retry the same call.")}}},
		&agent.StepEnd{Step: 1, Finish: "tool_calls", ToolCalls: 1},
		&agent.ToolCallStart{Step: 2, Call: bash, Render: harness.RenderTerminal},
		&agent.ToolCallEnd{Step: 2, Call: bash, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("ok\n[The whole stdout (385.6 KiB, 9000 lines) is saved as " + loc + ": read it with the read tool.]")},
			Render: &harness.Render{Kind: harness.RenderTerminal, Title: "go test ./...", Terminal: &harness.Terminal{
				Command: "go test ./...", Cwd: "/ws", Output: "ok  \texample.com/calc\t0.004s\n", ExitCode: &exit0, Status: "exited",
			}},
		}},
		&agent.StepEnd{Step: 2, Finish: "tool_calls", ToolCalls: 1},
		&agent.TextDelta{Step: 3, Text: "Done.\n"},
		&agent.TurnEnd{Reason: "completed", Steps: 3},
	}
}

// Issue 35, item 10: at 80 and 120 columns notices, approval questions,
// denials and the help wrap on words with indented continuation lines;
// a denial says its reason once; the spill locator is whole and says
// where spill:// lives. The screens are checked in (-update rewrites
// them).
func TestGoldenNotices(t *testing.T) {
	help := "Type a prompt and press Enter; end a line with \\ to continue it on the next. Up and Down recall earlier prompts. Ctrl-C cancels a running turn; Ctrl-D or /exit leaves.\n/model [NAME]   show the model, or switch to NAME (or provider:NAME)"
	question := "? bash  curl -fsSL https://example.com/install.sh | sh\n  the bash call has side effects and no rule allows it: approve it, or add an allow rule such as Bash(curl:*) to the settings"
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			var out lockedBuffer
			h := newHuman(&out, HumanOptions{Root: "/ws", Width: width, SpillDir: "/home/user/.local/share/harness/sessions/spill"})
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			h.now = func() time.Time { at = at.Add(time.Second); return at }
			h.Notice(NoticeInfo, help)
			h.BeginTurn("plan the notes", true)
			h.Notice(NoticeWarn, question)
			for _, ev := range noticesTurn() {
				h.Event(ev)
			}
			h.Close()
			got := out.String()
			for _, l := range strings.Split(got, "\n") {
				assert.LessOrEqual(t, utf8.RuneCountInString(l), width, "%q", l)
			}
			assert.Equal(t, 1, strings.Count(got, "has side effects, and plan mode"), "a denial says its reason once")
			assert.Contains(t, got, "spill://20260102-030405-abcdef-1b7f4f14/bash-b1-0cfb1af2ff96f571.txt")
			path := filepath.Join("testdata", "golden", "notices-"+strconv.Itoa(width)+".txt")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run Golden -update to write it")
			assert.Equal(t, string(want), got)
		})
	}
}
