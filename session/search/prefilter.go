package search

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
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

// litFilter tells whether a line may contain one literal.
type litFilter struct {
	// anchor is part of every encoding of the literal; empty when the
	// literal has no character every writer keeps as it is.
	anchor []byte
	finder finder
	// forms are the literal encoded as in this build's logs, once and
	// twice.
	forms [][]byte
}

func newLitFilter(lit string) *litFilter {
	f := &litFilter{anchor: []byte(anchorOf(lit))}
	f.finder = newFinder(f.anchor)
	once := encodeString(lit)
	f.forms = append(f.forms, []byte(once))
	if twice := encodeString(once); twice != once {
		f.forms = append(f.forms, []byte(twice))
	}
	// U+2028 and U+2029 are escaped by encoding/json but valid raw JSON.
	if strings.ContainsAny(lit, "\u2028\u2029") {
		var b strings.Builder
		for i, part := range splitKeep(lit, "\u2028\u2029") {
			if i%2 == 1 {
				b.WriteString(part)
			} else {
				b.WriteString(encodeString(part))
			}
		}
		f.forms = append(f.forms, []byte(b.String()))
	}
	return f
}

// formsOrEscapes reports whether line holds an encoded form of the
// literal, or escapes that could hide one.
func (f *litFilter) formsOrEscapes(line []byte) bool {
	for _, form := range f.forms {
		if bytes.Contains(line, form) {
			return true
		}
	}
	return bytes.Contains(line, []byte(`\u`)) || bytes.Contains(line, []byte(`\/`))
}

// lineMayMatch reports whether line may contain the literal.
func (f *litFilter) lineMayMatch(line []byte) bool {
	if len(f.anchor) > 0 && f.finder.index(line) < 0 {
		return false
	}
	return f.formsOrEscapes(line)
}

// prefilter holds literals one of which every match contains; nil when
// every line may match.
type prefilter []*litFilter

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

// finder looks for a needle by scanning for its rarest byte (as
// ripgrep's memchr heuristic does) and checking the needle around each
// hit; after too many false hits it hands over to bytes.Index.
type finder struct {
	needle []byte
	rare   byte
	off    int // offset of rare in needle
}

func newFinder(needle []byte) finder {
	f := finder{needle: needle}
	best := 256
	for i, c := range needle {
		if r := byteRank(c); r < best {
			best, f.rare, f.off = r, c, i
		}
	}
	return f
}

// tune picks the needle's rarest byte by counts taken from a sample of
// the text to be searched, which beats any fixed ranking; the fixed
// ranking breaks ties.
func (f *finder) tune(counts *[256]int) {
	if len(f.needle) < 2 {
		return
	}
	bestCount, bestRank := -1, 0
	for i, c := range f.needle {
		n, r := counts[c], byteRank(c)
		if bestCount < 0 || n < bestCount || n == bestCount && r < bestRank {
			bestCount, bestRank, f.rare, f.off = n, r, c, i
		}
	}
}

// byteCounts counts the bytes of a sample.
func byteCounts(sample []byte) *[256]int {
	var counts [256]int
	for _, c := range sample {
		counts[c]++
	}
	return &counts
}

// tune adapts the prefilter's finders to a sample of the text searched.
func (p prefilter) tune(sample []byte) {
	if len(sample) == 0 {
		return
	}
	counts := byteCounts(sample)
	for _, f := range p {
		f.finder.tune(counts)
	}
}

// index returns the index of the first needle in h, or -1.
func (f *finder) index(h []byte) int {
	n := len(f.needle)
	switch {
	case n == 0:
		return 0
	case n == 1:
		return bytes.IndexByte(h, f.needle[0])
	}
	pos, misses := 0, 0
	for pos+n <= len(h) {
		i := bytes.IndexByte(h[pos+f.off:len(h)-n+f.off+1], f.rare)
		if i < 0 {
			return -1
		}
		c := pos + i
		if bytes.Equal(h[c:c+n], f.needle) {
			return c
		}
		pos = c + 1
		// Once false hits cost more than they save, let bytes.Index
		// (Rabin-Karp for long inputs) finish.
		if misses++; misses > 16 && misses*64 > pos {
			if j := bytes.Index(h[pos:], f.needle); j >= 0 {
				return pos + j
			}
			return -1
		}
	}
	return -1
}

// byFrequency lists bytes by how often they occur in logs of coding
// sessions, most frequent first; bytes not listed are rarer than all.
const byFrequency = " etaoinsrlcdhupmfgybw\"\\:,.\n_-/0123456789ETASIRNOLCDkvx=(){}[];'<>PMFBGHUVWYKXJQZjqz*#@!%&^$|~`+?\t"

// byteRank ranks c by frequency: 0 is the rarest.
func byteRank(c byte) int {
	if i := strings.IndexByte(byFrequency, c); i >= 0 {
		return len(byFrequency) - i
	}
	return 0
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

func lastIndexByte(b []byte, c byte) int { return bytes.LastIndexByte(b, c) }
