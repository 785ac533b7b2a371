package permission

import "strings"

// A pattern is the set of strings something may be when the line runs:
// a word with an expansion or a glob in it, or a rule with wildcards.
// Two patterns are compared by asking whether any string matches both
// (intersects): that is how a deny rule is found to match a command
// whose name is known only when it runs, and how a glob argument is
// found to name a denied path.
type pattern []ptok

type ptok struct {
	kind  tokKind
	b     byte   // the byte of a tokLit
	class string // the body of a tokClass, between its brackets
}

type tokKind uint8

const (
	tokLit   tokKind = iota // one given byte
	tokAny                  // any string, word breaks included (an unquoted expansion)
	tokWord                 // any string within one word (a quoted expansion)
	tokOne                  // any one byte (?)
	tokClass                // one byte of a bracket expression ([a-z])
	tokGlob                 // a glob's *: any string within a path element
	tokCont                 // UTF-8 continuation bytes, after ? or a class (they match a character)
)

// wordBreak stands between the words of a command in its pattern: a
// byte no word of bash holds (bash arguments are C strings).
const wordBreak = 0

func (t ptok) star() bool {
	return t.kind == tokAny || t.kind == tokWord || t.kind == tokGlob || t.kind == tokCont
}

// accepts reports whether t, a token that matches one byte at a time,
// accepts c.
func (t ptok) accepts(c byte) bool {
	switch t.kind {
	case tokLit:
		return t.b == c
	case tokAny, tokOne:
		return true
	case tokWord:
		return c != wordBreak
	case tokGlob:
		return c != '/' && c != wordBreak
	case tokCont:
		return c >= 0x80 && c < 0xc0
	case tokClass:
		return classAccepts(t.class, c)
	}
	return false
}

// common reports whether some byte is accepted by both tokens. Two
// tokens without a given byte are taken to share one: this errs toward
// a match, which is the safe side for deny rules.
func common(x, y ptok) bool {
	switch {
	case x.kind == tokLit:
		return y.accepts(x.b)
	case y.kind == tokLit:
		return x.accepts(y.b)
	case x.kind == tokClass:
		return classAcceptsSome(x.class, y)
	case y.kind == tokClass:
		return classAcceptsSome(y.class, x)
	}
	return true
}

// classAcceptsSome reports whether a class accepts a byte the other
// token accepts (a class that only holds a slash or a space, against a
// token that refuses it).
func classAcceptsSome(body string, other ptok) bool {
	for c := 1; c < 256; c++ {
		if classAccepts(body, byte(c)) && other.accepts(byte(c)) {
			return true
		}
	}
	return false
}

func (p pattern) lit(s string) pattern {
	for i := 0; i < len(s); i++ {
		p = append(p, ptok{kind: tokLit, b: s[i]})
	}
	return p
}

func (p pattern) any() pattern {
	if n := len(p); n > 0 && p[n-1].kind == tokAny {
		return p // two stars in a row match what one does
	}
	return append(p, ptok{kind: tokAny})
}

// field appends a wildcard that stays within the word.
func (p pattern) field() pattern {
	if n := len(p); n > 0 && (p[n-1].kind == tokWord || p[n-1].kind == tokAny) {
		return p
	}
	return append(p, ptok{kind: tokWord})
}

// isLiteral reports whether p has no wildcard, and returns its text.
func (p pattern) isLiteral() (string, bool) {
	b := make([]byte, 0, len(p))
	for _, t := range p {
		if t.kind != tokLit {
			return "", false
		}
		b = append(b, t.b)
	}
	return string(b), true
}

// intersects reports whether some string matches both a and b. It
// walks the product of the two patterns: a state is a position in each,
// and a step consumes one byte both accept (a star may stay where it
// is) or ends a star.
func intersects(a, b pattern) bool {
	n, m := len(a), len(b)
	w := m + 1
	var small [256]bool
	var seen []bool
	if (n+1)*w <= len(small) {
		seen = small[:(n+1)*w]
	} else {
		seen = make([]bool, (n+1)*w)
	}
	var stackBuf [64]int
	stack := append(stackBuf[:0], 0)
	seen[0] = true
	push := func(i, j int) {
		if k := i*w + j; !seen[k] {
			seen[k] = true
			stack = append(stack, k)
		}
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := k/w, k%w
		if i == n && j == m {
			return true
		}
		if i < n && a[i].star() {
			push(i+1, j)
		}
		if j < m && b[j].star() {
			push(i, j+1)
		}
		if i < n && j < m && common(a[i], b[j]) {
			ni, nj := i+1, j+1
			if a[i].star() {
				ni = i
			}
			if b[j].star() {
				nj = j
			}
			if ni != i || nj != j {
				push(ni, nj)
			}
		}
	}
	return false
}

// classAccepts reports whether the bracket expression [body] matches c.
// Character classes ([:alpha:] and the like) are matched; an equivalence
// class or a collating symbol is taken to match anything.
func classAccepts(body string, c byte) bool {
	neg := false
	if body != "" && (body[0] == '!' || body[0] == '^') {
		neg, body = true, body[1:]
	}
	match := false
	for i := 0; i < len(body) && !match; i++ {
		x := body[i]
		switch {
		case x == '[' && i+1 < len(body) && (body[i+1] == ':' || body[i+1] == '=' || body[i+1] == '.'):
			end := strings.Index(body[i+2:], string(body[i+1])+"]")
			if end < 0 {
				match = x == c
				continue
			}
			name := body[i+2 : i+2+end]
			i += end + 3
			if body[i-2] != ':' {
				match = true // [=x=] or [.x.]: not worth modelling
				continue
			}
			match = posixClass(name, c)
		case x == '\\' && i+1 < len(body):
			i++
			match = body[i] == c
		case i+2 < len(body) && body[i+1] == '-':
			lo, hi := x, body[i+2]
			if hi == '\\' && i+3 < len(body) {
				hi = body[i+3]
				i++
			}
			i += 2
			match = lo <= c && c <= hi
		default:
			match = x == c
		}
	}
	return match != neg
}

