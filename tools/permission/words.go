package permission

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// wordv is one word of a command as the rules see it: its value after
// quote removal when that is known before the line runs, and otherwise
// a pattern of what it may become.
type wordv struct {
	// text is the word after quote removal, with $'...' decoded and a
	// leading tilde left as written; it is set when static.
	text string
	// static: the text is the word's value (but for a leading tilde).
	static bool
	// plain: static, and written without $'...', $"...", a glob or a
	// brace expansion, so an allow rule may match it as written.
	plain bool
	// glob: the word is known but for its unquoted glob characters (it
	// names the files its pattern matches).
	glob bool
	// pat is what the word may become when it is not static (see
	// pattern).
	pat pattern
	// vanish: the word may expand to no word at all (an unquoted
	// expansion that is empty, a glob under nullglob).
	vanish bool
	// tilde is the kind of the word's leading tilde, and tildeRest what
	// follows its prefix (from the slash on).
	tilde     tildeKind
	tildeRest string
	// procSubst: the word is a process substitution, a /dev/fd path.
	procSubst bool
	// raw is the word as written, for messages.
	raw string
}

type tildeKind uint8

const (
	tildeNone    tildeKind = iota
	tildeHome              // ~ and ~/x: $HOME
	tildeCwd               // ~+: $PWD
	tildeUnknown           // ~-, ~user, ~N: a place the rules do not follow
)

// quoted reports whether any part of the word is quoted (or escaped),
// which makes a here-document's body literal.
func wordQuoted(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(x.Value, "\\") {
				return true
			}
		}
	}
	return false
}

// wordContext says where a word is: tilde expansion applies at the
// start of a command's words and of redirection targets; brace
// expansion to a command's words.
type wordContext struct {
	tilde  bool
	braces bool
}

// wordValue works out what a word may be. It walks nothing: the
// commands in the word's substitutions are walked on their own.
func wordValue(wd *syntax.Word, ctx wordContext, src string) wordv {
	v := wordv{static: true, plain: true}
	if wd == nil {
		return v
	}
	v.raw = wordRaw(wd, src)
	if len(wd.Parts) == 1 {
		// The common words: plain text, in quotes or not. Their pattern
		// is their text, made when a rule needs it (see pattern).
		switch x := wd.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.ContainsAny(x.Value, "\\*?[]{}~") {
				v.text = x.Value
				return v
			}
		case *syntax.SglQuoted:
			if !x.Dollar {
				v.text = x.Value
				return v
			}
		case *syntax.DblQuoted:
			if len(x.Parts) == 1 && !x.Dollar {
				if l, ok := x.Parts[0].(*syntax.Lit); ok && !strings.Contains(l.Value, "\\") {
					v.text = l.Value
					return v
				}
			}
		}
	}
	var text strings.Builder
	hasGuaranteed := false // a part that keeps the word from vanishing
	wildAny, dyn := false, false
	parts := wd.Parts
	if ctx.braces && hasBraces(wd) {
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), wd.Parts...)}
		split := syntax.SplitBraces(cp) && hasBraceExp(cp)
		if !split && braceLike(wd) {
			// Brace text the parser's reader leaves alone: bash may still
			// expand it, so the word is anything.
			v.static, v.plain, v.vanish = false, false, true
			v.pat = v.pat.any()
			return v
		}
		if split {
			parts = cp.Parts
			v.static, v.plain, dyn = false, false, true
		}
	}
	for i, part := range parts {
		switch x := part.(type) {
		case *syntax.Lit:
			s := x.Value
			if i == 0 && ctx.tilde && strings.HasPrefix(s, "~") {
				v.tilde, v.tildeRest = tildeOf(s, len(parts) == 1)
			}
			var wild bool
			v.pat, wild = globPattern(v.pat, s)
			if wild {
				v.static, v.plain, wildAny = false, false, true
			}
			for j := 0; j < len(s); j++ {
				c := s[j]
				if c == '\\' {
					if j+1 < len(s) {
						j++
						text.WriteByte(s[j])
						hasGuaranteed = true
					}
					continue
				}
				text.WriteByte(c)
				if c != '*' && c != '?' && c != '[' && c != ']' {
					hasGuaranteed = true
				}
			}
		case *syntax.SglQuoted:
			hasGuaranteed = true
			val := x.Value
			if x.Dollar {
				v.plain = false
				dec, ok := decodeANSIC(val)
				if !ok {
					v.static, dyn = false, true
					v.pat = v.pat.field()
					continue
				}
				val = dec
			}
			text.WriteString(val)
			v.pat = v.pat.lit(val)
		case *syntax.DblQuoted:
			if x.Dollar {
				v.plain = false // $"..." may be translated
			}
			// "$@" and "${a[@]}" alone may be no word at all.
			if len(x.Parts) != 1 || !isMultiField(x.Parts[0]) {
				hasGuaranteed = true
			}
			for _, q := range x.Parts {
				switch y := q.(type) {
				case *syntax.Lit:
					s := dquoteUnescape(y.Value)
					text.WriteString(s)
					v.pat = v.pat.lit(s)
				default:
					// A quoted expansion stays one word ("$@" aside).
					v.static, v.plain, dyn = false, false, true
					if isMultiField(q) {
						v.pat = v.pat.any()
					} else {
						v.pat = v.pat.field()
					}
				}
			}
		case *syntax.ProcSubst:
			hasGuaranteed = true
			v.static, v.plain, v.procSubst, dyn = false, false, true, true
			v.pat = v.pat.lit("/dev/fd/").field()
		default:
			// $x, ${...}, $(...), $((...)), an extended glob, a brace
			// expansion.
			v.static, v.plain, dyn = false, false, true
			v.pat = v.pat.any()
		}
	}
	v.glob = wildAny && !dyn
	if !hasGuaranteed {
		v.vanish = true
	}
	if v.static {
		v.text = text.String()
		v.pat = nil // made from the text when needed
	}
	return v
}

