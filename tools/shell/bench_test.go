package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	osexec "os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness/tools"
)

func benchBash(b *testing.B) string {
	bash, err := osexec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	return bash
}

// benchCall builds a call the way the dispatcher does.
func benchCall(b *testing.B, t tools.Tool, env *tools.Env, args any) *tools.Call {
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	return &tools.Call{ID: "bench", Name: t.Spec().Name, Arguments: string(raw), Spec: t.Spec(), Env: env}
}

func mustRun(b *testing.B, t tools.Tool, c *tools.Call, want string) {
	res, err := t.Execute(context.Background(), c)
	if err != nil || res.IsError || !strings.Contains(res.Text(), want) {
		b.Fatalf("unexpected result: %v %s", err, res.Text())
	}
}

// BenchmarkTrue compares a round trip of `true` in a persistent shell
// (through shell_send, arguments decoded, marker parsed, result
// rendered) with starting a fresh `bash -c true`. The interleaved
// sub-benchmark runs both in one loop and reports their ratio.
func BenchmarkTrue(b *testing.B) {
	bash := benchBash(b)
	env := testEnv(b)
	k := newKit(b, env)
	id, _ := k.openShell(nil)
	send := benchCall(b, k.send, env, map[string]any{"session_id": id, "command": "true"})

	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			mustRun(b, k.send, send, "[exit code 0")
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
			mustRun(b, k.send, send, "[exit code 0")
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

// BenchmarkOneShot compares the bash tool with os/exec running the same
// bash command line and collecting its output.
func BenchmarkOneShot(b *testing.B) {
	bash := benchBash(b)
	env := testEnv(b)
	tool := Bash()
	const command = "echo hello; echo world >&2"
	c := benchCall(b, tool, env, map[string]any{"command": command})
	osExec := func() {
		cmd := osexec.Command(bash, "--noprofile", "--norc", "-c", command)
		cmd.Dir = env.Cwd
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || string(out) != "hello\n" || stderr.String() != "world\n" {
			b.Fatalf("unexpected: %v %q %q", err, out, stderr.String())
		}
	}
	b.Run("tool", func(b *testing.B) {
		for b.Loop() {
			mustRun(b, tool, c, "hello\n[stderr]\nworld\n[exit code 0")
		}
	})
	b.Run("os_exec", func(b *testing.B) {
		for b.Loop() {
			osExec()
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var viaTool, direct time.Duration
		for b.Loop() {
			t0 := time.Now()
			mustRun(b, tool, c, "hello\n[stderr]\nworld\n[exit code 0")
			t1 := time.Now()
			osExec()
			viaTool += t1.Sub(t0)
			direct += time.Since(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(viaTool.Nanoseconds())/n, "tool-ns/op")
		b.ReportMetric(float64(direct.Nanoseconds())/n, "os-exec-ns/op")
		b.ReportMetric(float64(viaTool)/float64(direct), "tool/os-exec")
	})
}

// BenchmarkLargeOutput runs a command printing 256 MiB through the bash
// tool (head and tail kept, whole stream handed to an output store that
// discards it) beside
// os/exec copying the same output to io.Discard, and reports throughput
// and the peak heap in use while the tool runs.
func BenchmarkLargeOutput(b *testing.B) {
	bash := benchBash(b)
	const size = 256 << 20
	command := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' 'x'", size)
	env := testEnv(b)
	env.Output = discardStore{}
	tool := Bash()
	c := benchCall(b, tool, env, map[string]any{"command": command})
	b.Run("tool", func(b *testing.B) {
		b.SetBytes(size)
		peak := heapPeak(b)
		for b.Loop() {
			mustRun(b, tool, c, "[exit code 0")
		}
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
	})
	b.Run("os_exec", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			cmd := osexec.Command(bash, "--noprofile", "--norc", "-c", command)
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// discardStore is an OutputStore that reads and drops what it is given,
// so a benchmark measures the tool and not a store.
type discardStore struct{}

func (discardStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
	n, err := io.Copy(io.Discard, r)
	return tools.Stored{Locator: tools.OutputScheme + "discarded", Size: n}, err
}

func (discardStore) Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	return nil, io.EOF
}

// oldANSI is the pattern clean used before it read control sequences
// itself; the benchmark keeps it as the baseline.
var oldANSI = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>78]`)

// BenchmarkClean compares clean with the regexp replacement it replaced
// (which left OSC strings in the text), on coloured test output and on
// plain text, in one run so that the ratio can be read off.
func BenchmarkClean(b *testing.B) {
	var coloured, plain strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&coloured, "\x1b[32mok\x1b[0m  \x1b[1mexample.com/pkg%d\x1b[0m\t0.%03ds\r\n", i, i%1000)
		fmt.Fprintf(&plain, "ok  example.com/pkg%d\t0.%03ds\n", i, i%1000)
	}
	for _, in := range []struct{ name, text string }{{"coloured", coloured.String()}, {"plain", plain.String()}} {
		b.Run(in.name+"/clean", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				_ = clean(in.text)
			}
		})
		b.Run(in.name+"/regexp_baseline", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				s := strings.ToValidUTF8(in.text, "\uFFFD")
				if strings.IndexByte(s, 0x1b) >= 0 {
					s = oldANSI.ReplaceAllString(s, "")
				}
				_ = collapseCR(s)
			}
		})
	}
}

// BenchmarkContainment compares one-shot `true` through the bash tool
// under the containment this system allows (a PID namespace, with its
// init, holder and /proc) and under the forced process tree, with
// os/exec running `bash -c true`, interleaved in one loop so that the
// ratios come from the same conditions.
func BenchmarkContainment(b *testing.B) {
	bash := benchBash(b)
	env := testEnv(b)
	def, tree := Bash(), Bash(withoutNamespace("benchmark"))
	cDef := benchCall(b, def, env, map[string]any{"command": "true"})
	cTree := benchCall(b, tree, env, map[string]any{"command": "true"})
	mustRun(b, def, cDef, "[exit code 0") // the probes run outside the loop
	mustRun(b, tree, cTree, "[exit code 0")
	b.Logf("default containment: %s", newConfig(nil).containment())
	var tDef, tTree, tExec time.Duration
	for b.Loop() {
		t0 := time.Now()
		mustRun(b, def, cDef, "[exit code 0")
		t1 := time.Now()
		mustRun(b, tree, cTree, "[exit code 0")
		t2 := time.Now()
		if err := osexec.Command(bash, "--noprofile", "--norc", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		tDef += t1.Sub(t0)
		tTree += t2.Sub(t1)
		tExec += time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tDef.Nanoseconds())/n, "default-ns/op")
	b.ReportMetric(float64(tTree.Nanoseconds())/n, "tree-ns/op")
	b.ReportMetric(float64(tExec.Nanoseconds())/n, "os-exec-ns/op")
	b.ReportMetric(float64(tDef)/float64(tExec), "default/os-exec")
	b.ReportMetric(float64(tTree)/float64(tExec), "tree/os-exec")
}
