package persistent

import (
	osexec "os/exec"
	"testing"
	"time"

	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// BenchmarkTrue compares a round trip of `true` in a persistent shell
// (through shell_send, arguments decoded, marker parsed, result
// rendered) with starting a fresh `bash -c true`. The interleaved
// sub-benchmark runs both in one loop and reports their ratio.
func BenchmarkTrue(b *testing.B) {
	bash := shelltest.BashPath(b)
	env := shelltest.Env(b)
	k := newKit(b, env)
	id, _ := k.OpenShell(nil)
	send := shelltest.NewCall(b, k.Send, env, map[string]any{"session_id": id, "command": "true"})

	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			shelltest.MustRun(b, k.Send, send, "[exit code 0")
		}
	})
	b.Run("fresh_bash", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var inSession, fresh time.Duration
		for b.Loop() {
			t0 := time.Now()
			shelltest.MustRun(b, k.Send, send, "[exit code 0")
			t1 := time.Now()
			if err := osexec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
			inSession += t1.Sub(t0)
			fresh += time.Since(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(inSession.Nanoseconds())/n, "session-ns/op")
		b.ReportMetric(float64(fresh.Nanoseconds())/n, "fresh-bash-ns/op")
		b.ReportMetric(float64(inSession)/float64(fresh), "session/fresh")
	})
}
