package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/session/attachments"
)

// benchTree writes files files in directories of 50, aged an hour so
// that no entry is racy, and returns the directory.
func benchTree(b *testing.B, files int) string {
	b.Helper()
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/50), fmt.Sprintf("sub%d", i%2), fmt.Sprintf("file%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		content := fmt.Sprintf("package pkg%d\n\n// File %d of the benchmark tree.\nfunc F%d() int { return %d }\n", i/50, i, i, i)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.o\n/build/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, ".gitignore"), old, old)
	return dir
}

// shadowGit returns a function that runs git with GIT_DIR outside the
// tree and GIT_WORK_TREE the tree, as a checkpointing tool would keep a
// shadow repository.
func shadowGit(b *testing.B, tree string) func(args ...string) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed: the baseline needs it")
	}
	gitDir := filepath.Join(b.TempDir(), "shadow.git")
	env := append(os.Environ(), "GIT_DIR="+gitDir, "GIT_WORK_TREE="+tree, "GIT_CONFIG_NOSYSTEM=1", "HOME="+b.TempDir(),
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Env = env
		cmd.Dir = tree
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	return run
}

// interleave runs ours and base alternately, b.N times each, and
// reports the mean wall time of each and their ratio (ours/base), so that
// a machine's changing load weighs on both alike; the CPU time (this
// process's and its children's) too, where the system reports it.
func interleave(b *testing.B, ours, base func()) {
	interleavePrep(b, nil, ours, base)
}

// interleavePrep is interleave with prep run, untimed, before each run
// of either.
func interleavePrep(b *testing.B, prep func(), ours, base func()) {
	b.Helper()
	var tOurs, tBase, cOurs, cBase time.Duration
	timed := func(f func(), wall, cpu *time.Duration) {
		if prep != nil {
			prep()
		}
		c0 := cpuTime()
		t0 := time.Now()
		f()
		*wall += time.Since(t0)
		*cpu += cpuTime() - c0
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			timed(ours, &tOurs, &cOurs)
			timed(base, &tBase, &cBase)
		} else {
			timed(base, &tBase, &cBase)
			timed(ours, &tOurs, &cOurs)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(tOurs.Nanoseconds())/n, "ours-ns/op")
	b.ReportMetric(float64(tBase.Nanoseconds())/n, "base-ns/op")
	b.ReportMetric(float64(tOurs)/float64(tBase), "ours/base")
	if cBase > 0 {
		b.ReportMetric(float64(cOurs.Nanoseconds())/n, "ours-cpu-ns/op")
		b.ReportMetric(float64(cBase.Nanoseconds())/n, "base-cpu-ns/op")
		b.ReportMetric(float64(cOurs)/float64(cBase), "cpu-ours/base")
	}
}

// BenchmarkCheckpointUnchanged checkpoints an unchanged tree of 10,000
// files (ours) beside the baseline, git add -A && git write-tree in a
// shadow repository whose index is git's stat cache (base), alternating
// the two.
func BenchmarkCheckpointUnchanged(b *testing.B) {
	tree := benchTree(b, 10_000)
	ctx := context.Background()
	w, err := checkpoint.Open(tree, checkpoint.Config{Store: attachments.NewMemory()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Take(ctx); err != nil {
		b.Fatal(err)
	}
	git := shadowGit(b, tree)
	git("add", "-A")
	want := git("write-tree")
	interleave(b, func() {
		snap, err := w.Take(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if snap.Tree.Len() < 10_000 {
			b.Fatal(snap.Tree.Len())
		}
	}, func() {
		git("add", "-A")
		if got := git("write-tree"); got != want {
			b.Fatalf("the tree changed: %s, was %s", got, want)
		}
	})
}

// BenchmarkCheckpointOneChanged changes one file of a 10,000-file tree
// and checkpoints it (ours), beside the same change followed by git add
// -A && git write-tree in a shadow repository (base).
func BenchmarkCheckpointOneChanged(b *testing.B) {
	tree := benchTree(b, 10_000)
	ctx := context.Background()
	w, err := checkpoint.Open(tree, checkpoint.Config{Store: attachments.NewMemory()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Take(ctx); err != nil {
		b.Fatal(err)
	}
	git := shadowGit(b, tree)
	git("add", "-A")
	git("write-tree")
	p := filepath.Join(tree, "pkg100", "sub0", "file5000.go")
	n := 0
	change := func() {
		n++
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package pkg100\n\n// change %d\n", n)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	interleave(b, func() {
		change()
		snap, err := w.Take(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if snap.Changes.Modified != 1 {
			b.Fatalf("changes %+v", snap.Changes)
		}
	}, func() {
		change()
		git("add", "-A")
		git("write-tree")
	})
}

// BenchmarkRewind100 rewinds a 10,000-file tree in which 100 files
// changed to its checkpoint (ours: a checkpoint of the files as they
// are, the plan, the restore, a checkpoint after), beside the shadow
// repository's way (base: git add -A && git write-tree to keep the files
// as they are, then git reset --hard to the checkpoint's commit). The
// 100 changes are made before each, untimed.
func BenchmarkRewind100(b *testing.B) {
	tree := benchTree(b, 10_000)
	ctx := context.Background()
	w, err := checkpoint.Open(tree, checkpoint.Config{Store: attachments.NewMemory()})
	if err != nil {
		b.Fatal(err)
	}
	target, err := w.Take(ctx)
	if err != nil {
		b.Fatal(err)
	}
	git := shadowGit(b, tree)
	git("add", "-A")
	commit := git("commit-tree", git("write-tree"), "-m", "checkpoint")
	round := 0
	prep := func() {
		round++
		for i := range 100 {
			f := i * 100
			p := filepath.Join(tree, fmt.Sprintf("pkg%03d", f/50), fmt.Sprintf("sub%d", f%2), fmt.Sprintf("file%04d.go", f))
			if err := os.WriteFile(p, []byte(fmt.Sprintf("package changed\n// round %d\n", round)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	interleavePrep(b, prep, func() {
		now, err := w.Take(ctx)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := w.Plan(ctx, target.Tree, now, checkpoint.PlanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		done, err := w.Apply(ctx, plan, false)
		if err != nil {
			b.Fatal(err)
		}
		if len(done.Restored()) != 100 {
			b.Fatalf("restored %d files", len(done.Restored()))
		}
		if _, err := w.Take(ctx); err != nil {
			b.Fatal(err)
		}
	}, func() {
		git("add", "-A")
		git("write-tree")
		git("reset", "-q", "--hard", commit)
	})
}
