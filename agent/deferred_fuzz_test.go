package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSummaryLine(t *testing.T) {
	for in, want := range map[string]string{
		"Fetch a page. Then more.":                 "Fetch a page.",
		"  Ask the server.\nDetails follow.":       "Ask the server.",
		"Read v1.2 of the file. Next":              "Read v1.2 of the file.",
		"No full stop at all":                      "No full stop at all",
		"Tabs\tand  spaces.":                       "Tabs and spaces.",
		"":                                         "",
		"\n\nFirst line empty.":                    "First line empty.",
		strings.Repeat("word ", 30) + "end.":       strings.TrimSpace(strings.Repeat("word ", 19)) + "…",
		strings.Repeat("é", 80):                    strings.Repeat("é", 48) + "…",
		"Bad \xff byte.":                           "Bad \uFFFD byte.",
		"Open a persistent shell; returns its id.": "Open a persistent shell",
		"Fetch a URL as text: HTML as Markdown.":   "Fetch a URL as text",
		"Note: short clauses stay.":                "Note: short clauses stay.",
	} {
		assert.Equal(t, want, summaryLine(in), "summaryLine(%q)", in)
	}
}

// FuzzSummaryLine: whatever a tool's description holds, its listed line
// is one line of valid UTF-8 within the bound, and, but for an ellipsis
// at a cut, is made of the description's words in order.
func FuzzSummaryLine(f *testing.F) {
	for _, seed := range []string{
		"Fetch a web page and return it as text. More.",
		"Ask the language server.\nSecond line.",
		strings.Repeat("long ", 40),
		strings.Repeat("ü", 70),
		"a.b.c. d",
		"\r\n",
		"x\u2028y.",
		"\xff\xfe.",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		got := summaryLine(desc)
		if !utf8.ValidString(got) {
			t.Fatalf("summaryLine(%q) = %q: not UTF-8", desc, got)
		}
		if len(got) > maxSummary {
			t.Fatalf("summaryLine(%q) = %q: %d bytes, more than %d", desc, got, len(got), maxSummary)
		}
		if strings.ContainsAny(got, "\r\n\t") || strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") {
			t.Fatalf("summaryLine(%q) = %q: not one trimmed line", desc, got)
		}
		body := strings.TrimSuffix(got, "…")
		clean := strings.Join(strings.Fields(strings.ToValidUTF8(desc, "\uFFFD")), " ")
		if body != "" && !strings.Contains(clean, body) && !strings.Contains(strings.ToValidUTF8(clean, "\uFFFD"), body) {
			// The words kept come from the description in order; only a
			// cut inside a word may end them early.
			t.Fatalf("summaryLine(%q) = %q: not from the description (%q)", desc, got, clean)
		}
	})
}
