package ui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
)

func TestColorEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		env  []string
		want bool
	}{
		{"terminal", true, []string{"TERM=xterm-256color"}, true},
		{"terminal without TERM", true, nil, true},
		{"pipe", false, []string{"TERM=xterm-256color"}, false},
		{"NO_COLOR", true, []string{"NO_COLOR=1", "TERM=xterm"}, false},
		{"NO_COLOR any value", true, []string{"NO_COLOR=false"}, false},
		{"dumb terminal", true, []string{"TERM=dumb"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ColorEnabled(tc.tty, envOf(tc.env...)))
		})
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/out")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "a regular file")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, IsTerminal(w), "a pipe")
	assert.False(t, IsTerminal(&lockedBuffer{}), "not a file")
	assert.False(t, IsTerminal((*os.File)(nil)))
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, IsTerminal(null), "a character device that is not a terminal")
}

// sampleTurn is a turn with one card of each render intent, text,
// reasoning and every kind of notice.
func sampleTurn() []agent.Event {
	exit1 := 1
	old := "a\nb\n"
	return []agent.Event{
		&agent.ReasoningDelta{Step: 1, Text: "Thinking it over."},
		&agent.TextDelta{Step: 1, Text: "Let me look."},
		&agent.ToolCallStart{Step: 1, Call: harness.ToolCall{ID: "c1", Name: "read", Arguments: `{"file_path":"a.txt"}`}, Render: harness.RenderLocations},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c1", Name: "read"}, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("1: a")},
			Render:  &harness.Render{Kind: harness.RenderLocations, Title: "Read a.txt", Locations: []harness.Location{{Path: "/ws/a.txt", StartLine: 1, EndLine: 2}}},
		}},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c2", Name: "edit"}, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("edited")},
			Render: &harness.Render{Kind: harness.RenderDiff, Title: "Edit /ws/a.txt", Diff: &harness.Diff{
				Path: "/ws/a.txt", OldText: &old, NewText: "a\nc\n", Added: 1, Removed: 1,
				Hunks: []harness.Hunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []string{" a", "-b", "+c"}}},
			}},
		}},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c3", Name: "bash"}, Duration: 2 * time.Second, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("FAIL")},
			Render: &harness.Render{Kind: harness.RenderTerminal, Title: "run the tests", Terminal: &harness.Terminal{
				Command: "go test ./...", Cwd: "/ws/sub", Output: "--- FAIL: TestX\nFAIL\n", ExitCode: &exit1, Status: "exited",
			}},
		}},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c4", Name: "note"}, Result: &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("one\ntwo\nthree\nfour\nfive\nsix")},
			Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "Note"},
		}},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c6", Name: "look"}, Result: &harness.ToolResult{
			Content: []harness.Block{harness.Block{Type: harness.BlockImage, Image: &harness.Image{Name: "/ws/shot.png", Width: 4, Height: 3, MediaType: "image/png"}}},
		}},
		&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c5", Name: "fetch", Arguments: `{"url":"https://example.com"}`},
			Result: harness.ErrorResult("timeout", "The request timed out after 30 s. Try again later.")},
		&agent.ModelUsage{Step: 1, Model: "m", Usage: harness.Usage{InputTokens: 1000, OutputTokens: 50}},
		&agent.ReminderAdded{Step: 1, Reminder: harness.Reminder{Source: "repeat_guard", Text: "You called read 3 times in a row.\nTry something else."}},
		&agent.StepEnd{Step: 1, Finish: "tool_calls", ToolCalls: 4},
		&agent.ContextPruned{Step: 2, Calls: []string{"c1", "c0"}, EstimatedTokens: 512_000},
		&agent.ContextCompacted{Step: 2, Messages: 40, SourceTokens: 600_000, SummaryTokens: 3_000},
		&agent.Retry{Step: 2, Attempt: 1, Delay: 2 * time.Second, Err: model.NewError(harness.CodeRateLimit, "slow down", &model.ProviderError{Status: 429})},
		&agent.TextDelta{Step: 2, Text: "All done.\n"},
		&agent.TurnEnd{Reason: session.ReasonCompleted, Steps: 2, Usage: harness.Usage{InputTokens: 2000, CacheHitTokens: 1500, OutputTokens: 80, ReasoningTokens: 20}},
	}
}

