package leakcheck

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Check records the goroutines running now and, when the test ends,
// fails it if goroutines started since are still running after a grace
// period (generous, so that a loaded machine's slow goroutines are not
// taken for leaks; a leak still fails, later). Call it first in a test,
// before anything starts goroutines. Not for parallel tests.
func Check(t testing.TB) {
	t.Helper()
	before := ids(snapshot())
	t.Cleanup(func() {
		deadline := time.Now().Add(30 * time.Second)
		var leaked []string
		for {
			leaked = leaked[:0]
			for id, stack := range snapshot() {
				if _, ok := before[id]; !ok && !ignorable(stack) {
					leaked = append(leaked, stack)
				}
			}
			if len(leaked) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(leaked) > 0 {
			t.Errorf("leakcheck: %d goroutine(s) leaked:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
	})
}

func ids(m map[string]string) map[string]struct{} {
	out := make(map[string]struct{}, len(m))
	for id := range m {
		out[id] = struct{}{}
	}
	return out
}

// snapshot maps goroutine ids to their stacks.
func snapshot() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		s := string(g)
		header, _, _ := strings.Cut(s, "\n")
		f := strings.Fields(header) // "goroutine 12 [running]:"
		if len(f) >= 2 && f[0] == "goroutine" {
			out[f[1]] = s
		}
	}
	return out
}

// ignorable reports goroutines the runtime and the testing package start
// on their own.
func ignorable(stack string) bool {
	for _, s := range []string{"os/signal.signal_recv", "runtime.ensureSigM", "testing.tRunner", "runtime.ReadTrace"} {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}
