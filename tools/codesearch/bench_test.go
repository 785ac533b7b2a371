package codesearch_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-harness/harness/fslocal"
)

// The benchmarks run each search through the tool (as the loop
// dispatches it) beside ripgrep on the same tree in the same run, so the
// ratio of the two ns/op is the figure to judge:
//
//	go test -run '^$' -bench 'Goroot|Synthetic' -benchtime 10x ./tools/codesearch/
//
// GOROOT/src is a real tree nobody here wrote (about 11,000 files);
// the synthetic tree is 1 GiB (HARNESS_BENCH_BYTES to change it) of
// generated source files in nested directories. ripgrep runs with the
// same defaults the tools have (ignore files, hidden entries and binary
// files skipped; --no-require-git, since the tools read .gitignore files
// outside a git repository too) and -j set to the tools' worker count.
// peak-MiB is the largest heap in use sampled during the tool's runs.
//
// BenchmarkProcess (process_bench_test.go) runs the same queries with the
// tools as whole processes, as rg is.

type searchCase struct {
	name string
	args map[string]any
	rg   []string
	// total is how the result's total is read from rg: the lines
	// rg prints (lines), or the sum of its counts (sum).
	total string
}

// rgArgs returns the arguments rg runs a case with: the tools' rules and
// worker count.
func (c searchCase) rgArgs(workers int) []string {
	return append([]string{"--no-require-git", "-j", strconv.Itoa(workers)}, c.rg...)
}

func (c searchCase) tool() string {
	if strings.HasPrefix(c.name, "glob") {
		return "glob"
	}
	return "grep"
}

func grepCases(literal, rare, regex string) []searchCase {
	return []searchCase{
		{"literal", map[string]any{"pattern": literal, "literal": true}, []string{"-l", "-F", literal}, "lines"},
		{"literal-rare", map[string]any{"pattern": rare, "literal": true}, []string{"-l", "-F", rare}, "lines"},
		{"literal-i", map[string]any{"pattern": literal, "literal": true, "case_insensitive": true}, []string{"-l", "-F", "-i", literal}, "lines"},
		{"regex", map[string]any{"pattern": regex}, []string{"-l", regex}, "lines"},
		{"count", map[string]any{"pattern": literal, "literal": true, "output_mode": "count"}, []string{"-c", "-F", literal}, "sum"},
		{"content", map[string]any{"pattern": rare, "literal": true, "output_mode": "content", "context": 2}, []string{"-n", "-C2", "-F", rare}, ""},
	}
}

func runSearchBench(b *testing.B, dir string, cases []searchCase) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Log("rg is not installed (Debian package ripgrep): only the tools run")
	}
	fsys, err := fslocal.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	r := newRig(b, fsys)
	workers := min(runtime.GOMAXPROCS(0), 4)
	for _, c := range cases {
		tool := c.tool()
		// Each iteration runs the tool and rg, alternating which goes
		// first, so both see the same machine load and neither always
		// finds the page cache warmed by the other; ns/op is the tool's
		// time.
		b.Run(c.name, func(b *testing.B) {
			args := c.rgArgs(workers)
			var toolTime, rgTime time.Duration
			var out []byte
			peak := samplePeak()
			runTool := func() {
				t0 := time.Now()
				res := r.call(context.Background(), tool, c.args)
				if res.IsError {
					b.Fatal(res.Text())
				}
				toolTime += time.Since(t0)
			}
			runRG := func() {
				b.StopTimer()
				defer b.StartTimer()
				t0 := time.Now()
				cmd := exec.Command(rg, args...)
				cmd.Dir = dir
				var err error
				out, err = cmd.Output()
				if err != nil && len(out) == 0 {
					if _, ok := err.(*exec.ExitError); !ok {
						b.Fatal(err)
					}
				}
				rgTime += time.Since(t0)
			}
			b.ResetTimer()
			for i := range b.N {
				switch {
				case rg == "":
					runTool()
				case i%2 == 0:
					runTool()
					runRG()
				default:
					runRG()
					runTool()
				}
			}
			b.StopTimer()
			b.ReportMetric(peak(), "peak-MiB")
			if rg != "" {
				b.ReportMetric(float64(rgTime.Nanoseconds())/float64(b.N), "rg-ns/op")
				// Throughput relative to ripgrep: 1 is as fast, 0.5 half.
				b.ReportMetric(rgTime.Seconds()/toolTime.Seconds(), "x-rg-speed")
			}
			first, _, _ := strings.Cut(r.run(tool, c.args).Text(), "\n")
			b.Logf("tool: %s", first)
			if rg != "" {
				b.Logf("rg %s: %d lines", strings.Join(args, " "), strings.Count(string(out), "\n"))
			}
		})
	}
}

