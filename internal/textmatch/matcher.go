package textmatch

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Options control how a pattern is read.
type Options struct {
	// Literal: the pattern is plain text, not a regular expression.
	Literal bool
	// IgnoreCase matches letters in either case (Unicode simple folding,
	// as regexp's (?i)).
	IgnoreCase bool
	// Multiline lets a match span lines, with '.' matching a newline too;
	// otherwise every match lies within one line and '^' and '$' match at
	// line boundaries.
	Multiline bool
}

// ErrPattern is matched (with errors.Is) by Compile's errors.
var ErrPattern = errors.New("invalid pattern")

// Matcher finds matches of one pattern. It is immutable and safe for
// concurrent use.
type Matcher struct {
	re      *regexp.Regexp
	lits    []*Finder
	exact   bool // a literal hit is a match: the regexp need not confirm
	multi   bool
	pattern string
}

// Compile compiles a pattern (RE2 syntax, as package regexp, unless
// Literal). In line mode a pattern that can only match a newline (such
// as a literal "\n") is refused with a hint to use Multiline.
func Compile(pattern string, o Options) (*Matcher, error) {
	if pattern == "" {
		return nil, fmt.Errorf("%w: the pattern is empty", ErrPattern)
	}
	src := pattern
	if o.Literal {
		src = regexp.QuoteMeta(pattern)
	}
	flags := "(?m)"
	if o.IgnoreCase {
		flags = "(?mi)"
	}
	if o.Multiline {
		flags = strings.Replace(flags, "m", "ms", 1)
	}
	tree, err := syntax.Parse(flags+src, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrPattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	tree = tree.Simplify()
	m := &Matcher{multi: o.Multiline, pattern: pattern}
	if !o.Multiline {
		if !dropNewline(tree) {
			return nil, fmt.Errorf("%w: it can only match across a line break, and lines are matched one at a time; set multiline to match across lines", ErrPattern)
		}
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrPattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	m.re = re
	for _, l := range RequiredLiterals(tree) {
		m.lits = append(m.lits, NewFinder([]byte(l.Text), l.Fold))
	}
	// A literal pattern that the prefilter finds exactly needs no regexp.
	if o.Literal && !o.Multiline && len(m.lits) == 1 && !strings.Contains(pattern, "\n") {
		l := m.lits[0]
		if !l.fold && string(l.needle) == pattern || l.fold && len(l.needle) == len(pattern) && strings.EqualFold(string(l.needle), pattern) {
			m.exact = true
		}
	}
	return m, nil
}

// dropNewline rewrites re so that no part of it matches '\n': '.' and
// classes lose the newline, and what could only match a newline matches
// nothing; '$' also matches before a CR that ends a line. It reports false when all of re then matches nothing.
func dropNewline(re *syntax.Regexp) bool {
	impossible := func() bool {
		*re = syntax.Regexp{Op: syntax.OpNoMatch, Flags: re.Flags}
		return false
	}
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpEndLine:
		// A CR before the line break belongs to it: "x$" matches "x\r".
		end := *re
		*re = syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: []*syntax.Regexp{
			{Op: syntax.OpQuest, Flags: re.Flags, Sub: []*syntax.Regexp{{Op: syntax.OpLiteral, Flags: re.Flags, Rune: []rune{'\r'}}}},
			&end,
		}}
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			return impossible()
		}
		re.Rune = out
	case syntax.OpLiteral:
		if strings.ContainsRune(string(re.Rune), '\n') {
			return impossible()
		}
	case syntax.OpConcat, syntax.OpCapture, syntax.OpPlus:
		for _, sub := range re.Sub {
			if !dropNewline(sub) {
				return impossible()
			}
		}
	case syntax.OpRepeat:
		if !dropNewline(re.Sub[0]) {
			if re.Min > 0 {
				return impossible()
			}
			*re = syntax.Regexp{Op: syntax.OpEmptyMatch, Flags: re.Flags}
		}
	case syntax.OpStar, syntax.OpQuest:
		if !dropNewline(re.Sub[0]) {
			*re = syntax.Regexp{Op: syntax.OpEmptyMatch, Flags: re.Flags}
		}
	case syntax.OpAlternate:
		any := false
		for _, sub := range re.Sub {
			if dropNewline(sub) {
				any = true
			}
		}
		if !any {
			return impossible()
		}
	}
	return true
}

// Multiline reports whether matches may span lines.
func (m *Matcher) Multiline() bool { return m.multi }

// HasPrefilter reports whether the matcher has literals to look for
// before it runs the regular expression.
func (m *Matcher) HasPrefilter() bool { return len(m.lits) > 0 }

// MayContain reports whether buf may hold a match: false only when it
// holds none of the required literals.
func (m *Matcher) MayContain(buf []byte) bool {
	if len(m.lits) == 0 {
		return true
	}
	for _, f := range m.lits {
		if f.Index(buf) >= 0 {
			return true
		}
	}
	return false
}

// candidate returns the first position at or after from where a required
// literal occurs, or -1.
func (m *Matcher) candidate(buf []byte, from int) int {
	best := -1
	for _, f := range m.lits {
		lim := len(buf)
		if best >= 0 {
			lim = min(len(buf), best+len(f.needle))
		}
		if i := f.Index(buf[from:lim]); i >= 0 && (best < 0 || from+i < best) {
			best = from + i
		}
	}
	return best
}

// NextLine returns the bounds [start, end) of the first line of buf at
// or after from (a line start) that holds a match, end excluding the
// newline; ok is false when no line does. Lines are separated by '\n';
// the last line of buf need not end with one, and a final newline does
// not start another line. Not for multiline
// matchers (see FindAll).
func (m *Matcher) NextLine(buf []byte, from int) (start, end int, ok bool) {
	for from < len(buf) {
		if len(m.lits) == 0 {
			loc := m.re.FindIndex(buf[from:])
			if loc == nil || from+loc[0] == len(buf) && buf[len(buf)-1] == '\n' {
				return 0, 0, false // none, or only past the final newline
			}
			s, e := lineAround(buf, from, from+loc[0])
			return s, e, true
		}
		c := m.candidate(buf, from)
		if c < 0 {
			return 0, 0, false
		}
		s, e := lineAround(buf, from, c)
		if m.exact || m.re.Match(buf[s:e]) {
			return s, e, true
		}
		from = e + 1
	}
	return 0, 0, false
}

// lineAround returns the line holding position i, not starting before
// from.
func lineAround(buf []byte, from, i int) (int, int) {
	s := bytes.LastIndexByte(buf[from:i], '\n') + 1 + from
	e := bytes.IndexByte(buf[i:], '\n')
	if e < 0 {
		return s, len(buf)
	}
	return s, i + e
}

// MatchLine reports whether the line (without its newline) holds a
// match.
func (m *Matcher) MatchLine(line []byte) bool {
	if len(m.lits) > 0 && m.candidate(line, 0) < 0 {
		return false
	}
	return m.exact || m.re.Match(line)
}

// FindAll returns the bounds of up to n matches in buf (all when n < 0),
// in order; empty matches are skipped. For multiline matchers, over a
// whole file.
func (m *Matcher) FindAll(buf []byte, n int) [][]int {
	if !m.MayContain(buf) {
		return nil
	}
	var out [][]int
	for _, loc := range m.re.FindAllIndex(buf, n) {
		if loc[1] > loc[0] {
			out = append(out, loc)
		}
	}
	return out
}
