package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
)

const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyRight = "\x1b[C"
	keyLeft  = "\x1b[D"
)

func TestLineEditorKeys(t *testing.T) {
	hist := &history{entries: []string{"first", "second"}}
	tests := []struct {
		name  string
		keys  string
		want  string
		pos   int
		res   keyResult
		ahead string
	}{
		{"typing", "hello", "hello", 5, keyRedraw, ""},
		{"left and insert", "helo" + keyLeft + "l", "hello", 4, keyRedraw, ""},
		{"arrows reach the model as moves, not text", "ab" + keyLeft + keyLeft + keyRight + "X", "aXb", 2, keyRedraw, ""},
		{"home and end", "bc\x01a\x05d", "abcd", 4, keyRedraw, ""},
		{"home and end sequences", "bc\x1b[Ha\x1b[Fd\x1b[1~!", "!abcd", 1, keyRedraw, ""},
		{"backspace", "abcc\x7f", "abc", 3, keyRedraw, ""},
		{"delete", "abxc" + keyLeft + keyLeft + "\x1b[3~", "abc", 2, keyRedraw, ""},
		{"ctrl-u", "abc" + keyLeft + "\x15", "c", 0, keyRedraw, ""},
		{"ctrl-k", "abc" + keyLeft + keyLeft + "\x0b", "a", 1, keyRedraw, ""},
		{"ctrl-w", "go test ./...\x17", "go test ", 8, keyRedraw, ""},
		{"history up", keyUp, "second", 6, keyRedraw, ""},
		{"history up twice and down", keyUp + keyUp + keyDown, "second", 6, keyRedraw, ""},
		{"history keeps the draft", "dra" + keyUp + keyUp + keyDown + keyDown, "dra", 3, keyRedraw, ""},
		{"history stops at the oldest", keyUp + keyUp + keyUp, "first", 5, keyRedraw, ""},
		{"enter submits, the rest is typed ahead", "one\rtwo", "one", 3, keySubmit, "two"},
		{"ctrl-d on an empty line", "\x04", "", 0, keyEOF, ""},
		{"ctrl-d deletes under the cursor", "ab" + keyLeft + "\x04", "a", 1, keyRedraw, ""},
		{"ctrl-c as a byte", "ab\x03", "ab", 2, keyInterrupt, ""},
		{"utf-8", "né✓", "né✓", 3, keyRedraw, ""},
		{"unknown sequences are dropped", "a\x1b[15~b", "ab", 2, keyRedraw, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newLineEditor("› ", 2, hist, "")
			res, rest := e.feed([]byte(tt.keys))
			assert.Equal(t, tt.want, e.text())
			assert.Equal(t, tt.pos, e.pos)
			assert.Equal(t, tt.res, res)
			assert.Equal(t, tt.ahead, string(rest))
		})
	}
}

// Keys split across reads (an escape sequence, a UTF-8 character) are
// put together.
func TestLineEditorSplitKeys(t *testing.T) {
	e := newLineEditor("› ", 2, &history{}, "")
	in := []byte("ab" + keyLeft + "✓")
	for i := range in {
		e.feed(in[i : i+1])
	}
	assert.Equal(t, "a✓b", e.text())
	assert.Equal(t, 2, e.pos)
}

// A long line scrolls sideways: the rendered line never exceeds the
// width, and the cursor stays on screen.
func TestLineEditorRenderFitsWidth(t *testing.T) {
	e := newLineEditor("› ", 2, &history{}, strings.Repeat("x", 200)+"END")
	out := e.render(80)
	visible := strings.TrimSuffix(strings.TrimPrefix(out, "\r"), "\x1b[K")
	assert.LessOrEqual(t, len([]rune(visible)), 79)
	assert.True(t, strings.HasSuffix(visible, "END"), visible)
	assert.True(t, strings.HasPrefix(visible, "› …"), visible)

	e = newLineEditor("› ", 2, &history{}, "abc")
	e.feed([]byte(keyLeft + keyLeft))
	assert.Equal(t, "\r› abc\x1b[K\x1b[2D", e.render(80))
}

func TestHistoryPersisted(t *testing.T) {
	dir := t.TempDir()
	p := HistoryPath(dir, "/some/workspace")
	assert.NotEqual(t, p, HistoryPath(dir, "/other/workspace"), "one history per workspace")
	h, err := loadHistory(p)
	require.NoError(t, err)
	require.NoError(t, h.add("first"))
	require.NoError(t, h.add("two\nlines"))
	require.NoError(t, h.add("two\nlines")) // a repeat is kept once
	require.NoError(t, h.add("  "))         // blank: not kept
	again, err := loadHistory(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"first", "two\nlines"}, again.entries)

	for i := range 2*historyLimit + 5 {
		require.NoError(t, again.add("p"+itoa(i)))
	}
	n, err := countLines(p)
	require.NoError(t, err)
	assert.LessOrEqual(t, n, 2*historyLimit, "the file is trimmed")
	last, err := loadHistory(p)
	require.NoError(t, err)
	assert.Len(t, last.entries, historyLimit)
	assert.Equal(t, "p"+itoa(2*historyLimit+4), last.entries[historyLimit-1])
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".history-*"))
	assert.Empty(t, leftovers)
	_, err = os.Stat(p)
	require.NoError(t, err)
}

// Without colour, reasoning lines carry a mark; -reasoning=false hides
// them.
func TestReasoningMarkedWithoutColour(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Reasoning: true})
	h.BeginTurn("q", false)
	h.Event(&agent.ReasoningDelta{Step: 1, Text: "first thought\nsec"})
	h.Event(&agent.ReasoningDelta{Step: 1, Text: "ond thought\n"})
	h.Event(&agent.TextDelta{Step: 1, Text: "The answer."})
	h.Close()
	assert.Contains(t, out.String(), ReasoningMark+"first thought\n"+ReasoningMark+"second thought\n")
	assert.Contains(t, out.String(), "\nThe answer.")
	assert.NotContains(t, out.String(), ReasoningMark+"The answer")
}

// At 80 columns the banner and the footer keep to one line.
func TestBannerAndFooterFitWidth(t *testing.T) {
	var out lockedBuffer
	h := newHuman(&out, HumanOptions{Width: 80})
	h.Banner(BannerInfo{Model: "deepseek-reasoner", BaseURL: "https://api.deepseek.com/v1", Workspace: "/home/someone/src/a/rather/long/path/to/the/project/workspace", SessionID: "20261201-abcdef"})
	h.BeginTurn("q", false)
	h.Event(&agent.TurnEnd{Reason: "completed", Steps: 12, Usage: harness.Usage{InputTokens: 123456789, CacheHitTokens: 120000000, OutputTokens: 98765432, ReasoningTokens: 5432100}})
	h.Close()
	for _, l := range strings.Split(out.String(), "\n") {
		assert.LessOrEqual(t, len([]rune(l)), 79, "%q", l)
	}
	assert.Contains(t, out.String(), "coder · deepseek-reasoner · …")
	assert.Contains(t, out.String(), "project/workspace\n")
}