func posixClass(name string, c byte) bool {
	isUpper, isLower := c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z'
	isDigit := c >= '0' && c <= '9'
	switch name {
	case "alpha":
		return isUpper || isLower
	case "digit":
		return isDigit
	case "alnum":
		return isUpper || isLower || isDigit
	case "upper":
		return isUpper
	case "lower":
		return isLower
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r')
	case "blank":
		return c == ' ' || c == '\t'
	case "xdigit":
		return isDigit || (c|0x20 >= 'a' && c|0x20 <= 'f')
	case "word":
		return isUpper || isLower || isDigit || c == '_'
	case "punct":
		return c > ' ' && c < 0x7f && !(isUpper || isLower || isDigit)
	case "print":
		return c >= ' ' && c < 0x7f
	case "graph":
		return c > ' ' && c < 0x7f
	case "cntrl":
		return c < ' ' || c == 0x7f
	}
	return true // an unknown class: err toward a match
}

// globPattern reads unquoted glob text (what a word's unquoted literal
// parts hold) into pattern tokens: * ? and [...] are wildcards, a
// backslash quotes the byte after it. It reports whether a wildcard was
// found.
func globPattern(p pattern, s string) (pattern, bool) {
	wild := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				p = append(p, ptok{kind: tokLit, b: s[i]})
			}
		case '*':
			if n := len(p); n == 0 || p[n-1].kind != tokGlob {
				p = append(p, ptok{kind: tokGlob})
			}
			wild = true
		case '?':
			p, wild = append(p, ptok{kind: tokOne}, ptok{kind: tokCont}), true
		case '[':
			if end := classEnd(s, i); end > 0 {
				p, wild = append(p, ptok{kind: tokClass, class: s[i+1 : end]}, ptok{kind: tokCont}), true
				i = end
				continue
			}
			p = append(p, ptok{kind: tokLit, b: c})
		default:
			p = append(p, ptok{kind: tokLit, b: c})
		}
	}
	return p, wild
}

// classEnd returns the index of the ] that closes the bracket expression
// opening at s[i], or -1 when there is none (the [ is then literal).
func classEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++ // a ] first is a member
	}
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			if j+1 < len(s) && (s[j+1] == ':' || s[j+1] == '=' || s[j+1] == '.') {
				if k := strings.Index(s[j+2:], string(s[j+1])+"]"); k >= 0 {
					j += k + 3
				}
			}
		case ']':
			return j
		case '/':
			return -1 // a bracket expression does not span a slash
		}
	}
	return -1
}

// segPat is one path element of a path pattern: a literal name, a
// pattern, or ** (any number of elements, none included).
type segPat struct {
	deep bool
	lit  string
	pat  pattern // nil for a literal
}

func litSeg(s string) segPat { return segPat{lit: s} }

func (s segPat) tokens() pattern {
	if s.pat != nil {
		return s.pat
	}
	return pattern(nil).lit(s.lit)
}

// segsIntersect reports whether some path matches both element lists.
func segsIntersect(a, b []segPat) bool {
	n, m := len(a), len(b)
	w := m + 1
	seen := make([]bool, (n+1)*w)
	stack := []int{0}
	seen[0] = true
	push := func(i, j int) {
		if k := i*w + j; !seen[k] {
			seen[k] = true
			stack = append(stack, k)
		}
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := k/w, k%w
		if i == n && j == m {
			return true
		}
		if i < n && a[i].deep {
			push(i+1, j)
		}
		if j < m && b[j].deep {
			push(i, j+1)
		}
		if i < n && j < m {
			x, y := a[i], b[j]
			ok := false
			switch {
			case x.deep || y.deep:
				ok = true
			case x.pat == nil && y.pat == nil:
				ok = x.lit == y.lit
			default:
				ok = intersects(x.tokens(), y.tokens())
			}
			if ok {
				ni, nj := i+1, j+1
				if x.deep {
					ni = i
				}
				if y.deep {
					nj = j
				}
				if ni != i || nj != j {
					push(ni, nj)
				}
			}
		}
	}
	return false
}

// splitSegs splits a clean absolute path into literal elements.
func splitSegs(abs string) []segPat {
	var out []segPat
	for _, s := range strings.Split(abs, "/") {
		if s != "" {
			out = append(out, litSeg(s))
		}
	}
	return out
}

// segs returns the paths the pattern matches, for a workspace and a home
// directory, as absolute element lists; a directory it matches covers
// everything below it, so each list ends in **. It returns nil when
// the pattern's base is unknown (no home directory).
func (pp pathPattern) absSegs(workspace, home string) []segPat {
	var out []segPat
	switch pp.base {
	case baseWorkspace:
		out = splitSegs(workspace)
	case baseHome:
		if home == "" {
			return nil
		}
		out = splitSegs(home)
	}
	if !pp.anchored {
		out = append(out, segPat{deep: true})
	}
	for i, s := range pp.segs {
		switch {
		case s == "**":
			out = append(out, segPat{deep: true})
		case pp.lit[i]:
			out = append(out, litSeg(s))
		default:
			p, _ := globPattern(nil, s)
			out = append(out, segPat{pat: p})
		}
	}
	return append(out, segPat{deep: true})
}
