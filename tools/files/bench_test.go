package files_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/benchbase"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
)

// toolRig runs tools the way the loop does, for benchmarks.
type toolRig struct {
	b   *testing.B
	env *tools.Env
	reg *tools.Registry
}

func newToolRig(b *testing.B, dir string) *toolRig {
	fsys, err := fslocal.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fsys.Close() })
	reg, err := tools.NewRegistry(files.Tools(files.Config{})...)
	if err != nil {
		b.Fatal(err)
	}
	state := &tools.State{}
	b.Cleanup(func() { state.Close() })
	return &toolRig{b: b, reg: reg, env: &tools.Env{Cwd: fsys.Root(), FS: fsys, State: state}}
}

func (r *toolRig) run(name string, args map[string]any) *harness.ToolResult {
	raw, _ := json.Marshal(args)
	c := &tools.Call{ID: "b", Name: name, Arguments: string(raw), Env: r.env}
	if res := r.reg.Check(c); res != nil {
		r.b.Fatal(res.Text())
	}
	res := toolexec.Executor()(context.Background(), c)
	if res.IsError {
		r.b.Fatal(res.Text())
	}
	return res
}

// BenchmarkReadTool runs the read tool (window, numbering, footer, ledger)
// at the start and at the end of a 1 GiB file (or HARNESS_BENCH_BYTES),
// beside `wc -l` on the same file. With these 70-byte lines the 50 KB
// output cap ends each window after about 750 lines; the whole file is
// scanned either way, for the exact line count.
//
//	go test -run '^$' -bench BenchmarkReadTool -benchtime 5x ./tools/files/
func BenchmarkReadTool(b *testing.B) {
	if testing.Short() {
		b.Skip("needs a 1 GiB file; not in -short mode")
	}
	wc, err := exec.LookPath("wc")
	if err != nil {
		b.Skip("no wc on PATH for the baseline")
	}
	size := int64(1 << 30)
	if s := os.Getenv("HARNESS_BENCH_BYTES"); s != "" {
		if size, err = strconv.ParseInt(s, 10, 64); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	p := filepath.Join(dir, "big.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	lines := 0
	for n := int64(0); n < size; lines++ {
		k, _ := fmt.Fprintf(w, "%09d INFO request served in 12ms path=/api/v1/items status=200\n", lines+1)
		n += int64(k)
	}
	w.Flush()
	f.Close()
	exec.Command(wc, "-l", p).Run() // warm the page cache
	r := newToolRig(b, dir)
	for _, c := range []struct {
		name   string
		offset int
	}{{"first-2000", 1}, {"last-2000", lines - 1999}} {
		b.Run("read-"+c.name, func(b *testing.B) {
			b.SetBytes(size)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				res := r.run("read", map[string]any{"file_path": "big.log", "offset": c.offset})
				// The 50 KB cap ends the window before 2000 of these lines.
				if res.Files[0].StartLine != c.offset || res.Files[0].EndLine < c.offset+500 {
					b.Fatalf("window %d-%d", res.Files[0].StartLine, res.Files[0].EndLine)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
		})
	}
	b.Run("wc-l", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			if err := exec.Command(wc, "-l", p).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEditTool10MB runs the edit tool (ledger, version check, literal
// replace, atomic write with fsyncs, diff render, reply snippet) on a
// 10 MB file beside the hand-written read + replace + write + fsync.
//
//	go test -run '^$' -bench BenchmarkEditTool10MB ./tools/files/
func BenchmarkEditTool10MB(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "ten.go")
	var buf bytes.Buffer
	for i := 0; buf.Len() < 10_000_000; i++ {
		fmt.Fprintf(&buf, "\tx%07d := compute(%d) // ordinary source text\n", i, i)
		if i == 100_000 {
			buf.WriteString("\tmarker := \"A\"\n")
		}
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	swap := func(i int) (string, string) {
		if i%2 == 0 {
			return `marker := "A"`, `marker := "B"`
		}
		return `marker := "B"`, `marker := "A"`
	}
	b.Run("edit-tool", func(b *testing.B) {
		r := newToolRig(b, dir)
		r.run("read", map[string]any{"file_path": "ten.go", "limit": 1})
		b.SetBytes(int64(buf.Len()))
		b.ResetTimer()
		for i := range b.N {
			o, n := swap(i)
			r.run("edit", map[string]any{"file_path": "ten.go", "old_string": o, "new_string": n})
		}
		b.StopTimer()
		if b.N%2 == 1 {
			r.run("edit", map[string]any{"file_path": "ten.go", "old_string": `marker := "B"`, "new_string": `marker := "A"`})
		}
	})
	b.Run("read-replace-write-fsync", func(b *testing.B) {
		b.SetBytes(int64(buf.Len()))
		for i := range b.N {
			o, n := swap(i)
			if err := benchbase.ReplaceInFile(p, o, n); err != nil {
				b.Fatal(err)
			}
		}
		if b.N%2 == 1 {
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(data, []byte(`marker := "B"`), []byte(`marker := "A"`), 1), 0o644)
		}
	})
}
