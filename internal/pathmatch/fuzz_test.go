package pathmatch

import (
	"strings"
	"testing"
)

// quoteGlob escapes every wildcard of s.
func quoteGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]{}\!`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzGlob compiles arbitrary patterns and matches arbitrary paths: no
// panic, a quoted path matches itself, and "**/" before a pattern
// matches at least what the pattern matches.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"**/*.go", "a/b.go"}, {"src/**", "src/x"}, {"[a-c]?.{x,y}", "ab.x"}, {"[[:alpha:]]*", "q"},
		{`\*x`, "*x"}, {"a/**/b", "a/b"}, {"{a,{b,c}}", "c"}, {"[!]]", "a"}, {"*.[", "a.["},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, p string) {
		if g, err := CompileGlob(pattern, GlobOptions{Negatable: true}); err == nil {
			ok := g.Match(p)
			if ok && !strings.HasPrefix(pattern, "**/") && !strings.HasPrefix(pattern, "!") && !strings.Contains(pattern, "{") {
				if g2, err := CompileGlob("**/"+strings.TrimPrefix(pattern, "./"), GlobOptions{}); err == nil && !g2.Match(p) && !strings.HasPrefix(pattern, "/") {
					t.Fatalf("%q matches %q but **/ before it does not", pattern, p)
				}
			}
			g.MayMatchUnder(p)
			g.LiteralPrefix()
		}
		if p == "" || strings.Contains(p, "//") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.HasPrefix(p, "./") {
			return
		}
		g, err := CompileGlob(quoteGlob(p), GlobOptions{})
		if err != nil {
			t.Fatalf("quoted %q: %v", p, err)
		}
		if !g.Match(p) {
			t.Fatalf("quoted %q does not match itself", p)
		}
	})
}

// FuzzRules parses arbitrary ignore files and matches arbitrary paths:
// no panic, and a decision that depends on the rules only through the
// last matching one (appending a rule that matches everything ignores
// every path).
func FuzzRules(f *testing.F) {
	f.Add("*.log\n!keep.log\n/build/\n", "keep.log", false)
	f.Add("**/gen/**\nspace\\ \n\\#x\n", "a/gen/b", true)
	f.Add("a/**/b\n[!x]\r\n", "a/q/b", false)
	f.Fuzz(func(t *testing.T, data, p string, dir bool) {
		rs := ParseRules([]byte(data))
		if p == "" {
			return
		}
		rs.Match(p, dir)
		all := ParseRules([]byte(data + "\n*\n"))
		if strings.Contains(p, "/") && !strings.HasSuffix(p, "/") || !strings.Contains(p, "/") {
			if all.Match(p, dir) != Ignored {
				t.Fatalf("a final * does not ignore %q", p)
			}
		}
	})
}
