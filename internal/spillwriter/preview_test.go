package spillwriter

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools"
)

const testLocator = tools.OutputScheme + "sess-0123abcd/bash-call_1-0123456789abcdef.txt"

func wholeSource(text string) Source {
	return Source{Head: text, Tail: text, Size: int64(len(text)), Newlines: int64(strings.Count(text, "\n"))}
}

// streamSource is what a Writer with this limit keeps of text.
func streamSource(text string, limit int) Source {
	head := text[:min(limit, len(text))]
	tail := text[len(text)-min(limit, len(text)):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) && len(text)-len(tail) > 0 {
		tail = tail[1:]
	}
	return Source{Head: head, Tail: tail, Size: int64(len(text)), Newlines: int64(strings.Count(text, "\n"))}
}

var omittedRE = regexp.MustCompile(`(\d+) of (\d+) bytes omitted`)

// checkPreview asserts everything a preview promises about text.
func checkPreview(t *testing.T, text string, limit int, p Preview) {
	t.Helper()
	require.LessOrEqual(t, len(p.Text), limit, "the preview fits the limit")
	require.Equal(t, p.Head+p.Notice+p.Tail, p.Text)
	require.True(t, strings.HasPrefix(text, p.Head), "head is a prefix")
	require.True(t, strings.HasSuffix(text, p.Tail), "tail is a suffix")
	require.Equal(t, int64(len(text)), int64(len(p.Head))+p.Omitted+int64(len(p.Tail)), "counts add up")
	require.Positive(t, p.Omitted)
	if utf8.ValidString(text) {
		require.True(t, utf8.ValidString(p.Head), "head cut on a rune boundary")
		require.True(t, utf8.ValidString(p.Tail), "tail cut on a rune boundary")
	}
	if m := omittedRE.FindStringSubmatch(p.Notice); m != nil {
		require.Equal(t, strconv.FormatInt(p.Omitted, 10), m[1])
		require.Equal(t, strconv.Itoa(len(text)), m[2])
	}
	// The announced lines cover exactly the omitted bytes.
	first := int64(strings.Count(text[:len(p.Head)], "\n")) + 1
	last := int64(strings.Count(text[:len(text)-len(p.Tail)-1], "\n")) + 1
	require.Equal(t, first, p.FirstLine, "first omitted line")
	require.Equal(t, last, p.LastLine, "last omitted line")
}

func TestPreviewKeepsHeadAndTail(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %04d of the build log\n", i)
	}
	text := b.String()
	p, ok := BuildPreview(wholeSource(text), 2000, tools.Stored{Locator: testLocator, Size: int64(len(text))}, nil)
	require.True(t, ok)
	checkPreview(t, text, 2000, p)
	assert.True(t, strings.HasPrefix(p.Text, "line 0001 of the build log\n"))
	assert.True(t, strings.HasSuffix(p.Text, "line 5000 of the build log\n"))
	assert.True(t, strings.HasSuffix(p.Head, "\n"), "head ends at a line boundary")
	assert.True(t, strings.HasPrefix(p.Tail, "line "), "tail starts at a line boundary")
	assert.Greater(t, len(p.Tail), len(p.Head), "the tail gets the larger share")
	assert.Contains(t, p.Notice, fmt.Sprintf("%d of %d bytes omitted here", p.Omitted, len(text)))
	assert.Contains(t, p.Notice, fmt.Sprintf("lines %d-%d of 5000", p.FirstLine, p.LastLine))
	assert.Contains(t, p.Notice, fmt.Sprintf(`call read with file_path %q, offset %d and limit %d`, testLocator, p.FirstLine, p.LastLine-p.FirstLine+1))
	// The head and tail are whole lines, so the omitted lines are exactly
	// those not shown.
	headLines := strings.Count(p.Head, "\n")
	tailLines := strings.Count(p.Tail, "\n")
	assert.Equal(t, int64(headLines+1), p.FirstLine)
	assert.Equal(t, int64(5000-tailLines), p.LastLine)
}

func TestPreviewUTF8(t *testing.T) {
	// No newlines and four-byte runes: every cut must fall between runes.
	text := strings.Repeat("𝄞ü", 3000)
	for limit := 1024; limit < 1040; limit++ {
		p, ok := BuildPreview(wholeSource(text), limit, tools.Stored{Locator: testLocator}, nil)
		require.True(t, ok)
		checkPreview(t, text, limit, p)
		assert.NotEmpty(t, p.Head)
		assert.NotEmpty(t, p.Tail)
		assert.Equal(t, int64(1), p.FirstLine)
		assert.Equal(t, int64(1), p.LastLine)
	}
}

func TestPreviewSaveFailedNotice(t *testing.T) {
	text := strings.Repeat("x\n", 10_000)
	p, ok := BuildPreview(wholeSource(text), 1500, tools.Stored{}, errors.New("disk full"))
	require.True(t, ok)
	checkPreview(t, text, 1500, p)
	assert.Contains(t, p.Notice, "could not be saved (disk full)")
	assert.NotContains(t, p.Notice, "call read")
}

func TestPreviewLongLocatorFallsBack(t *testing.T) {
	text := strings.Repeat("y", 10_000)
	loc := tools.OutputScheme + strings.Repeat("l", 600)
	p, ok := BuildPreview(wholeSource(text), MinThreshold, tools.Stored{Locator: loc}, nil)
	require.True(t, ok, "the short notice fits")
	checkPreview(t, text, MinThreshold, p)
	assert.Contains(t, p.Notice, loc)
	_, ok = BuildPreview(wholeSource(text), MinThreshold, tools.Stored{Locator: tools.OutputScheme + strings.Repeat("l", 2000)}, nil)
	assert.False(t, ok, "a locator longer than the limit cannot be announced")
}

func FuzzPreview(f *testing.F) {
	f.Add("line\n", uint8(3), uint16(5), 20, false)
	f.Add("ab\n", uint8(255), uint16(400), 60, false)
	f.Add("é", uint8(200), uint16(300), 60, true)
	f.Add("\n", uint8(255), uint16(200), 60, true)
	f.Add("𝄞𝄞𝄞\nzzzz", uint8(150), uint16(1200), 40, false)
	f.Add("\xff\xfe\x80", uint8(90), uint16(100), 10, true)
	f.Fuzz(func(t *testing.T, unit string, rep uint8, limit16 uint16, locLen int, stream bool) {
		// Repeat the unit so short fuzz inputs still make outputs longer
		// than realistic limits.
		if unit == "" {
			t.Skip()
		}
		text := strings.Repeat(unit, min(1+int(rep)*int(rep)/16, 1+(256<<10)/len(unit)))
		if len(text) < 2 {
			t.Skip()
		}
		limit := int(limit16) % len(text)
		locLen = max(0, min(locLen, 400))
		st := tools.Stored{Size: int64(len(text))}
		if locLen > 0 {
			st.Locator = tools.OutputScheme + strings.Repeat("x", locLen)
		}
		src := wholeSource(text)
		if stream {
			src = streamSource(text, limit)
		}
		p, ok := BuildPreview(src, limit, st, nil)
		if !ok {
			if limit >= MinThreshold && locLen <= 200 {
				t.Fatalf("no preview for limit %d and a %d-byte locator", limit, locLen)
			}
			return
		}
		checkPreview(t, text, limit, p)
		if st.Locator != "" {
			require.Contains(t, p.Notice, st.Locator)
		}
	})
}