// pattern is what the word may become.
func (w wordv) pattern() pattern {
	if w.static {
		return pattern(nil).lit(w.text)
	}
	return w.pat
}

func isMultiField(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && multiField(pe)
}

// multiField reports whether a quoted expansion may make several words
// or none ("$@", "${a[@]}", "${!a[@]}", "${!prefix@}").
func multiField(pe *syntax.ParamExp) bool {
	if pe.Param != nil && pe.Param.Value == "@" {
		return true
	}
	if pe.Names != 0 {
		return true
	}
	if w, ok := pe.Index.(*syntax.Word); ok && w.Lit() == "@" {
		return true
	}
	return false
}

func hasBraceExp(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if _, ok := p.(*syntax.BraceExp); ok {
			return true
		}
	}
	return false
}

// hasBraces reports whether an unquoted literal part holds a brace.
func hasBraces(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "{}") {
			return true
		}
	}
	return false
}

// braceLike reports unquoted text that looks like a brace expansion
// ({a,b} or {1..3}) even where the parser's brace reader found none:
// such a word is not taken as literal.
func braceLike(wd *syntax.Word) bool {
	var b strings.Builder
	for _, p := range wd.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			b.WriteByte('x')
		}
	}
	s := b.String()
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return false
	}
	j := strings.LastIndexByte(s, '}')
	if j < i {
		return false
	}
	inner := s[i+1 : j]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

// tildeOf reads the tilde prefix of a word's first literal part. whole
// reports that the part is the whole word.
func tildeOf(s string, whole bool) (tildeKind, string) {
	prefix, rest := s, ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		prefix, rest = s[:i], s[i:]
	} else if !whole {
		// The prefix runs into a quoted or expanded part: bash expands
		// no tilde there, but what it names is not plain either.
		return tildeUnknown, ""
	}
	if strings.Contains(prefix, "\\") {
		return tildeNone, "" // a quoted character: no tilde expansion
	}
	switch prefix {
	case "~":
		return tildeHome, rest
	case "~+":
		return tildeCwd, rest
	}
	return tildeUnknown, rest
}

// dquoteUnescape removes the backslashes that quote inside double
// quotes: before $, `, ", \ and a newline.
func dquoteUnescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(s[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeANSIC decodes the body of $'...' as bash does. A NUL ends the
// string, as in bash. It reports false for an escape it does not
// decode exactly.
func decodeANSIC(s string) (string, bool) {
	if !strings.Contains(s, "\\") {
		if k := strings.IndexByte(s, 0); k >= 0 {
			s = s[:k]
		}
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			i = j - 1
			b.WriteByte(byte(n))
		case 'x':
			n, j := 0, i+1
			for ; j < len(s) && j < i+3 && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteString("\\x")
				continue
			}
			i = j - 1
			b.WriteByte(byte(n))
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			n, j := 0, i+1
			for ; j < len(s) && j < i+1+max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if n > utf8.MaxRune || n == 0 {
				return "", false
			}
			i = j - 1
			b.WriteRune(rune(n))
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out := b.String()
	if k := strings.IndexByte(out, 0); k >= 0 {
		out = out[:k]
	}
	return out, true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func hexVal(c byte) int {
	if c <= '9' {
		return int(c - '0')
	}
	return int(c|0x20-'a') + 10
}

// wordRaw is the source text of a word.
func wordRaw(wd *syntax.Word, src string) string {
	start, end := wd.Pos().Offset(), wd.End().Offset()
	if int(end) <= len(src) && start <= end {
		return src[start:end]
	}
	return wd.Lit()
}

// assignWord is an assignment as a word of its command (NAME=value).
func assignWord(a *syntax.Assign, src string) wordv {
	start, end := a.Pos().Offset(), a.End().Offset()
	raw := ""
	if int(end) <= len(src) && start <= end {
		raw = src[start:end]
	}
	if a.Name == nil && a.Value != nil {
		v := wordValue(a.Value, wordContext{}, src)
		v.tilde, v.tildeRest = tildeNone, ""
		return v
	}
	if a.Name == nil || a.Index != nil || a.Array != nil {
		return wordv{raw: raw, pat: pattern(nil).any()}
	}
	op := "="
	if a.Append {
		op = "+="
	}
	if a.Naked {
		op = ""
	}
	v := wordValue(a.Value, wordContext{}, src)
	v.raw = raw
	v.tilde, v.tildeRest = tildeNone, ""
	v.text = a.Name.Value + op + v.text
	if !v.static {
		v.pat = pattern(nil).lit(a.Name.Value + op).append(v.pat)
	}
	v.vanish = false
	return v
}

func (p pattern) append(q pattern) pattern {
	for _, t := range q {
		if t.kind == tokAny {
			p = p.any()
			continue
		}
		p = append(p, t)
	}
	return p
}
