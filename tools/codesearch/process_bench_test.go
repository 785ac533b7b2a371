package codesearch_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkProcess times the tools as whole processes beside ripgrep:
// each iteration starts the csearch command (internal/csearch: open the
// tree, run one glob or grep call, print the result, exit) and rg with
// the same query, rules and worker count, alternating which goes first,
// over GOROOT/src. The queries are those of BenchmarkGoroot.
//
//	go test -run '^$' -bench Process -benchtime 20x -count 3 ./tools/codesearch/
//
// Metrics: tool-ms and rg-ms are the mean wall times of one process;
// x-rg-speed is rg's time over the tool's (1 is as fast, 0.5 half as
// fast); x-rg-cpu the same for CPU time (user and system), which a
// loaded machine disturbs less. Before timing, each query's total (files,
// lines or counts) is checked to be the same in both, so that both do
// the same work.
func BenchmarkProcess(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		b.Skip("no GOROOT/src on this machine")
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg is not installed (Debian package ripgrep): nothing to compare with")
	}
	bin := filepath.Join(b.TempDir(), "csearch")
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(gocmd, "build", "-o", bin, "github.com/go-harness/harness/tools/codesearch/internal/csearch").CombinedOutput(); err != nil {
		b.Fatalf("building csearch: %v\n%s", err, out)
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	for _, c := range gorootCases() {
		b.Run(c.name, func(b *testing.B) {
			raw, err := json.Marshal(c.args)
			if err != nil {
				b.Fatal(err)
			}
			tool := exec.Command(bin, "-workers", strconv.Itoa(workers), src, c.tool(), string(raw))
			base := exec.Command(rg, c.rgArgs(workers)...)
			base.Dir = src
			checkSameTotal(b, c, run(b, tool), run(b, base))
			var toolWall, rgWall, toolCPU, rgCPU time.Duration
			for i := 0; b.Loop(); i++ {
				for k := range 2 {
					if (i+k)%2 == 0 {
						w, cpu := timed(b, bin, tool.Args[1:], "")
						toolWall, toolCPU = toolWall+w, toolCPU+cpu
					} else {
						w, cpu := timed(b, rg, base.Args[1:], src)
						rgWall, rgCPU = rgWall+w, rgCPU+cpu
					}
				}
			}
			n := float64(b.N)
			b.ReportMetric(toolWall.Seconds()*1e3/n, "tool-ms")
			b.ReportMetric(rgWall.Seconds()*1e3/n, "rg-ms")
			b.ReportMetric(rgWall.Seconds()/toolWall.Seconds(), "x-rg-speed")
			b.ReportMetric(rgCPU.Seconds()/toolCPU.Seconds(), "x-rg-cpu")
		})
	}
}

// run runs cmd once and returns its output; rg's status 1 (no match) is
// not an error.
func run(b *testing.B, cmd *exec.Cmd) string {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && !(cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 1 && errb.Len() == 0) {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, errb.String())
	}
	return out.String()
}

// timed runs a command with its output captured and returns its wall and
// CPU time.
func timed(b *testing.B, name string, args []string, dir string) (wall, cpu time.Duration) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	t0 := time.Now()
	err := cmd.Run()
	wall = time.Since(t0)
	if err != nil && (cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1) {
		b.Fatalf("%s: %v", name, err)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// checkSameTotal compares the total in the first line of the tool's
// result with what rg printed: its lines, or the sum of its counts.
func checkSameTotal(b *testing.B, c searchCase, tool, rg string) {
	first, _, _ := strings.Cut(tool, "\n")
	f := strings.Fields(first)
	if len(f) == 0 {
		b.Fatalf("empty tool result")
	}
	got, err := strconv.Atoi(f[0])
	if err != nil {
		b.Fatalf("tool result does not start with its total: %q", first)
	}
	want := 0
	switch c.total {
	case "lines":
		want = strings.Count(rg, "\n")
	case "sum":
		for _, line := range strings.Split(strings.TrimSpace(rg), "\n") {
			i := strings.LastIndexByte(line, ':')
			n, err := strconv.Atoi(line[i+1:])
			if err != nil {
				b.Fatalf("rg -c printed %q", line)
			}
			want += n
		}
	default:
		return
	}
	if got != want {
		b.Fatalf("not the same work: the tool found %d (%q), rg %d", got, first, want)
	}
	b.Logf("%s", first)
}
