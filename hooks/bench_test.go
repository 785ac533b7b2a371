package hooks

import (
	"bytes"
	"context"
	"errors"
	osexec "os/exec"
	"testing"
	"time"

	"github.com/go-harness/harness/internal/proctree"
)

// BenchmarkHookRun compares one run of a command hook (contained, with
// its environment built, its JSON input written and its output read)
// with the plain baseline: exec of bash -c with the same input piped
// in. The interleaved sub-benchmark alternates the two in one loop and
// reports their ratio.
func BenchmarkHookRun(b *testing.B) {
	bash, err := osexec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	dir := b.TempDir()
	r := New(Config{ProjectDir: dir}, Settings{})
	const command = `read -r line; echo "${#line}"`
	input := []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."}}` + "\n")
	hook := func(b *testing.B) {
		out := r.exec(context.Background(), Command{Command: command}, dir, dir, input)
		if out.exit == nil || *out.exit != 0 || out.stdout == "" {
			b.Fatalf("the hook failed: %+v", out)
		}
	}
	plain := func(b *testing.B) {
		cmd := osexec.Command(bash, "-c", command)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(input)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil || out.Len() == 0 {
			b.Fatal(err)
		}
	}
	b.Run("hook", func(b *testing.B) {
		for b.Loop() {
			hook(b)
		}
	})
	b.Run("bash_c", func(b *testing.B) {
		for b.Loop() {
			plain(b)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var h, p time.Duration
		for b.Loop() {
			t0 := time.Now()
			hook(b)
			t1 := time.Now()
			plain(b)
			h += t1.Sub(t0)
			p += time.Since(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(h.Nanoseconds())/n, "hook-ns/op")
		b.ReportMetric(float64(p.Nanoseconds())/n, "bash-c-ns/op")
		b.ReportMetric(float64(h)/float64(p), "hook/bash-c")
	})
}

// BenchmarkHookContainment splits a hook run's cost: the same hook run
// with the containment the machine gives (a PID namespace where the
// kernel allows one), with the process tree only (no namespace), and
// the bash -c baseline, alternated in one loop. The difference between
// the first two is what starting the namespace (its init and holder)
// costs.
func BenchmarkHookContainment(b *testing.B) {
	bash, err := osexec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	dir := b.TempDir()
	ns := New(Config{ProjectDir: dir}, Settings{})
	tree := New(Config{ProjectDir: dir}, Settings{})
	tree.contOnce.Do(func() { tree.cont = proctree.Probe(proctree.Options{NoNamespace: errors.New("benchmark")}) })
	if !ns.containment().Namespace() {
		b.Skip("no PID namespace here: " + ns.containment().String())
	}
	const command = `read -r line; echo "${#line}"`
	input := []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."}}` + "\n")
	run := func(b *testing.B, r *Runner) {
		out := r.exec(context.Background(), Command{Command: command}, dir, dir, input)
		if out.exit == nil || *out.exit != 0 || out.stdout == "" {
			b.Fatalf("the hook failed: %+v", out)
		}
	}
	plain := func(b *testing.B) {
		cmd := osexec.Command(bash, "-c", command)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(input)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil || out.Len() == 0 {
			b.Fatal(err)
		}
	}
	var n, t, p time.Duration
	for b.Loop() {
		t0 := time.Now()
		run(b, ns)
		t1 := time.Now()
		run(b, tree)
		t2 := time.Now()
		plain(b)
		n += t1.Sub(t0)
		t += t2.Sub(t1)
		p += time.Since(t2)
	}
	k := float64(b.N)
	b.ReportMetric(float64(n.Nanoseconds())/k, "namespace-ns/op")
	b.ReportMetric(float64(t.Nanoseconds())/k, "tree-ns/op")
	b.ReportMetric(float64(p.Nanoseconds())/k, "bash-c-ns/op")
}
