package textmatch

import (
	"regexp/syntax"
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
	best, cur := "", []byte(nil)
	for _, r := range rs {
		if r < utf8.RuneSelf && r != 'k' && r != 'K' && r != 's' && r != 'S' {
			cur = append(cur, byte(r))
			if len(cur) > len(best) {
				best = string(cur)
			}
			continue
		}
		cur = cur[:0]
	}
	return best
}
