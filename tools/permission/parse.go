package permission

import (
	"errors"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// parseFile parses a command line as bash. Where the parser refuses
// text that bash reads, the text is rewritten the way bash reads it and
// parsed again, and note says so (the line is then never allowed by a
// prefix rule: its view comes from a rewrite):
//
//   - (( and $(( that do not close as arithmetic are nested subshells
//     to bash: ((a) ) and $((a) ) run a.
//   - a here-document delimiter with a $ in it ($X, ${X}) is the
//     literal text to bash, not an expansion.
//
// It returns the tree, the text it is of, and the parser's error for
// the original text when no rewrite parses.
func parseFile(src string) (*syntax.File, string, string, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	f, err := p.Parse(strings.NewReader(src), "")
	if err == nil {
		return f, src, "", nil
	}
	orig := err
	cur := src
	var delims []string
	var notes []string
	for range 8 {
		var perr syntax.ParseError
		if !errors.As(err, &perr) {
			break
		}
		off := int(perr.Pos.Offset())
		var next, note, delim string
		switch {
		case strings.Contains(perr.Text, "heredoc"):
			next, delim = rewriteHeredoc(cur, off)
			note = "a here-document delimiter with $ in it, which bash takes as literal text"
		default:
			next = rewriteArith(cur, off)
			note = "(( that bash reads as nested subshells"
		}
		if next == "" {
			break
		}
		if delim != "" {
			delims = append(delims, delim)
		}
		notes = append(notes, note)
		cur = next
		f, err = p.Parse(strings.NewReader(cur), "")
		if err == nil {
			if !delimsConsumed(f, delims) {
				break
			}
			return f, cur, "text the parser reads only once rewritten as bash reads it (" + strings.Join(dedupe(notes), "; ") + ")", nil
		}
	}
	return nil, src, "", orig
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		found := false
		for _, y := range out {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// rewriteArith puts a space between the two parentheses of the last
// (( that opens at or before off, or returns "".
func rewriteArith(src string, off int) string {
	limit := min(off+3, len(src))
	i := strings.LastIndex(src[:limit], "((")
	if i < 0 {
		return ""
	}
	return src[:i+1] + " " + src[i+1:]
}

// rewriteHeredoc replaces the here-document delimiter that holds an
// expansion near off, and the line that ends its body, by a fresh
// literal delimiter (quoted when the original was). It returns the new
// text and the delimiter, or "" when it cannot read the word.
func rewriteHeredoc(src string, off int) (string, string) {
	limit := min(off+1, len(src))
	i := strings.LastIndex(src[:limit], "<<")
	if i < 0 || (i > 0 && src[i-1] == '<') {
		return "", ""
	}
	j := i + 2
	dash := j < len(src) && src[j] == '-'
	if dash {
		j++
	}
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	end := scanWord(src, j)
	if end <= j {
		return "", ""
	}
	delim, quoted, ok := heredocDelim(src[j:end])
	if !ok || delim == "" {
		return "", ""
	}
	nl := strings.IndexByte(src[end:], '\n')
	if nl < 0 {
		return "", ""
	}
	pos := end + nl + 1
	lineStart, lineEnd := -1, -1
	for pos <= len(src) {
		e := strings.IndexByte(src[pos:], '\n')
		ln := src[pos:]
		if e >= 0 {
			ln = src[pos : pos+e]
		}
		cmp := ln
		if dash {
			cmp = strings.TrimLeft(ln, "\t")
		}
		if cmp == delim {
			lineStart, lineEnd = pos+len(ln)-len(cmp), pos+len(ln)
			break
		}
		if e < 0 {
			break
		}
		pos += e + 1
	}
	if lineStart < 0 {
		return "", ""
	}
	fresh := "HARNESS_HEREDOC_END"
	for n := 0; strings.Contains(src, fresh); n++ {
		fresh = "HARNESS_HEREDOC_END_" + strconv.Itoa(n)
	}
	word := fresh
	if quoted {
		word = "'" + fresh + "'"
	}
	return src[:j] + word + src[end:lineStart] + fresh + src[lineEnd:], fresh
}

// scanWord returns the end of the shell word starting at i: quotes,
// escapes and ${...}, $(...) and backquotes are part of it.
func scanWord(src string, i int) int {
	depth := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case c == '\'':
			e := strings.IndexByte(src[i+1:], '\'')
			if e < 0 {
				return len(src)
			}
			i += e + 2
			continue
		case c == '"':
			i++
			for i < len(src) && src[i] != '"' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
			continue
		case c == '$' && i+1 < len(src) && (src[i+1] == '{' || src[i+1] == '('):
			depth++
			i += 2
			continue
		case (c == '}' || c == ')') && depth > 0:
			depth--
		case depth == 0 && strings.IndexByte(" \t\n;&|<>()", c) >= 0:
			return i
		}
		i++
	}
	return min(i, len(src))
}

// heredocDelim is the delimiter bash makes of a here-document word:
// quote removal, no expansion. It reports whether any part was quoted,
// and false for a word it does not read with certainty.
func heredocDelim(word string) (string, bool, bool) {
	if strings.Contains(word, "$(") || strings.Contains(word, "`") || strings.Contains(word, "$'") || strings.Contains(word, "$\"") {
		return "", false, false
	}
	var b strings.Builder
	quoted := false
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch c {
		case '\\':
			quoted = true
			if i+1 < len(word) {
				i++
				b.WriteByte(word[i])
			}
		case '\'':
			quoted = true
			e := strings.IndexByte(word[i+1:], '\'')
			if e < 0 {
				return "", false, false
			}
			b.WriteString(word[i+1 : i+1+e])
			i += e + 1
		case '"':
			quoted = true
			i++
			for ; i < len(word) && word[i] != '"'; i++ {
				if word[i] == '\\' && i+1 < len(word) && strings.IndexByte("$`\"\\", word[i+1]) >= 0 {
					i++
				}
				b.WriteByte(word[i])
			}
			if i >= len(word) {
				return "", false, false
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), quoted, true
}

// delimsConsumed checks that each rewritten delimiter appears in the
// tree once, as a here-document's word: its end line was read as the
// end of that body (not as a command, nor as text of another body).
func delimsConsumed(f *syntax.File, delims []string) bool {
	for _, d := range delims {
		n, asWord := 0, 0
		syntax.Walk(f, func(node syntax.Node) bool {
			switch x := node.(type) {
			case *syntax.Redirect:
				if x.Word != nil && (x.Op == syntax.Hdoc || x.Op == syntax.DashHdoc) {
					if lit := wordText(x.Word); lit == d {
						asWord++
					}
				}
			case *syntax.Lit:
				n += strings.Count(x.Value, d)
			case *syntax.SglQuoted:
				n += strings.Count(x.Value, d)
			}
			return true
		})
		if asWord != 1 || n != 1 {
			return false
		}
	}
	return true
}

// wordText is a word's text with single quotes removed (enough for a
// rewritten delimiter).
func wordText(wd *syntax.Word) string {
	var b strings.Builder
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		}
	}
	return b.String()
}
