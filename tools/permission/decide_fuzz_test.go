package permission

import (
	"path"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzDecide decides any command line under the issue's rules, in
// default and bypass mode, and checks the decision against an
// independent walk of the parser's tree: a line with a plain rm or curl
// command is denied in both modes, and a line the parser refuses is
// never allowed by a prefix rule. Its corpus holds the cases of issue
// 27.
func FuzzDecide(f *testing.F) {
	for _, a := range attacks {
		f.Add(a.cmd)
	}
	for _, s := range []string{"ls", "git status && npm test", "echo $(rm -rf /)", "cat <<EOF\nx\nEOF", "echo 'x", "f() { rm x; }; f", "a > b 2>&1"} {
		f.Add(s)
	}
	ws := "/nonexistent/ws"
	pd, err := New(Rules{Allow: issueRules.Allow, Deny: issueRules.Deny, Home: "/nonexistent/home"})
	if err != nil {
		f.Fatal(err)
	}
	pb, _ := New(Rules{Allow: issueRules.Allow, Deny: issueRules.Deny, Home: "/nonexistent/home", Mode: ModeBypass})
	f.Fuzz(func(t *testing.T, line string) {
		// The command reaches the policy (and the shell) as JSON, which
		// holds valid UTF-8 only.
		line = strings.ToValidUTF8(line, "\uFFFD")
		dd := pd.Decide(call(ws, "bash", map[string]any{"command": line}))
		db := pb.Decide(call(ws, "bash", map[string]any{"command": line}))
		if dd.Reason == "" || db.Reason == "" {
			t.Fatalf("a decision without a reason for %q", line)
		}
		if dd.Outcome == Deny && db.Outcome != Deny || dd.Outcome != Deny && db.Outcome == Deny {
			t.Fatalf("default and bypass disagree on a denial of %q: %s / %s", line, dd.Reason, db.Reason)
		}
		p := syntax.NewParser(syntax.Variant(syntax.LangBash))
		file, err := p.Parse(strings.NewReader(line), "")
		if err != nil || strings.IndexByte(line, 0) >= 0 {
			if dd.Outcome == Allow {
				t.Fatalf("allowed %q, which the parser refuses (%v)", line, err)
			}
			return
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			c, ok := n.(*syntax.CallExpr)
			if !ok || len(c.Args) == 0 {
				return true
			}
			words := plainWords(c)
			if words[0] == nil {
				if dd.Outcome == Allow {
					t.Fatalf("allowed %q, whose command `%s` is not plain", line, line[c.Args[0].Pos().Offset():c.Args[0].End().Offset()])
				}
				return true
			}
			switch path.Base(*words[0]) {
			case "rm", "curl":
				if db.Outcome != Deny {
					t.Fatalf("%q runs %s and is not denied: %s", line, *words[0], db.Reason)
				}
			}
			return true
		})
	})
}
