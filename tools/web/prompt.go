package web

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/go-harness/harness/internal/units"
)

// The prompt of web_fetch is a hint, not an instruction to a model:
// there is no model inside the tool. Its words are looked up in the
// page, and the result's header names the sections where they appear
// most, with their line numbers in the result, so that the model can
// go straight there (also in a spilled result, with read's offset).

// maxTerms bounds the words taken from a prompt; maxPointers the
// sections named.
const (
	maxTerms    = 24
	maxPointers = 5
	// chunkLines is the size of the parts a long section, or a text
	// without headings, is cut into.
	chunkLines = 40
)

// stopWords are the words of a prompt not worth looking for, made at the
// first prompt rather than when the package is loaded.
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for with what how does this that from are about page into which when where why who
		you your can use using get give show tell find list all any its their them then than there these those was were will
		would should could have has had not but our out over also just only more most some such each other per via etc
		please summarize summarise summary explain extract describe information info details detail document site website
		web article text content contents section sections return read look need want like make made`) {
		m[w] = true
	}
	return m
})

// terms returns the words of a prompt worth looking for: lower-cased,
// at least three letters or digits, not a stop word, without common
// English endings, at most maxTerms, each once.
func terms(prompt string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words(prompt) {
		if len([]rune(w)) < 3 || stopWords()[w] {
			continue
		}
		w = stem(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxTerms {
			break
		}
	}
	return out
}

// stem strips a common English ending when enough of the word is left.
func stem(w string) string {
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ies", "ied", "ers", "ed", "es", "er", "s"} {
		if strings.HasSuffix(w, suf) && len([]rune(w))-len([]rune(suf)) >= 4 {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// words splits text into lower-cased runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// section is a range of lines of the Markdown.
type section struct {
	// start and end are 1-based, inclusive line numbers in the text.
	start, end int
	label      string
	score      int
}

// sections splits Markdown into its heading sections (ATX headings
// outside fenced code), each cut into parts of at most chunkLines lines.
func sections(lines []string) []section {
	var out []section
	cur := section{start: 1, label: "the beginning"}
	fence := ""
	flush := func(end int) {
		if end < cur.start {
			return
		}
		for s := cur.start; s <= end; s += chunkLines {
			e := min(end, s+chunkLines-1)
			label := cur.label
			if s != cur.start {
				label = "part of " + cur.label
			}
			out = append(out, section{start: s, end: e, label: label})
		}
	}
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) <= 3 {
			if f := fenceOf(t); f != "" {
				switch {
				case fence == "":
					fence = f
				case strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "":
					fence = ""
				}
				continue
			}
		}
		if fence != "" || !isHeading(t) || len(l)-len(t) > 3 {
			continue
		}
		flush(i)
		cur = section{start: i + 1, label: cut(strings.TrimSpace(t), 80)}
	}
	flush(len(lines))
	return out
}

// fenceOf returns the fence a line opens or closes (``` or ~~~ and
// longer), or "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

func isHeading(t string) bool {
	n := len(t) - len(strings.TrimLeft(t, "#"))
	return n >= 1 && n <= 6 && (len(t) == n || t[n] == ' ' || t[n] == '\t')
}

// relevant scores the sections of lines by how often the prompt's terms
// occur in them and returns the best ones (at most maxPointers, best
// first, ties in page order).
func relevant(lines []string, ts []string) []section {
	if len(ts) == 0 {
		return nil
	}
	secs := sections(lines)
	for i := range secs {
		for _, l := range lines[secs[i].start-1 : secs[i].end] {
			for _, w := range words(l) {
				for _, t := range ts {
					if w == t || len(t) >= 4 && strings.HasPrefix(w, t) {
						secs[i].score++
						break
					}
				}
			}
		}
	}
	var hits []section
	for _, s := range secs {
		if s.score > 0 {
			hits = append(hits, s)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > maxPointers {
		hits = hits[:maxPointers]
	}
	return hits
}

// promptHeader returns the header lines that report on the prompt, with
// line numbers shifted so that line 1 of the text is line first of the
// result.
func promptHeader(prompt string, lines []string, first func(headerLines int) int) []string {
	p := strings.Join(strings.Fields(prompt), " ")
	if p == "" {
		return nil
	}
	ts := terms(p)
	head := []string{"Prompt: " + cut(p, 300)}
	if len(ts) == 0 {
		return append(head, "The prompt has no words to look for in the page; the whole page follows.")
	}
	hits := relevant(lines, ts)
	if len(hits) == 0 {
		return append(head, fmt.Sprintf("None of the prompt's words (%s) appear in the page; the whole page follows.", strings.Join(ts, ", ")))
	}
	n := len(head) + 1 + len(hits)
	off := first(n) - 1
	head = append(head, "Where the prompt's words appear most (line numbers of this result; the whole page follows):")
	for _, h := range hits {
		head = append(head, fmt.Sprintf("- lines %d-%d: %s (%s)", h.start+off, h.end+off, h.label, units.Plural(h.score, "match", "matches")))
	}
	return head
}

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
