package pathmatch

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// segment is one '/'-separated part of a pattern.
type segment struct {
	star  bool   // the whole segment is "**"
	lit   bool   // no wildcard: compare text as it is
	text  string // the unescaped literal, or the raw wildcard pattern
	suf   string // for a "*<literal>" segment: the literal suffix
	isSuf bool
}

func compileSegment(s string, globstar bool) segment {
	if globstar && s == "**" {
		return segment{star: true}
	}
	if !strings.ContainsAny(s, `*?[\`) {
		return segment{lit: true, text: s}
	}
	if len(s) > 1 && s[0] == '*' && !strings.ContainsAny(s[1:], `*?[\`) {
		return segment{text: s, suf: s[1:], isSuf: true}
	}
	if !strings.ContainsAny(s, `*?[`) {
		return segment{lit: true, text: unescape(s)}
	}
	return segment{text: s}
}

// unescape drops the backslashes of a pattern without wildcards (a
// pattern ending in a lone backslash is refused before it gets here).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (sg segment) match(name string) bool {
	switch {
	case sg.star:
		return true
	case sg.lit:
		return sg.text == name
	case sg.isSuf:
		return strings.HasSuffix(name, sg.suf)
	}
	return wildmatch(sg.text, name)
}

// wildmatch matches one segment name against a pattern of *, ?, [...] and
// \-escapes. A malformed class or a trailing backslash never matches.
func wildmatch(p, s string) bool {
	px, sx := 0, 0
	// Where to resume after the last '*': pattern index after it and
	// the name index it has consumed up to.
	starP, starS := -1, 0
	for sx < len(s) || px < len(p) {
		if px < len(p) {
			switch c := p[px]; c {
			case '*':
				for px < len(p) && p[px] == '*' {
					px++
				}
				starP, starS = px, sx
				continue
			case '?':
				if sx < len(s) {
					_, n := decodeRune(s[sx:])
					px++
					sx += n
					continue
				}
			case '[':
				if sx < len(s) {
					r, n := decodeRune(s[sx:])
					ok, width, valid := matchClass(p[px:], r)
					if !valid {
						return false
					}
					if ok {
						px += width
						sx += n
						continue
					}
				}
			case '\\':
				if px+1 >= len(p) {
					return false
				}
				if sx < len(s) && s[sx] == p[px+1] {
					px += 2
					sx++
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if starP >= 0 && starS < len(s) {
			_, n := decodeRune(s[starS:])
			starS += n
			px, sx = starP, starS
			continue
		}
		return false
	}
	return true
}

// decodeRune returns the first rune of s and its width; an invalid byte
// is one rune of width 1.
func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

var posixClasses = map[string]func(rune) bool{
	"alnum":  func(r rune) bool { return isAlpha(r) || isDigit(r) },
	"alpha":  isAlpha,
	"blank":  func(r rune) bool { return r == ' ' || r == '\t' },
	"cntrl":  func(r rune) bool { return r < 0x20 || r == 0x7f },
	"digit":  isDigit,
	"graph":  func(r rune) bool { return r > 0x20 && r < 0x7f },
	"lower":  func(r rune) bool { return r >= 'a' && r <= 'z' },
	"print":  func(r rune) bool { return r >= 0x20 && r < 0x7f },
	"punct":  func(r rune) bool { return r > 0x20 && r < 0x7f && !isAlpha(r) && !isDigit(r) },
	"space":  func(r rune) bool { return r == ' ' || (r >= '\t' && r <= '\r') },
	"upper":  func(r rune) bool { return r >= 'A' && r <= 'Z' },
	"xdigit": func(r rune) bool { return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F') },
}

func isAlpha(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// matchClass matches r against the class at the start of p (p[0] is
// '['). It returns whether r is in the class, the class's width in p,
// and whether the class is well formed.
func matchClass(p string, r rune) (matched bool, width int, valid bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	for {
		if i >= len(p) {
			return false, 0, false
		}
		c := p[i]
		if c == ']' && !first {
			i++
			break
		}
		first = false
		if c == '[' && i+1 < len(p) && p[i+1] == ':' {
			end := strings.Index(p[i+2:], ":]")
			if end < 0 {
				return false, 0, false
			}
			fn, ok := posixClasses[p[i+2:i+2+end]]
			if !ok {
				return false, 0, false
			}
			if fn(r) {
				matched = true
			}
			i += 2 + end + 2
			continue
		}
		lo, n, ok := classChar(p[i:])
		if !ok {
			return false, 0, false
		}
		i += n
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			h, n, ok := classChar(p[i+1:])
			if !ok {
				return false, 0, false
			}
			hi = h
			i += 1 + n
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return matched != negate, i, true
}

// classChar reads one (possibly escaped) character of a class.
func classChar(p string) (rune, int, bool) {
	if p[0] == '\\' {
		if len(p) < 2 {
			return 0, 0, false
		}
		r, n := decodeRune(p[1:])
		return r, n + 1, true
	}
	r, n := decodeRune(p)
	return r, n, true
}

// pattern is a compiled '/'-separated pattern.
type pattern struct {
	segs []segment
	// trailingStar: the last segment is "**", which must match at
	// least one segment (git's "abc/**" matches inside abc, not abc).
	trailingStar bool
}

func compilePattern(p string) pattern {
	parts := strings.Split(p, "/")
	pt := pattern{segs: make([]segment, len(parts))}
	for i, s := range parts {
		pt.segs[i] = compileSegment(s, true)
	}
	pt.trailingStar = len(parts) > 1 && pt.segs[len(parts)-1].star
	return pt
}

// match matches the path segments names against the pattern.
func (pt *pattern) match(names []string) bool {
	if pt.trailingStar && len(names) > 0 {
		// "x/**": x's part must match a strict prefix.
		return matchSegs(pt.segs[:len(pt.segs)-1], names, true)
	}
	return matchSegs(pt.segs, names, false)
}

// matchSegs matches names against segs; with prefix, segs need only
// match a strict prefix of names.
func matchSegs(segs []segment, names []string, prefix bool) bool {
	for len(segs) > 0 {
		sg := segs[0]
		if sg.star {
			rest := segs[1:]
			for len(rest) > 0 && rest[0].star {
				rest = rest[1:]
			}
			for k := 0; k <= len(names); k++ {
				if matchSegs(rest, names[k:], prefix) {
					return true
				}
			}
			return false
		}
		if len(names) == 0 || !sg.match(names[0]) {
			return false
		}
		segs, names = segs[1:], names[1:]
	}
	if prefix {
		return len(names) > 0
	}
	return len(names) == 0
}

// maybeUnder reports whether some path below the directory dirNames could
// match: false only when no path with that prefix can.
func (pt *pattern) maybeUnder(dirNames []string) bool {
	segs := pt.segs
	for _, n := range dirNames {
		if len(segs) == 0 {
			return false
		}
		if segs[0].star {
			return true
		}
		if !segs[0].match(n) {
			return false
		}
		segs = segs[1:]
	}
	return len(segs) > 0
}

// Glob is a compiled `**`-style path pattern (see the package doc).
// Its zero value matches nothing. It is safe for concurrent use.
type Glob struct {
	alts    []pattern
	negated bool
	// base matches only the last path element (a pattern without '/').
	base bool
}

// maxAlternatives bounds the patterns a brace expansion may produce.
const maxAlternatives = 256

// ErrPattern is matched (with errors.Is) by the errors of CompileGlob.
var ErrPattern = errors.New("invalid pattern")

// GlobOptions control how CompileGlob reads a pattern.
type GlobOptions struct {
	// Basename makes a pattern without '/' match the last element of a
	// path at any depth (ripgrep's -g and gitignore's rule); otherwise a
	// pattern is matched against the whole relative path.
	Basename bool
	// Negatable makes a leading '!' negate the pattern.
	Negatable bool
}

// CompileGlob compiles a glob pattern. An empty pattern, an unbalanced
// brace or class, a trailing backslash, or a brace expansion of more than
// 256 alternatives is an error matching ErrPattern.
func CompileGlob(p string, o GlobOptions) (*Glob, error) {
	g := &Glob{}
	if o.Negatable && strings.HasPrefix(p, "!") {
		g.negated = true
		p = p[1:]
	}
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return nil, errors.Join(ErrPattern, errors.New("the pattern is empty"))
	}
	alts, err := expandBraces(p)
	if err != nil {
		return nil, err
	}
	g.base = o.Basename
	for _, a := range alts {
		if strings.Contains(strings.TrimSuffix(a, "/"), "/") {
			g.base = false
		}
	}
	for _, a := range alts {
		if err := checkSyntax(a); err != nil {
			return nil, err
		}
		a = strings.TrimPrefix(strings.TrimSuffix(a, "/"), "/")
		if g.base {
			// One segment, where "**" means "*".
			g.alts = append(g.alts, pattern{segs: []segment{compileSegment(a, false)}})
			continue
		}
		g.alts = append(g.alts, compilePattern(a))
	}
	return g, nil
}

// Negated reports whether the pattern began with '!' (with Negatable).
func (g *Glob) Negated() bool { return g != nil && g.negated }

// Match reports whether the relative, clean, slash-separated path rel
// matches (ignoring negation).
func (g *Glob) Match(rel string) bool {
	if g == nil || rel == "" {
		return false
	}
	if g.base {
		name := rel[strings.LastIndexByte(rel, '/')+1:]
		for i := range g.alts {
			if g.alts[i].segs[0].match(name) {
				return true
			}
		}
		return false
	}
	names := strings.Split(rel, "/")
	for i := range g.alts {
		if g.alts[i].match(names) {
			return true
		}
	}
	return false
}

// MayMatchUnder reports whether a path below the directory rel (relative
// and clean; "" or "." for the top) could match, so a walk can skip
// directories that cannot hold a match.
func (g *Glob) MayMatchUnder(rel string) bool {
	if g == nil {
		return false
	}
	if g.base || rel == "" || rel == "." {
		return true
	}
	names := strings.Split(rel, "/")
	for i := range g.alts {
		if g.alts[i].maybeUnder(names) {
			return true
		}
	}
	return false
}

// LiteralPrefix returns the leading directories of the pattern that have
// no wildcard, joined by '/', common to all alternatives: where a walk
// can start. It is "" when there are none.
func (g *Glob) LiteralPrefix() string {
	if g == nil || g.base || len(g.alts) == 0 {
		return ""
	}
	var common []string
	for i, a := range g.alts {
		var lits []string
		for _, sg := range a.segs[:len(a.segs)-1] {
			if !sg.lit {
				break
			}
			lits = append(lits, sg.text)
		}
		if i == 0 {
			common = lits
			continue
		}
		n := 0
		for n < len(common) && n < len(lits) && common[n] == lits[n] {
			n++
		}
		common = common[:n]
	}
	return strings.Join(common, "/")
}

// checkSyntax refuses a trailing backslash and an unterminated class.
func checkSyntax(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 >= len(p) {
				return errors.Join(ErrPattern, errors.New("the pattern ends with a lone backslash"))
			}
			i++
		case '[':
			_, w, ok := matchClass(p[i:], 0)
			if !ok {
				return errors.Join(ErrPattern, errors.New("a [ character class is not closed (write \\[ for a literal bracket)"))
			}
			i += w - 1
		}
	}
	return nil
}

// expandBraces expands {a,b} alternatives (nested ones too). Braces
// inside a class or escaped are literal; a brace without a comma is
// literal.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	var commas []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			if _, w, ok := matchClass(p[i:], 0); ok {
				i += w - 1
			}
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				return nil, errors.Join(ErrPattern, errors.New("a } has no matching {"))
			}
			depth--
			if depth > 0 {
				continue
			}
			if len(commas) == 0 {
				// "{x}" is literal text.
				rest, err := expandBraces(p[i+1:])
				if err != nil {
					return nil, err
				}
				head := p[:i+1]
				out := make([]string, len(rest))
				for k, r := range rest {
					out[k] = head + r
				}
				return out, nil
			}
			var parts []string
			prev := open + 1
			for _, c := range commas {
				parts = append(parts, p[prev:c])
				prev = c + 1
			}
			parts = append(parts, p[prev:i])
			rest, err := expandBraces(p[i+1:])
			if err != nil {
				return nil, err
			}
			var out []string
			for _, part := range parts {
				sub, err := expandBraces(part)
				if err != nil {
					return nil, err
				}
				for _, s := range sub {
					for _, r := range rest {
						if len(out) >= maxAlternatives {
							return nil, errors.Join(ErrPattern, errors.New("the braces expand to too many alternatives"))
						}
						out = append(out, p[:open]+s+r)
					}
				}
			}
			return out, nil
		}
	}
	if depth > 0 {
		return nil, errors.Join(ErrPattern, errors.New("a { is not closed"))
	}
	return []string{p}, nil
}