func renderSample(o HumanOptions) string {
	var out lockedBuffer
	h := newHuman(&out, o)
	h.BeginTurn("do it", true)
	for _, ev := range sampleTurn() {
		h.Event(ev)
	}
	h.Close()
	return out.String()
}

// Every render intent gets its card, and notices get a line each.
func TestHumanCards(t *testing.T) {
	out := renderSample(HumanOptions{Root: "/ws", Reasoning: true})
	for _, want := range []string{
		"› do it\n",
		"Thinking it over.\n\nLet me look.\n\n● Read a.txt\n  a.txt:1-2\n",
		"● Edit a.txt  +1 -1 · \n"[:len("● Edit a.txt  +1 -1")],
		"  @@ -1,2 +1,2 @@\n  1   a\n  2 - b\n  2 + c\n",
		"● run the tests  2.0s\n  $ go test ./...  (in sub)\n  │ --- FAIL: TestX\n  │ FAIL\n  exit 1\n",
		"● Note\n  one\n  two\n  three\n  four\n  … 2 more lines\n",
		"● look\n  [image shot.png, 4x3, image/png]\n",
		"✗ fetch https://example.com  timeout\n  The request timed out after 30 s. Try again later.\n",
		"⚑ repeat_guard: You called read 3 times in a row.\n",
		"⌁ context: 2 superseded tool results replaced by placeholders (about 512.0k tokens before)\n",
		"⌁ context: 40 earlier messages summarized (600.0k → 3.0k tokens)\n",
		"↻ model: rate_limit (HTTP 429): slow down; retrying in 2.0s (attempt 1)\n",
		"All done.\n\n── completed · 2 steps · ",
		" · 2.0k in (1.5k cached, 75%) · 80 out (20 reasoning)\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "/ws/")

	hidden := renderSample(HumanOptions{Root: "/ws", Reasoning: false})
	assert.NotContains(t, hidden, "Thinking it over.")
	assert.Contains(t, hidden, "Let me look.")
}

// Colours are ANSI escapes when enabled, and none at all otherwise.
func TestHumanColors(t *testing.T) {
	out := renderSample(HumanOptions{Root: "/ws", Color: true, Reasoning: true})
	for _, want := range []string{
		"\x1b[32m+ c\x1b[0m",
		"\x1b[31m- b\x1b[0m",
		"\x1b[2m2\x1b[0m ",
		"\x1b[36m@@ -1,2 +1,2 @@\x1b[0m",
		"\x1b[2mThinking it over.\x1b[0m",
		"\x1b[31mexit 1\x1b[0m",
		"\x1b[31m✗\x1b[0m",
	} {
		assert.Contains(t, out, want)
	}
	plain := renderSample(HumanOptions{Root: "/ws"})
	assert.NotContains(t, plain, "\x1b[")
}

// Output lines cannot move the cursor: escapes in a command's output
// are dropped from its card.
func TestCardsDropControlCharacters(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{})
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "c", Name: "bash"}, Result: &harness.ToolResult{
		Render: &harness.Render{Kind: harness.RenderTerminal, Terminal: &harness.Terminal{Command: "x", Output: "\x1b[2Jred\rover\bwrite\tend"}},
	}})
	h.Close()
	assert.NotContains(t, out.String(), "\x1b")
	assert.NotContains(t, out.String(), "\r")
	assert.NotContains(t, out.String(), "\b")
	assert.Contains(t, out.String(), "│ [2Jredoverwrite end")
}

