package fslocal_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/benchbase"
)

// bigSize is the size of the file BenchmarkReadBigFile reads: 1 GiB, or
// HARNESS_BENCH_BYTES.
func bigSize(b *testing.B) int64 {
	if s := os.Getenv("HARNESS_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatalf("HARNESS_BENCH_BYTES: %v", err)
		}
		return n
	}
	return 1 << 30
}

// writeLines fills p with numbered lines of about 60 bytes up to size.
func writeLines(b *testing.B, p string, size int64) int {
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	lines := 0
	for written < size {
		n, _ := fmt.Fprintf(w, "%09d the quick brown fox jumps over the lazy dog, again\n", lines+1)
		written += int64(n)
		lines++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return lines
}

// allocMiB reports the bytes allocated per operation in MiB: an upper
// bound of the heap one read can hold at once.
func allocMiB(b *testing.B, run func()) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
}

// BenchmarkReadBigFile reads windows of a 1 GiB text file (created once,
// in b.TempDir) beside `wc -l` on the same file. Both read the whole file:
// read's total line count is exact.
//
//	go test -run '^$' -bench BenchmarkReadBigFile -benchtime 5x ./fslocal/
func BenchmarkReadBigFile(b *testing.B) {
	if testing.Short() {
		b.Skip("needs a 1 GiB file; not in -short mode")
	}
	wc, err := exec.LookPath("wc")
	if err != nil {
		b.Skip("no wc on PATH for the baseline")
	}
	dir := b.TempDir()
	p := filepath.Join(dir, "big.txt")
	size := bigSize(b)
	lines := writeLines(b, p, size)
	fsys, err := fslocal.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	ns := filepath.ToSlash(p)
	// Warm the page cache so every contender reads from memory.
	if _, err := exec.Command(wc, "-l", p).Output(); err != nil {
		b.Fatal(err)
	}

	read := func(b *testing.B, w fs.Window, wantFirst int) {
		b.SetBytes(size)
		b.ReportAllocs()
		allocMiB(b, func() {
			t, err := fsys.ReadText(ctx, ns, w)
			if err != nil {
				b.Fatal(err)
			}
			if t.TotalLines != lines || t.Offset != wantFirst || len(t.Lines) != 2000 {
				b.Fatalf("window %d+%d of %d lines", t.Offset, len(t.Lines), t.TotalLines)
			}
		})
	}
	// A byte cap large enough for 2000 whole lines.
	b.Run("read-first-2000", func(b *testing.B) { read(b, fs.Window{Limit: 2000, MaxBytes: 1 << 20}, 1) })
	b.Run("read-last-2000", func(b *testing.B) {
		read(b, fs.Window{Offset: lines - 1999, Limit: 2000, MaxBytes: 1 << 20}, lines-1999)
	})
	b.Run("wc-l", func(b *testing.B) {
		b.SetBytes(size)
		var maxRSS int64
		for range b.N {
			cmd := exec.Command(wc, "-l", p)
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			if got, _ := strconv.Atoi(string(bytes.Fields(out)[0])); got != lines {
				b.Fatalf("wc -l says %d lines, want %d", got, lines)
			}
			maxRSS = max(maxRSS, maxRSSKiB(cmd.ProcessState))
		}
		b.ReportMetric(float64(maxRSS)/1024, "maxrss-MiB")
	})
}

// BenchmarkEdit10MB edits one line of a 10 MB file (read, version check,
// literal replace, temp file, fsync, rename, directory fsync) beside the
// hand-written minimum: read the file, replace, write it back and fsync.
//
//	go test -run '^$' -bench BenchmarkEdit10MB ./fslocal/
func BenchmarkEdit10MB(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "ten.txt")
	var buf bytes.Buffer
	for i := 0; buf.Len() < 10_000_000; i++ {
		fmt.Fprintf(&buf, "%07d some ordinary source text, nothing to see here\n", i)
	}
	mid := buf.Len() / 2
	content := append(append(buf.Bytes()[:mid:mid], []byte("MARKER-A\n")...), buf.Bytes()[mid:]...)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		b.Fatal(err)
	}
	fsys, err := fslocal.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	ns := filepath.ToSlash(p)
	swap := func(i int) (string, string) {
		if i%2 == 0 {
			return "MARKER-A", "MARKER-B"
		}
		return "MARKER-B", "MARKER-A"
	}

	b.Run("fs-edit", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		t, err := fsys.ReadText(ctx, ns, fs.Window{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		v := t.Info.Version
		b.ResetTimer()
		for i := range b.N {
			o, n := swap(i)
			res, err := fsys.Edit(ctx, ns, fs.Edit{Old: o, New: n}, fs.Precondition{Version: v})
			if err != nil {
				b.Fatal(err)
			}
			v = res.Info.Version
		}
		b.StopTimer()
		if b.N%2 == 1 {
			fsys.Edit(ctx, ns, fs.Edit{Old: "MARKER-B", New: "MARKER-A"}, fs.Precondition{})
		}
	})
	b.Run("read-replace-write-fsync", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for i := range b.N {
			o, n := swap(i)
			if err := benchbase.ReplaceInFile(p, o, n); err != nil {
				b.Fatal(err)
			}
		}
		if b.N%2 == 1 {
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(data, []byte("MARKER-B"), []byte("MARKER-A"), 1), 0o644)
		}
	})
}
