package shell

import (
	"context"
	"fmt"
	"io"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// BenchmarkOneShot compares the bash tool with os/exec running the same
// bash command line and collecting its output.
func BenchmarkOneShot(b *testing.B) {
	bash := shelltest.BashPath(b)
	env := shelltest.Env(b)
	tool := Bash(Config{})
	const command = "echo hello; echo world >&2"
	c := shelltest.NewCall(b, tool, env, map[string]any{"command": command})
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
			shelltest.MustRun(b, tool, c, "hello\n[stderr]\nworld\n[exit code 0")
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
			shelltest.MustRun(b, tool, c, "hello\n[stderr]\nworld\n[exit code 0")
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
	bash := shelltest.BashPath(b)
	const size = 256 << 20
	command := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' 'x'", size)
	env := shelltest.Env(b)
	env.Output = discardStore{}
	tool := Bash(Config{})
	c := shelltest.NewCall(b, tool, env, map[string]any{"command": command})
	b.Run("tool", func(b *testing.B) {
		b.SetBytes(size)
		peak := shelltest.HeapPeak(b)
		for b.Loop() {
			shelltest.MustRun(b, tool, c, "[exit code 0")
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

// BenchmarkContainment compares one-shot `true` through the bash tool
// under the containment this system allows (a cgroup of the command's
// own as root where cgroup v2 allows it, else a PID namespace with its
// init, holder and /proc), under a PID namespace (cgroups kept out), and
// under the forced process tree, with os/exec running `bash -c true`,
// interleaved in one loop so that the ratios come from the same
// conditions.
func BenchmarkContainment(b *testing.B) {
	bash := shelltest.BashPath(b)
	env := shelltest.Env(b)
	def, ns, tree := Bash(Config{}), bashOnly(withoutCgroup()), bashOnly(withoutNamespace("benchmark"))
	cDef := shelltest.NewCall(b, def, env, map[string]any{"command": "true"})
	cNS := shelltest.NewCall(b, ns, env, map[string]any{"command": "true"})
	cTree := shelltest.NewCall(b, tree, env, map[string]any{"command": "true"})
	shelltest.MustRun(b, def, cDef, "[exit code 0") // the probes run outside the loop
	shelltest.MustRun(b, ns, cNS, "[exit code 0")
	shelltest.MustRun(b, tree, cTree, "[exit code 0")
	b.Logf("default containment: %s; without cgroups: %s", Config{}.resolve().Containment(), withoutCgroup().Containment())
	var tDef, tNS, tTree, tExec time.Duration
	for b.Loop() {
		t0 := time.Now()
		shelltest.MustRun(b, def, cDef, "[exit code 0")
		t1 := time.Now()
		shelltest.MustRun(b, ns, cNS, "[exit code 0")
		t2 := time.Now()
		shelltest.MustRun(b, tree, cTree, "[exit code 0")
		t3 := time.Now()
		if err := osexec.Command(bash, "--noprofile", "--norc", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		tDef += t1.Sub(t0)
		tNS += t2.Sub(t1)
		tTree += t3.Sub(t2)
		tExec += time.Since(t3)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tDef.Nanoseconds())/n, "default-ns/op")
	b.ReportMetric(float64(tNS.Nanoseconds())/n, "pidns-ns/op")
	b.ReportMetric(float64(tTree.Nanoseconds())/n, "tree-ns/op")
	b.ReportMetric(float64(tExec.Nanoseconds())/n, "os-exec-ns/op")
	b.ReportMetric(float64(tDef)/float64(tExec), "default/os-exec")
	b.ReportMetric(float64(tNS)/float64(tExec), "pidns/os-exec")
	b.ReportMetric(float64(tTree)/float64(tExec), "tree/os-exec")
}
