package benchbase

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReplaceInFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("a X b X"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceInFile(p, "X", "YY"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "a YY b X" {
		t.Fatalf("got %q", got)
	}
	if err := ReplaceInFile(filepath.Join(t.TempDir(), "missing"), "a", "b"); err == nil {
		t.Fatal("a missing file is an error")
	}
}

// Interleave runs every part once per iteration, rotating which goes
// first, and runs cleanups after their parts.
func TestInterleave(t *testing.T) {
	var order []string
	cleaned := 0
	res := testing.Benchmark(func(b *testing.B) {
		order = order[:0]
		cleaned = 0
		Interleave(b,
			// Parts of a few milliseconds keep the iterations few.
			Part{Name: "a", Run: func() { order = append(order, "a"); time.Sleep(5 * time.Millisecond) }, Cleanup: func() { cleaned++ }},
			Part{Name: "b", Run: func() { order = append(order, "b"); time.Sleep(5 * time.Millisecond) }})
	})
	if res.N < 2 {
		t.Fatalf("ran %d iterations", res.N)
	}
	if len(order) != 2*res.N || cleaned != res.N {
		t.Fatalf("%d runs and %d cleanups for %d iterations", len(order), cleaned, res.N)
	}
	for i := 0; i+1 < len(order); i += 2 {
		want := "ab"
		if i/2%2 == 1 {
			want = "ba"
		}
		if got := order[i] + order[i+1]; got != want {
			t.Fatalf("iteration %d ran %s, want %s", i/2, got, want)
		}
	}
	for _, m := range []string{"a-ns/op", "b-ns/op", "ratio"} {
		if _, ok := res.Extra[m]; !ok {
			t.Errorf("no %s metric: %v", m, res.Extra)
		}
	}
}
