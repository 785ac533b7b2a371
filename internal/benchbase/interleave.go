package benchbase

import (
	"testing"
	"time"
)

// Part is one way of doing the work a benchmark compares: Run does it
// once, timed; Cleanup, when set, runs after it untimed (removing what
// Run wrote, say).
type Part struct {
	Name    string
	Run     func()
	Cleanup func()
}

// Interleave times parts doing equal work in one loop: every iteration
// runs each part once, the part that goes first rotating from one
// iteration to the next (with two parts: alternating), so the noise of
// a busy machine and the cost of going first or last fall on all alike.
// It reports each part's time per run as "<name>-ns/op" and, with two
// parts or more, the first's time over the second's as "ratio": put the
// library first and its baseline second. It returns each part's total
// time, for further ratios.
func Interleave(b *testing.B, parts ...Part) []time.Duration {
	b.Helper()
	total := make([]time.Duration, len(parts))
	runs := 0
	for i := 0; b.Loop(); i++ {
		for k := range parts {
			j := (i + k) % len(parts)
			start := time.Now()
			parts[j].Run()
			total[j] += time.Since(start)
			if parts[j].Cleanup != nil {
				b.StopTimer()
				parts[j].Cleanup()
				b.StartTimer()
			}
		}
		runs++
	}
	if runs == 0 {
		return total
	}
	for j, p := range parts {
		b.ReportMetric(float64(total[j].Nanoseconds())/float64(runs), p.Name+"-ns/op")
	}
	if len(parts) >= 2 {
		b.ReportMetric(Ratio(total[0], total[1]), "ratio")
	}
	return total
}

// Ratio is a over base, or 0 when base is 0.
func Ratio(a, base time.Duration) float64 {
	if base == 0 {
		return 0
	}
	return float64(a) / float64(base)
}
