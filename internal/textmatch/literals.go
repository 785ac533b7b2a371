package textmatch

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Literal is a piece of text that every match contains (or one of a
// set of them does).
type Literal struct {
	Text string
	// Fold: the text occurs with ASCII letters in either case.
	Fold bool
}

// maxAlternatives bounds the literal set taken from an alternation.
const maxAlternatives = 8

// RequiredLiterals returns a set of literals one of which every match of
// re contains, or nil when no useful set is known. A case-folded literal
// is cut to its longest run that ASCII case folding finds exactly: no
// non-ASCII character, and no k or s (which also fold to the Kelvin sign
// and the long s).
func RequiredLiterals(re *syntax.Regexp) []Literal {
	set := required(re)
	for _, l := range set {
		if len(l.Text) < 2 && len(set) > 1 {
			return nil // one-byte alternatives filter nothing
		}
		if l.Text == "" {
			return nil
		}
	}
	return set
}

// RequiredSets returns sets of literals such that every match of re
// contains a literal of each set: first the set RequiredLiterals
// returns, then the other sets the parts of a concatenation require,
// and the other runs of a case-folded literal. A caller may look for the
// set that is rarest in its text and check the others too.
func RequiredSets(re *syntax.Regexp) [][]Literal {
	first := RequiredLiterals(re)
	var out [][]Literal
	if first != nil {
		out = append(out, first)
	}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	var parts []*syntax.Regexp
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	} else {
		parts = []*syntax.Regexp{re}
	}
	add := func(set []Literal) {
		if useful(set) && !slices.ContainsFunc(out, func(o []Literal) bool { return slices.Equal(o, set) }) {
			out = append(out, set)
		}
	}
	var run []rune
	flush := func() {
		if len(run) > 0 {
			add([]Literal{{Text: string(run)}})
			run = nil
		}
	}
	for _, sub := range parts {
		switch {
		case sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0:
			run = append(run, sub.Rune...)
			continue
		case sub.Op == syntax.OpLiteral:
			flush()
			for _, r := range foldSafeRuns(sub.Rune) {
				if len(r) >= 2 {
					add([]Literal{{Text: strings.ToLower(r), Fold: true}})
				}
			}
			continue
		}
		flush()
		add(required(sub))
	}
	flush()
	return out
}

// useful reports whether a set of literals can filter text: not empty,
// no empty literal, and no one-byte literal among several.
func useful(set []Literal) bool {
	for _, l := range set {
		if l.Text == "" || len(l.Text) < 2 && len(set) > 1 {
			return false
		}
	}
	return len(set) > 0
}

func required(re *syntax.Regexp) []Literal {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			if s := foldSafeRun(re.Rune); s != "" {
				return []Literal{{Text: strings.ToLower(s), Fold: true}}
			}
			return nil
		}
		return []Literal{{Text: string(re.Rune)}}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent plain literals join into one longer literal.
		var best []Literal
		consider := func(set []Literal) {
			if set != nil && score(set) > score(best) {
				best = set
			}
		}
		var run []rune
		flush := func() {
			if len(run) > 0 {
				consider([]Literal{{Text: string(run)}})
				run = nil
			}
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run = append(run, sub.Rune...)
				continue
			}
			flush()
			consider(required(sub))
		}
		flush()
		return best
	case syntax.OpAlternate:
		var all []Literal
		for _, sub := range re.Sub {
			set := required(sub)
			if set == nil {
				return nil
			}
			all = append(all, set...)
		}
		if len(all) > maxAlternatives {
			return nil
		}
		return all
	}
	return nil
}

// score prefers sets whose shortest literal is long; folded ones count
// a little less.
func score(set []Literal) int {
	if len(set) == 0 {
		return 0
	}
	best := 1 << 30
	for _, l := range set {
		s := 4 * len(l.Text)
		if l.Fold {
			s -= 2
		}
		best = min(best, s)
	}
	return best - len(set)
}

// foldSafeRun returns the longest run of rs that ASCII folding finds.
func foldSafeRun(rs []rune) string {
	best := ""
	for _, r := range foldSafeRuns(rs) {
		if len(r) > len(best) {
			best = r
		}
	}
	return best
}

// foldSafeRuns returns the runs of rs that ASCII folding finds: ASCII
// characters other than k and s (which also fold to the Kelvin sign and
// the long s).
func foldSafeRuns(rs []rune) []string {
	var out []string
	var cur []byte
	for i, r := range rs {
		safe := r < utf8.RuneSelf && r != 'k' && r != 'K' && r != 's' && r != 'S'
		if safe {
			cur = append(cur, byte(r))
		}
		if (!safe || i == len(rs)-1) && len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	return out
}
