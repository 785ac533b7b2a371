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
)

// superviseTurn is a turn with a plan updated twice, questions answered,
// and a steered message the turn could not read.
func superviseTurn() []agent.Event {
	items := func(s ...string) []harness.TodoItem {
		names := []string{"Read the failing test", "Fix the parser for quoted fields", "Run the whole test suite"}
		out := make([]harness.TodoItem, len(names))
		for i := range names {
			out[i] = harness.TodoItem{Content: names[i], Status: s[i]}
		}
		return out
	}
	todo := func(step int, id string, it []harness.TodoItem) []agent.Event {
		c := harness.ToolCall{ID: id, Name: "todo"}
		return []agent.Event{
			&agent.ToolCallStart{Step: step, Call: c, Render: harness.RenderTodo},
			&agent.ToolCallEnd{Step: step, Call: c, Result: &harness.ToolResult{Content: []harness.Block{harness.TextBlock("ok")},
				Render: &harness.Render{Kind: harness.RenderTodo, Title: "Plan", Todo: it}}},
			&agent.TodoUpdated{Step: step, CallID: id, Items: it},
			&agent.StepEnd{Step: step, Finish: "tool_calls", ToolCalls: 1},
		}
	}
	qs := []harness.Question{{Question: "Which database should the service use?", Choices: []string{"postgres", "sqlite"}}, {Question: "What is the table called?"}}
	ask := harness.ToolCall{ID: "q1", Name: "ask_user"}
	var evs []agent.Event
	evs = append(evs, todo(1, "t1", items(harness.TodoInProgress, harness.TodoPending, harness.TodoPending))...)
	evs = append(evs,
		&agent.ToolCallStart{Step: 2, Call: ask, Render: harness.RenderQuestions},
		&agent.ToolCallEnd{Step: 2, Call: ask, Result: &harness.ToolResult{Content: []harness.Block{harness.TextBlock("The user answered")},
			Render: &harness.Render{Kind: harness.RenderQuestions, Title: "Asked the user", Questions: qs, Answers: []string{"sqlite", ""}}}},
		&agent.StepEnd{Step: 2, Finish: "tool_calls", ToolCalls: 1})
	evs = append(evs, todo(3, "t2", items(harness.TodoDone, harness.TodoDone, harness.TodoInProgress))...)
	evs = append(evs,
		&agent.TextDelta{Step: 4, Text: "Fixed; the suite passes.\n"},
		&agent.SteerDelivered{Step: 4, Text: "also update the changelog", Queued: true},
		&agent.TurnEnd{Reason: "completed", Steps: 4, Queued: 1})
	return evs
}

// Piped, each todo call's card lists the plan; questions show their
// answers; a steered message the turn could not read says it is queued.
// On a terminal the plan is printed once, at the end of the turn. The
// screens at 80 and 120 columns are checked in.
func TestGoldenSupervise(t *testing.T) {
	for _, width := range []int{80, 120} {
		for _, tty := range []bool{false, true} {
			name := "supervise-piped-" + strconv.Itoa(width)
			if tty {
				name = "supervise-terminal-" + strconv.Itoa(width)
			}
			t.Run(name, func(t *testing.T) {
				var out lockedBuffer
				h := newHuman(&out, HumanOptions{Root: "/ws", Width: width})
				h.spin = tty
				at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
				h.now = func() time.Time { at = at.Add(time.Second); return at }
				h.BeginTurn("fix the parser", true)
				for _, ev := range superviseTurn() {
					h.Event(ev)
				}
				h.spin = false
				h.Close()
				got := out.String()
				for _, l := range strings.Split(got, "\n") {
					assert.LessOrEqual(t, utf8.RuneCountInString(l), width, "%q", l)
				}
				assert.Contains(t, got, "the turn ended before reading “also update the changelog”: it is queued and")
				assert.Contains(t, got, "What is the table called? → (no answer)")
				if tty {
					end := got[strings.Index(got, "Fixed;"):]
					assert.Equal(t, 1, strings.Count(end, "✓ Fix the parser"), "the plan is printed once, at the end")
				} else {
					assert.Equal(t, 2, strings.Count(got, "○ Run the whole test suite")+strings.Count(got, "▸ Run the whole test suite"), "each card lists the plan")
				}
				path := filepath.Join("testdata", "golden", name+".txt")
				if *update {
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test -run Golden -update to write it")
				assert.Equal(t, string(want), got)
			})
		}
	}
}

// A long plan is compact: the leading done items are one line, the last
// ones a count, within the room given.
func TestPlanLinesCompact(t *testing.T) {
	h := newHuman(&lockedBuffer{}, HumanOptions{Width: 40})
	var items []harness.TodoItem
	for i := range 12 {
		s := harness.TodoPending
		switch {
		case i < 5:
			s = harness.TodoDone
		case i == 5:
			s = harness.TodoInProgress
		}
		items = append(items, harness.TodoItem{Content: "step " + strconv.Itoa(i+1) + " with a rather long description that is cut", Status: s})
	}
	lines := h.planLines(items, 7)
	require.Len(t, lines, 7)
	assert.Equal(t, "Plan · 5/12 done", lines[0])
	assert.Equal(t, "  ✓ 5 items done", lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "  ▸ step 6 "), lines[2])
	assert.Equal(t, "  … 3 more", lines[6])
	for _, l := range lines {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 40, l)
	}
	// A short plan is whole.
	assert.Len(t, h.planLines(items[:3], 7), 4)
}

// The line typed during a turn replaces the spinner; its keys' hint
// follows while it fits, and the cursor is put back where it was.
func TestDraftLine(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Width: 60})
	h.spin = true
	h.BeginTurn("go", false)
	h.Draft(&Draft{})
	assert.Contains(t, out.String(), "thinking 0.0s · "+DraftHint, "the spinner says what typing does")
	h.Draft(&Draft{Text: "also this", Cursor: 4})
	s := out.String()
	assert.True(t, strings.HasSuffix(s, "\r» also this  ("+DraftHint+")\x1b[K\x1b[34D"), "%q", s)
	long := strings.Repeat("x", 100)
	h.Draft(&Draft{Text: long, Cursor: 100})
	s = out.String()
	last := s[strings.LastIndex(s, "\r"):]
	assert.NotContains(t, last, DraftHint, "no room for the hint")
	assert.LessOrEqual(t, utf8.RuneCountInString(strings.TrimSuffix(last, "\x1b[K")), 61)
	h.Draft(nil)
	h.spin = false
	h.Close()
}
