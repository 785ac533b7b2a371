package ui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short line", 80, "short line"},
		{"one two three four", 9, "one two\n  three\n  four"},
		{"  ? bash  ls -la\n  the reason is long enough to wrap", 20, "  ? bash  ls -la\n  the reason is long\n    enough to wrap"},
		{"abcdefghijkl", 5, "abcde\n  fgh\n  ijk\n  l"},
		{"", 10, ""},
		{"a  b", 3, "a \n  b"},
	} {
		got := wrap(tc.in, tc.width)
		if tc.in == "a  b" {
			// Runs of spaces inside a line may be kept or folded; only the
			// width matters.
			for _, l := range strings.Split(got, "\n") {
				assert.LessOrEqual(t, utf8.RuneCountInString(l), tc.width)
			}
			continue
		}
		assert.Equal(t, tc.want, got, "wrap(%q, %d)", tc.in, tc.width)
	}
}

// FuzzWrap: no line is wider than the width (when it leaves room past
// the indentation), and no word's characters are lost or reordered.
func FuzzWrap(f *testing.F) {
	f.Add("the quick brown fox jumps over the lazy dog", 10)
	f.Add("  indented text that wraps\nand a second line", 12)
	f.Add("averyveryverylongwordwithoutspaces and more", 7)
	f.Add("ünïcödé wörds ☃☃☃ here", 6)
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width > 400 || width < -1 || !utf8.ValidString(s) || strings.ContainsAny(s, "\t\r") {
			return
		}
		got := wrap(s, width)
		if width <= 0 {
			if got != s {
				t.Fatalf("width %d changed the text", width)
			}
			return
		}
		squash := func(x string) string { return strings.Join(strings.Fields(x), "") }
		if squash(got) != squash(s) {
			t.Fatalf("the text changed:\n%q\n%q", s, got)
		}
		ins := strings.Split(s, "\n")
		for _, in := range ins {
			indent := len(in) - len(strings.TrimLeft(in, " "))
			if indent+3 > width {
				return // no room to wrap into: lines may stay wide
			}
		}
		for _, l := range strings.Split(got, "\n") {
			if utf8.RuneCountInString(l) > width {
				t.Fatalf("line wider than %d: %q (from %q)", width, l, s)
			}
		}
	})
}