// The spinner draws only at the start of a line, says what it waits
// for, and is erased before anything else is written.
func TestSpinner(t *testing.T) {
	leakcheck.Check(t)
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Spinner: true, Reasoning: true})
	h.BeginTurn("go", false)
	h.tick()
	assert.Contains(t, out.String(), "⠋ thinking 0.")
	h.Event(&agent.TextDelta{Text: "Hello"})
	s := out.String()
	i := strings.LastIndex(s, "thinking")
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, s[i:], "\r\x1b[KHello", "the spinner is erased before the text")

	before := out.String()
	h.tick()
	assert.Equal(t, before, out.String(), "no spinner in the middle of a line")

	h.Event(&agent.ToolCallStart{Call: harness.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"go test ./..."}`}})
	h.tick()
	assert.Contains(t, out.String(), "running bash: go test ./...")
	h.Event(&agent.ToolCallStart{Call: harness.ToolCall{ID: "c2", Name: "read"}})
	h.tick()
	assert.Contains(t, out.String(), "running bash, read")
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "c2", Name: "read"}, Result: harness.TextResult("ok")})
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "c1", Name: "bash"}, Result: harness.TextResult("ok")})
	h.Event(&agent.TurnEnd{Reason: session.ReasonCompleted, Steps: 1})
	h.tick()
	h.Close()
	end := out.String()
	assert.True(t, strings.HasSuffix(end, "\n"), "the output ends with a whole line: %q", end[max(0, len(end)-40):])
	assert.NotContains(t, end[strings.LastIndex(end, "── completed"):], "⠋")
}

// Every event type marshals to one JSON line with its type,
// errors included with their code.
func TestJSONViewEveryEvent(t *testing.T) {
	events := append(sampleTurn(),
		&agent.ToolCallEnd{Call: harness.ToolCall{ID: "x", Name: "t", Arguments: `{"broken":`}},
		&agent.TurnEnd{Reason: session.ReasonError, Steps: 1, Err: model.NewError(harness.CodeAuth, "bad key", &model.ProviderError{Status: 401})},
		&agent.TurnEnd{Reason: session.ReasonCancelled, Steps: 1, Err: context.Canceled},
		&agent.TurnEnd{Reason: session.ReasonError, Steps: 1, Err: errors.New("disk full")},
		&agent.TextDelta{Text: "invalid \xff utf-8"},
	)
	var out, errOut lockedBuffer
	j := &jsonView{out: &out, errOut: &errOut}
	for _, ev := range events {
		j.Event(ev)
	}
	j.Notice(NoticeWarn, "for people")
	lines := jsonLines(t, out.String())
	require.Len(t, lines, len(events))
	kinds := map[string]bool{}
	for i, l := range lines {
		want, err := agent.MarshalEvent(events[i])
		require.NoError(t, err)
		var wantLine map[string]any
		require.NoError(t, json.Unmarshal(want, &wantLine))
		assert.Equal(t, wantLine, l, "line %d is the event as agent.MarshalEvent encodes it", i)
		assert.NotEmpty(t, l["type"], "line %d", i)
		kinds[l["type"].(string)] = true
	}
	for _, k := range []string{"text_delta", "reasoning_delta", "tool_call_start", "tool_call_end", "usage", "retry",
		"reminder", "step_end", "turn_end", "context_pruned", "context_compacted"} {
		assert.True(t, kinds[k], "no %s line", k)
	}
	n := len(lines)
	assert.Equal(t, map[string]any{"code": "auth", "message": "model: auth (HTTP 401): bad key"}, lines[n-4]["error"])
	assert.Equal(t, "aborted", lines[n-3]["error"].(map[string]any)["code"])
	assert.Equal(t, "unknown", lines[n-2]["error"].(map[string]any)["code"])
	for _, l := range lines {
		if l["type"] == "retry" {
			assert.Equal(t, "rate_limit", l["error"].(map[string]any)["code"])
		}
	}
	assert.Equal(t, "for people\n", errOut.String())
}

func TestHelpers(t *testing.T) {
	assert.Equal(t, "950", Count(950))
	assert.Equal(t, "12.3k", Count(12_345))
	assert.Equal(t, "1.5M", Count(1_500_000))
	assert.Equal(t, "1.5s", seconds(1500*time.Millisecond))
	assert.Equal(t, "2m05s", seconds(125*time.Second))
	assert.Equal(t, "héll…", cut("héllo wörld", 5))
	assert.Equal(t, "short", cut("short", 5))
	assert.Equal(t, "main.go", firstStringArg(`{"n": 3, "file_path": "main.go", "x": "y"}`))
	assert.Equal(t, "", firstStringArg(`{"n": 3}`))
	assert.Equal(t, "not json", firstStringArg(`not json`))
	assert.Equal(t, "a b", oneLine(" a\n\tb "))

	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Root: "/ws"})
	assert.Equal(t, ".", h.rel("/ws"))
	assert.Equal(t, "a/b.go", h.rel("/ws/a/b.go"))
	assert.Equal(t, "/wsx/b.go", h.rel("/wsx/b.go"))
	assert.Equal(t, "/other", h.rel("/other"))
}

func TestMarshalLine(t *testing.T) {
	b, err := marshalLine(map[string]any{"a": 1})
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n", string(b))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
}

// Long diffs are cut at the card's limit with a count of what is left;
// a change too large to diff says so.
func TestDiffCardLimits(t *testing.T) {
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = "+line"
	}
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Root: "/ws"})
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "c", Name: "write"}, Result: &harness.ToolResult{
		Render: &harness.Render{Kind: harness.RenderDiff, Title: "Create /ws/big.txt", Diff: &harness.Diff{
			Path: "/ws/big.txt", Added: 100, Hunks: []harness.Hunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 100, Lines: lines}},
		}},
	}})
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "d", Name: "write"}, Result: &harness.ToolResult{
		Render: &harness.Render{Kind: harness.RenderDiff, Title: "Write /ws/huge.bin", Diff: &harness.Diff{Path: "/ws/huge.bin", Truncated: true}},
	}})
	h.Close()
	s := out.String()
	assert.Contains(t, s, "● Create big.txt  +100 -0\n  @@ -0,0 +1,100 @@\n    1 + line\n")
	assert.Contains(t, s, "   59 + line\n  … 41 more lines\n")
	assert.NotContains(t, s, "   60 + line")
	assert.Contains(t, s, "● Write huge.bin  +0 -0\n  huge.bin: too large to show\n")
}

// Dimmed reasoning that ends a line does not get a second line end.
func TestReasoningLineEnds(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Color: true, Reasoning: true})
	h.Event(&agent.ReasoningDelta{Text: "step one\n"})
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "c", Name: "x"}, Result: harness.TextResult("ok")})
	h.Close()
	assert.Contains(t, out.String(), "\x1b[2mstep one\n\x1b[0m\n\x1b[32m●")
}

// Generic cards skip blank lines, so their few lines say something.
func TestGenericCardSkipsBlankLines(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{})
	h.Event(&agent.ToolCallEnd{Call: harness.ToolCall{ID: "c", Name: "search"}, Result: harness.TextResult("header\n\n  \nfirst\n\nsecond\nthird\nfourth\n")})
	h.Close()
	assert.Equal(t, "● search\n  header\n  first\n  second\n  third\n  … 1 more line\n", out.String())
}

// A cancelled command's output is shown once, in its card, followed by
// the note saying it was cancelled.
func TestCancelledCommandShownOnce(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Root: "/ws"})
	h.BeginTurn("q", false)
	h.Event(&agent.ToolCallEnd{Step: 1, Call: harness.ToolCall{ID: "c1", Name: "bash"}, Result: &harness.ToolResult{
		IsError: true, Code: harness.CodeAborted,
		Content: []harness.Block{harness.TextBlock("tick 1\ntick 2\n[The command was cancelled after 1.2 s; its process group was stopped.]\n[cwd /ws]")},
		Render: &harness.Render{Kind: harness.RenderTerminal, Title: "while true; do echo tick; sleep 1; done", Terminal: &harness.Terminal{
			Command: "while true; do echo tick; sleep 1; done", Cwd: "/ws", Output: "tick 1\ntick 2\n", Status: "cancelled"}},
	}})
	h.Close()
	s := out.String()
	assert.Equal(t, 1, strings.Count(s, "tick 1"), s)
	assert.Equal(t, 1, strings.Count(s, "tick 2"), s)
	assert.Contains(t, s, "The command was cancelled after 1.2 s")
	assert.NotContains(t, s, "[cwd")
}
