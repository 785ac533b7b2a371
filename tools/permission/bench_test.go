package permission

import (
	"fmt"
	"testing"
)

// BenchmarkDecide measures one decision against 200 rules (allow, ask
// and deny mixed; Bash prefixes, path patterns and tool names), for a
// compound bash command and for a file edit. The target is 20 µs.
func BenchmarkDecide(b *testing.B) {
	var r Rules
	for i := range 200 {
		switch i % 5 {
		case 0:
			r.Allow = append(r.Allow, fmt.Sprintf("Bash(tool%d run:*)", i))
		case 1:
			r.Ask = append(r.Ask, fmt.Sprintf("Bash(git push%d:*)", i))
		case 2:
			r.Deny = append(r.Deny, fmt.Sprintf("Edit(secret%d/**)", i))
		case 3:
			r.Allow = append(r.Allow, fmt.Sprintf("Edit(src/pkg%d/*.go)", i))
		default:
			r.Deny = append(r.Deny, fmt.Sprintf("mcp__server%d__*", i))
		}
	}
	r.Allow = append(r.Allow, "Bash(go test:*)", "Bash(grep:*)")
	p, err := New(r)
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"bash_compound", "bash", map[string]any{"command": "go test ./... 2>&1 | grep -v ok && echo \"$(date)\" > out.log"}},
		{"edit", "edit", map[string]any{"file_path": "src/pkg3/x/y.go"}},
	} {
		cl := call(ws, c.tool, c.args)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Decide(cl)
			}
		})
	}
}
