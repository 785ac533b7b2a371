package permission

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// patternOf builds a pattern from a description: letters are literal
// bytes, '*' any string, '~' any string within a word, '%' a glob star,
// '?' one byte, '[' a class of the letters up to ']', '_' a word break.
func patternOf(desc string) pattern {
	var p pattern
	for i := 0; i < len(desc); i++ {
		switch c := desc[i]; c {
		case '*':
			p = append(p, ptok{kind: tokAny})
		case '~':
			p = append(p, ptok{kind: tokWord})
		case '%':
			p = append(p, ptok{kind: tokGlob})
		case '?':
			p = append(p, ptok{kind: tokOne}, ptok{kind: tokCont})
		case '_':
			p = append(p, ptok{kind: tokLit, b: wordBreak})
		case '[':
			end := strings.IndexByte(desc[i:], ']')
			if end < 0 {
				p = append(p, ptok{kind: tokLit, b: c})
				continue
			}
			p = append(p, ptok{kind: tokClass, class: desc[i+1 : i+end]}, ptok{kind: tokCont})
			i += end
		default:
			p = append(p, ptok{kind: tokLit, b: c})
		}
	}
	return p
}

// regexpOf is the pattern as a regular expression, written apart from
// intersects, to check it.
func regexpOf(p pattern) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, t := range p {
		switch t.kind {
		case tokLit:
			b.WriteString(regexp.QuoteMeta(string([]byte{t.b})))
		case tokAny:
			b.WriteString(`.*`)
		case tokWord:
			b.WriteString(`[^\x00]*`)
		case tokGlob:
			b.WriteString(`[^/\x00]*`)
		case tokCont:
		case tokOne:
			b.WriteString(`.`)
		case tokClass:
			body := t.class
			neg := strings.HasPrefix(body, "!") || strings.HasPrefix(body, "^")
			if neg {
				body = body[1:]
			}
			var set strings.Builder
			for i := 0; i < len(body); i++ {
				if body[i] == '\\' || body[i] == '[' || body[i] == '-' {
					return nil // escapes, classes and ranges are not written here
				}
				fmt.Fprintf(&set, `\x{%x}`, body[i])
			}
			switch {
			case set.Len() == 0 && !neg:
				b.WriteString(`[^\s\S]`)
			case set.Len() == 0:
				b.WriteString(`.`)
			case neg:
				b.WriteString(`[^` + set.String() + `]`)
			default:
				b.WriteString(`[` + set.String() + `]`)
			}
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

func matches(r *regexp.Regexp, s string) bool { return r != nil && r.MatchString(s) }

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzIntersects checks that intersects never misses a string both
// patterns match: the deny rules' safety rests on it.
func FuzzIntersects(f *testing.F) {
	for _, s := range [][3]string{
		{"_rm_*", "_*", "_rm_x"}, {"_~/rm", "_/usr/bin/r[m]", "_/usr/bin/rm"}, {"a%b", "a*", "axb"}, {"_rm", "_r?", "_rm"},
		{"_git_push_*", "_git*", "_git_push_x"}, {"[!.]%", ".env", ".env"}, {"a[bc]", "a[!b]", "ac"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, s string) {
		if len(a) > 40 || len(b) > 40 || len(s) > 60 || !ascii(a+b+s) {
			return // the regular expressions are of runes; the patterns of bytes
		}
		pa, pb := patternOf(a), patternOf(b)
		s = strings.ReplaceAll(s, "_", "\x00")
		ra, rb := regexpOf(pa), regexpOf(pb)
		if matches(ra, s) && matches(rb, s) && !intersects(pa, pb) {
			t.Fatalf("%q matches both %q and %q, which intersects says share nothing", s, a, b)
		}
		if intersects(pa, pb) != intersects(pb, pa) {
			t.Fatalf("intersects(%q, %q) is not symmetric", a, b)
		}
	})
}

// FuzzDecodeANSIC checks that decoding $'...' never fails on any body
// and never keeps a NUL (bash's strings end there).
func FuzzDecodeANSIC(f *testing.F) {
	for _, s := range []string{`rm`, `\x72m`, `\0`, `\u00e9`, `\cA`, `\`, `\x`, `\U0010FFFF`, `a\'b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := decodeANSIC(s)
		if !ok {
			return
		}
		if strings.IndexByte(out, 0) >= 0 {
			t.Fatalf("decoding %q kept a NUL", s)
		}
		if !strings.Contains(s, "\\") {
			cut := s
			if i := strings.IndexByte(s, 0); i >= 0 {
				cut = s[:i]
			}
			assert.Equal(t, cut, out)
		}
	})
}

// TestIntersects checks a few cases by hand.
func TestIntersects(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"_rm", "_rm", true},
		{"_rm", "_rmdir", false},
		{"_rm_*", "_*", true},
		{"_~/rm", "_/usr/bin/r[m]", true},
		{"_~/rm", "_/usr/bin/r[x]", false},
		{"_rm_*", "_~", false},
		{"_rm", "_~/bin/tool", false},
		{"a%", "a/b", false},
		{"[!.]%", ".env", false},
		{"[!.]%", "env", true},
		{"*", "", true},
		{"?", "", false},
	} {
		assert.Equal(t, c.want, intersects(patternOf(c.a), patternOf(strings.ReplaceAll(c.b, "_", "_"))), "%q ∩ %q", c.a, c.b)
	}
}
