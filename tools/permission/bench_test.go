package permission

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// benchPolicy is a policy of 200 rules (allow, ask and deny mixed; Bash
// prefixes, path patterns and tool names).
func benchPolicy(b *testing.B) *Policy {
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
	r.Allow = append(r.Allow, "Bash(go test:*)", "Bash(grep:*)", "Bash(echo:*)", "Bash(date)")
	p, err := New(r)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchCompound is the compound command the benchmarks decide.
const benchCompound = "go test ./... 2>&1 | grep -v ok && echo \"$(date)\" > out.log"

// BenchmarkDecide measures one decision against 200 rules, for a
// compound bash command and for a file edit.
func BenchmarkDecide(b *testing.B) {
	p := benchPolicy(b)
	ws := b.TempDir()
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"bash_compound", "bash", map[string]any{"command": benchCompound}},
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

// BenchmarkDecideVsSplitter decides bash commands against 200 rules
// with the parser-based rules and, in the same loop, with the
// hand-written splitter they replaced (baseline_test.go), alternating
// the two in blocks of 64 decisions. It reports both times per
// decision, as wall time and as the CPU time of the benchmark's thread
// (which a loaded machine does not inflate), and their ratios (the
// goal: new/old at most 2).
func BenchmarkDecideVsSplitter(b *testing.B) {
	p := benchPolicy(b)
	ws := b.TempDir()
	for _, c := range []struct{ name, cmd string }{
		{"compound", benchCompound},
		{"simple", "go test ./..."},
		{"long", "cd src && go vet ./... && go test -run 'Test(A|B)' -count=1 ./pkg/... 2>&1 | grep -v '^ok' | tee ../test.log; echo done"},
	} {
		cl := call(ws, "bash", map[string]any{"command": c.cmd})
		if got, want := p.Decide(cl).Outcome, p.oldDecide(cl).Outcome; got != want && c.name == "compound" {
			b.Fatalf("the two decide %q differently: %s, %s", c.cmd, got, want)
		}
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			const block = 64
			var newT, oldT, newCPU, oldCPU time.Duration
			n := 0
			for b.Loop() {
				t0, c0 := time.Now(), threadCPU()
				for range block {
					_ = p.Decide(cl)
				}
				t1, c1 := time.Now(), threadCPU()
				for range block {
					_ = p.oldDecide(cl)
				}
				t2, c2 := time.Now(), threadCPU()
				newT, oldT = newT+t1.Sub(t0), oldT+t2.Sub(t1)
				newCPU, oldCPU = newCPU+c1-c0, oldCPU+c2-c1
				n += block
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
			b.ReportMetric(per(newT), "new-ns/op")
			b.ReportMetric(per(oldT), "old-ns/op")
			b.ReportMetric(float64(newT)/float64(oldT), "new/old")
			b.ReportMetric(per(newCPU), "new-cpu-ns/op")
			b.ReportMetric(per(oldCPU), "old-cpu-ns/op")
			b.ReportMetric(float64(newCPU)/float64(oldCPU), "cpu-new/old")
		})
	}
}
