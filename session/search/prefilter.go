package search

import (
	"bytes"
	"encoding/json"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/go-harness/harness/internal/textmatch"
)

// Search decodes only the log lines that may hold a match. A line may
// hold a match of a literal when it holds the literal's JSON encoding:
// logs are written by Event.MarshalJSON (no HTML escaping, non-ASCII as
// raw UTF-8), an encoding that maps each character of a string on its
// own, so the encoding of a piece of text is a part of the encoding of
// any text containing it. Tool call arguments are JSON inside a JSON
// string, so their string values are encoded twice in the log.
//
// Logs can also hold JSON written otherwise (an event this build does not
// know, kept as it was read; arguments in which the model escaped
// characters itself), where any character may be a \uXXXX escape and '/'
// may be "\/". A line holding such escapes is decoded whenever it holds
// the literal's anchor: its longest run of characters that every JSON
// writer writes as they are (ASCII letters, digits, space and most
// punctuation). The anchor is also what the scan looks for first.

// A case-insensitive pattern contributes literals that ASCII case
// folding finds (textmatch.RequiredLiterals): their anchor and forms are
// then looked for with letters in either case, which JSON writers never
// escape.

// litFilter tells whether a line may contain one literal.
type litFilter struct {
	lit textmatch.Literal
	// anchor is part of every encoding of the literal; empty when the
	// literal has no character every writer keeps as it is.
	anchor []byte
	// finder finds the anchor; nil when it is empty.
	finder *textmatch.Finder
	// forms find the literal encoded as in this build's logs, once and
	// twice.
	forms []*textmatch.Finder
}

func newLitFilter(l textmatch.Literal) *litFilter {
	f := &litFilter{lit: l, anchor: []byte(anchorOf(l.Text))}
	if len(f.anchor) > 0 {
		f.finder = textmatch.NewFinder(f.anchor, l.Fold)
	}
	form := func(s string) { f.forms = append(f.forms, textmatch.NewFinder([]byte(s), l.Fold)) }
	once := encodeString(l.Text)
	form(once)
	if twice := encodeString(once); twice != once {
		form(twice)
	}
	// U+2028 and U+2029 are escaped by encoding/json but valid raw JSON.
	if strings.ContainsAny(l.Text, "\u2028\u2029") {
		var b strings.Builder
		for i, part := range splitKeep(l.Text, "\u2028\u2029") {
			if i%2 == 1 {
				b.WriteString(part)
			} else {
				b.WriteString(encodeString(part))
			}
		}
		form(b.String())
	}
	return f
}

// formsOrEscapes reports whether line holds an encoded form of the
// literal, or escapes that could hide one.
func (f *litFilter) formsOrEscapes(line []byte) bool {
	for _, form := range f.forms {
		if form.Index(line) >= 0 {
			return true
		}
	}
	return bytes.Contains(line, []byte(`\u`)) || bytes.Contains(line, []byte(`\/`))
}

// lineMayMatch reports whether line may contain the literal.
func (f *litFilter) lineMayMatch(line []byte) bool {
	if f.finder != nil && f.finder.Index(line) < 0 {
		return false
	}
	return f.formsOrEscapes(line)
}

// prefilter holds literals one of which every match contains; nil when
// every line may match.
type prefilter []*litFilter

// literalPrefilter is the prefilter of a literal query.
func literalPrefilter(q string) prefilter {
	return prefilter{newLitFilter(textmatch.Literal{Text: q})}
}

// regexPrefilters returns prefilters from the sets of literals every
// match of the pattern contains one of each: the one a scan looks for,
// and the others each candidate line must pass too (tune may swap them);
// none when there are none to be found.
func regexPrefilters(pattern string) (prefilter, []prefilter) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, nil
	}
	var pfs []prefilter
	for _, set := range textmatch.RequiredSets(re.Simplify()) {
		var pf prefilter
		for _, l := range set {
			pf = append(pf, newLitFilter(l))
		}
		pfs = append(pfs, pf)
	}
	if len(pfs) == 0 {
		return nil, nil
	}
	return pfs[0], pfs[1:]
}

func (p prefilter) single() *litFilter {
	if len(p) == 1 {
		return p[0]
	}
	return nil
}

func (p prefilter) lineMayMatch(line []byte) bool {
	if len(p) == 0 {
		return true
	}
	for _, f := range p {
		if f.lineMayMatch(line) {
			return true
		}
	}
	return false
}

// tune adapts the prefilters' anchor finders to a sample of the text
// searched, and makes the one whose anchors are rarest there the one a
// scan looks for.
func (s *searcher) tune(sample []byte) {
	if len(sample) == 0 || len(s.pre) == 0 {
		return
	}
	counts := textmatch.ByteCounts(sample)
	for _, p := range append([]prefilter{s.pre}, s.also...) {
		for _, f := range p {
			if f.finder != nil {
				f.finder.Tune(counts)
			}
		}
	}
	for i, p := range s.also {
		if p.hits(counts) < s.pre.hits(counts) {
			s.pre, s.also[i] = p, s.pre
		}
	}
}

// hits estimates how often a scan for the prefilter's anchors stops in
// text with these byte counts: at each occurrence of each anchor's rarest
// byte (in either case when folded).
func (p prefilter) hits(counts *[256]int) int {
	n := 0
	for _, f := range p {
		if len(f.anchor) == 0 {
			return 1 << 62 // no anchor: every line is a candidate
		}
		best := -1
		for _, c := range f.anchor {
			k := counts[c]
			if f.lit.Fold && 'a' <= c && c <= 'z' {
				k += counts[c-32]
			}
			if best < 0 || k < best {
				best = k
			}
		}
		n += best
	}
	return n
}

// alsoMayMatch reports whether line may pass every prefilter beside the
// one scanned for.
func (s *searcher) alsoMayMatch(line []byte) bool {
	for _, p := range s.also {
		if !p.lineMayMatch(line) {
			return false
		}
	}
	return true
}

// robust reports whether every JSON writer writes c as it is: not a
// quote, backslash or slash, not a character HTML-safe writers escape,
// not a control character, not part of a multi-byte character.
func robust(c byte) bool {
	switch c {
	case '"', '\\', '/', '<', '>', '&', '\'':
		return false
	}
	return c >= 0x20 && c < 0x7f
}

// anchorOf returns the longest run of robust bytes of s.
func anchorOf(s string) string {
	best, start := "", -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && robust(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start > len(best) {
			best = s[start:i]
		}
		start = -1
	}
	return best
}

// encodeString returns s encoded as a JSON string by Event.MarshalJSON,
// without the quotes.
func encodeString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return s
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(b) < 2 {
		return s
	}
	return string(b[1 : len(b)-1])
}

// splitKeep splits s around the runes in seps and returns the parts with
// the separators between them (odd indexes).
func splitKeep(s, seps string) []string {
	var out []string
	last := 0
	for i, r := range s {
		if strings.ContainsRune(seps, r) {
			out = append(out, s[last:i], string(r))
			last = i + utf8.RuneLen(r)
		}
	}
	return append(out, s[last:])
}

func indexString(h []byte, s string) int { return bytes.Index(h, []byte(s)) }

// indexByteFrom returns the index of the first c in b at or after from,
// or len(b).
func indexByteFrom(b []byte, from int, c byte) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return len(b)
}

// lineStart returns the start of the line holding b[at], which starts
// at from or after it. It looks forward, as bytes.IndexByte is faster
// than a backward scan.
func lineStart(b []byte, from, at int) int {
	for {
		i := bytes.IndexByte(b[from:at], '\n')
		if i < 0 {
			return from
		}
		from += i + 1
	}
}
