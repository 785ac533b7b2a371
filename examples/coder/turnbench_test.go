package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkHeadlessTurn times one whole headless turn (read main.go, edit
// it, answer) as whole processes: the coder binary against the
// hand-written client in internal/baseline, which makes the same model
// calls and file operations with nothing of the library. Both are built
// here and run alternately against the same scripted endpoint, each on a
// fresh workspace, so the ratio comes out of one run on a noisy machine.
// It reports the medians (wall and CPU, in ms) and the ratios of the
// medians; the ranges are logged.
//
//	go test ./examples/coder -run '^$' -bench HeadlessTurn -benchtime 40x
func BenchmarkHeadlessTurn(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build the binaries with")
	}
	bin := b.TempDir()
	coderBin, baseBin := filepath.Join(bin, "coder"), filepath.Join(bin, "baseline")
	for _, build := range [][]string{{"-o", coderBin, "."}, {"-o", baseBin, "./internal/baseline"}} {
		if out, err := exec.Command(goTool, append([]string{"build"}, build...)...).CombinedOutput(); err != nil {
			b.Fatalf("go build %v: %v\n%s", build, err, out)
		}
	}
	srv := httptest.NewServer(turnScript())
	defer srv.Close()
	env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "HARNESS_") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "DEEPSEEK_")
	}), "HARNESS_PROVIDER=openai", "HARNESS_BASE_URL="+srv.URL, "HARNESS_API_KEY="+testKey, "HARNESS_MODEL=test-model", "NO_COLOR=1")

	type timing struct{ wall, cpu time.Duration }
	var coder, base []timing
	runOne := func(binPath string, args ...string) timing {
		ws, sessions := b.TempDir(), b.TempDir()
		if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte(buggy), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(binPath, append(append([]string{"-C", ws, "-sessions", sessions}, args...), "fix the typo in main.go")...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v\n%s", filepath.Base(binPath), err, out.String())
		}
		if got, _ := os.ReadFile(filepath.Join(ws, "main.go")); !strings.Contains(string(got), `"Hello, world!"`) {
			b.Fatalf("%s did not fix main.go:\n%s", filepath.Base(binPath), out.String())
		}
		st := cmd.ProcessState
		return timing{wall, st.UserTime() + st.SystemTime()}
	}
	// The coder asks nothing (bypass) and starts no language server after
	// the edit (the baseline checks nothing, and a language server found
	// on PATH would time itself, not the turn).
	coderArgs := []string{"-permission-mode", "bypass", "-diagnostics=false"}
	// One run of each first, so neither pays for a cold page cache.
	runOne(coderBin, coderArgs...)
	runOne(baseBin)
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			coder = append(coder, runOne(coderBin, coderArgs...))
			base = append(base, runOne(baseBin))
		} else {
			base = append(base, runOne(baseBin))
			coder = append(coder, runOne(coderBin, coderArgs...))
		}
	}
	b.StopTimer()
	stats := func(ts []timing, f func(timing) time.Duration) (med, lo, hi float64) {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = float64(f(t)) / 1e6
		}
		slices.Sort(v)
		return v[len(v)/2], v[0], v[len(v)-1]
	}
	wall := func(t timing) time.Duration { return t.wall }
	cpu := func(t timing) time.Duration { return t.cpu }
	cw, cwl, cwh := stats(coder, wall)
	bw, bwl, bwh := stats(base, wall)
	cc, ccl, cch := stats(coder, cpu)
	bc, bcl, bch := stats(base, cpu)
	b.ReportMetric(cw, "coder-wall-ms")
	b.ReportMetric(bw, "base-wall-ms")
	b.ReportMetric(cw/bw, "wall-ratio")
	b.ReportMetric(cc, "coder-cpu-ms")
	b.ReportMetric(bc, "base-cpu-ms")
	b.ReportMetric(cc/bc, "cpu-ratio")
	b.Logf("n=%d wall ms: coder %.1f [%.1f–%.1f], baseline %.1f [%.1f–%.1f]; cpu ms: coder %.1f [%.1f–%.1f], baseline %.1f [%.1f–%.1f]",
		len(coder), cw, cwl, cwh, bw, bwl, bwh, cc, ccl, cch, bc, bcl, bch)
}

// turnScript answers as fixScript does, choosing the reply by how many
// tool results the request carries, so any number of turns can run
// against it, in any order.
func turnScript() http.Handler {
	script := fixScript()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := bytes.Count(body, []byte(`"role":"tool"`))
		script[min(n, len(script)-1)].ServeHTTP(w, r)
	})
}
