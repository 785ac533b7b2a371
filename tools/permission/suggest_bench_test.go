package permission

import (
	"testing"
	"time"
)

// BenchmarkSuggest measures an asked decision against 200 rules with
// its suggestion (tried on the policy with the rule added) and, in the
// same loop, without one (the baseline: the same decision, suggestions
// off), alternating the two each iteration. ns/decision is reported for
// both, and their ratio.
func BenchmarkSuggest(b *testing.B) {
	p := benchPolicy(b)
	plain := *p
	plain.checking = true
	ws := b.TempDir()
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", map[string]any{"file_path": "src/pkg3/x/y.go"}},
		{"bash", "bash", map[string]any{"command": "go build ./..."}},
	} {
		cl := call(ws, c.tool, c.args)
		if d := p.Decide(cl); d.Outcome != Ask || d.Suggest == "" {
			b.Fatalf("%s: %s %q, want an ask with a suggestion", c.name, d.Outcome, d.Suggest)
		}
		b.Run(c.name, func(b *testing.B) {
			var with, without time.Duration
			n := 0
			for b.Loop() {
				t0 := time.Now()
				_ = p.Decide(cl)
				t1 := time.Now()
				_ = plain.Decide(cl)
				t2 := time.Now()
				with += t1.Sub(t0)
				without += t2.Sub(t1)
				n++
			}
			b.ReportMetric(float64(with)/float64(n), "ns/suggested")
			b.ReportMetric(float64(without)/float64(n), "ns/baseline")
			b.ReportMetric(float64(with)/float64(without), "ratio")
		})
	}
}
