package permission

import (
	"strings"
	"testing"
)

// FuzzRule checks that any rule text either parses or is refused with
// an error, and that a parsed rule matches commands and paths without
// panicking, the same way each time.
func FuzzRule(f *testing.F) {
	for _, s := range []string{"Bash(npm run test:*)", "Edit(src/**)", "Read(//etc/*.conf)", "Read(~/.ssh/**)", "mcp__gh__*", "Bash(git * --help)", "Edit([a-)", "Bash(", "Write(./a/../b)", "WebFetch(domain:*.example.com)", "WebFetch(domain:[::1])"} {
		f.Add(s, "npm run test && echo $(id) > out", "/ws/src/a/b.go")
	}
	f.Fuzz(func(t *testing.T, raw, cmd, p string) {
		r, err := parseRule(raw)
		if err != nil {
			if r != nil {
				t.Fatalf("a refused rule %q came with a value", raw)
			}
			return
		}
		again, err := parseRule(r.raw)
		if err != nil {
			t.Fatalf("the rule %q parsed, but its text %q does not", raw, r.raw)
		}
		v := parseBash(cmd, shellEnv{dir: "/ws", ws: "/ws", home: "/home/u"})
		for _, c := range v.cmds {
			if r.bash.certainlyMatches(c.words, c.tail) != again.bash.certainlyMatches(c.words, c.tail) ||
				r.bash.couldMatch(c.words, c.tail) != again.bash.couldMatch(c.words, c.tail) {
				t.Fatalf("the rule %q matches %q differently when parsed again", raw, cmd)
			}
			if r.kind == kindBash && !r.anySpec && r.bash.certainlyMatches(c.words, c.tail) && !r.bash.couldMatch(c.words, c.tail) {
				t.Fatalf("the rule %q certainly matches %q but could not", raw, cmd)
			}
		}
		if strings.HasPrefix(p, "/") && (r.kind == kindRead || r.kind == kindEdit) && r.name == "" && !r.anySpec {
			_ = r.path.match(p, "/ws", "/home/u")
		}
		if r.kind == kindWeb && r.web.Match(p) != again.web.Match(p) {
			t.Fatalf("the rule %q matches the host %q differently when parsed again", raw, p)
		}
		_ = r.matchName(cmd)
	})
}