// samplePeak samples the heap in use until the returned function is
// called, which reports the peak above the start in MiB.
func samplePeak() func() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
					peak.Store(ms.HeapInuse - base)
				}
			}
		}
	}()
	return func() float64 {
		close(stop)
		wg.Wait()
		return float64(peak.Load()) / (1 << 20)
	}
}

// gorootCases are the queries over GOROOT/src: a common literal, a rare
// one, the common one case-insensitively, a regular expression, counts,
// content with context, and a glob.
func gorootCases() []searchCase {
	cases := grepCases("NewReader", "heapBitsSetType", `func \w+Reader\(`)
	sorted := globCase()
	sorted.name = "glob-newest"
	sorted.rg = append(sorted.rg, "--sortr", "modified")
	return append(cases, globCase(), sorted)
}

// globCase lists the Go files. rg's -g includes hidden files that match
// it, which the tool leaves out unless the pattern names them; the last
// -g, which wins, leaves them out of rg's list too. The tool lists the
// newest first, which takes the time of every match: glob-newest has rg
// sort so too (--sortr modified, which makes rg walk on one thread),
// glob leaves rg's list unsorted.
func globCase() searchCase {
	return searchCase{"glob", map[string]any{"pattern": "**/*.go"}, []string{"--files", "-g", "*.go", "-g", "!.*"}, "lines"}
}

// BenchmarkGoroot searches the Go toolchain's own sources.
func BenchmarkGoroot(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		b.Skip("no GOROOT/src on this machine")
	}
	runSearchBench(b, src, gorootCases())
}

// BenchmarkSynthetic searches a generated tree of 1 GiB (or
// HARNESS_BENCH_BYTES).
func BenchmarkSynthetic(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 1 GiB tree; not in -short mode")
	}
	size := int64(1 << 30)
	if s := os.Getenv("HARNESS_BENCH_BYTES"); s != "" {
		var err error
		if size, err = strconv.ParseInt(s, 10, 64); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	files := generateTree(b, dir, size)
	b.Logf("synthetic tree: %d files, %d bytes", files, size)
	cases := grepCases("ErrConnectionReset", "xyzzy_marker_7", `retry\w*\(ctx, \d+\)`)
	runSearchBench(b, dir, append(cases, globCase()))
}

// generateTree writes about size bytes of source-like files in nested
// directories, with an ignored directory and a few binary files.
func generateTree(b *testing.B, dir string, size int64) int {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("ctx err nil return func if for range value index buffer request response handler server client retry timeout connection reset stream reader writer close open config option")
	var written int64
	files := 0
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n*.tmp\n"), 0o644)
	for written < size {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", files%40), fmt.Sprintf("sub%02d", (files/40)%25))
		if files%97 == 0 {
			d = filepath.Join(dir, "build", fmt.Sprint(files%7))
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		ext := []string{".go", ".py", ".ts", ".md"}[files%4]
		f, err := os.Create(filepath.Join(d, fmt.Sprintf("file%06d%s", files, ext)))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 64<<10)
		target := 16<<10 + rng.IntN(96<<10)
		n := 0
		for line := 0; n < target; line++ {
			var k int
			switch {
			case files%31 == 0 && line == 5:
				k, _ = fmt.Fprintf(w, "\treturn ErrConnectionReset // peer went away\n")
			case files%1009 == 0 && line == 40:
				k, _ = fmt.Fprintf(w, "\tx := xyzzy_marker_7\n")
			case files%53 == 0 && line == 60:
				k, _ = fmt.Fprintf(w, "\tif err := retryWithBackoff(ctx, %d); err != nil {\n", line)
			default:
				k, _ = fmt.Fprintf(w, "\t%s := %s(%s, %d) // %s %s\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], line, words[rng.IntN(len(words))], words[rng.IntN(len(words))])
			}
			n += k
		}
		if files%500 == 0 {
			w.Write([]byte{0, 1, 2, 3})
			n += 4
		}
		w.Flush()
		f.Close()
		written += int64(n)
		files++
	}
	return files
}
