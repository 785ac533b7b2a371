package lsp

import (
	"testing"
	"time"
)

// BenchmarkEditDiagnostics measures what diagnostics add to an edit
// with a warm gopls: each iteration makes the same edit (a comment
// toggled in a file of the same package) once through the plain file
// tool and once through the diagnostics middleware, alternating which
// goes first, and reports both times per edit and the difference.
//
//	go test ./tools/lsp -run XXX -bench EditDiagnostics -benchtime 40x
func BenchmarkEditDiagnostics(b *testing.B) {
	requireGopls(b)
	files := map[string]string{}
	for k, v := range goModule {
		if k != "broken.go" {
			files[k] = v
		}
	}
	files["plain.go"] = "package main\n\n// toggle: a\nfunc plain() {}\n"
	files["checked.go"] = "package main\n\n// toggle: a\nfunc checked() {}\n"
	w := newWorkspace(b, files)
	m := newManager(b, Config{})
	mw := m.Middleware()
	w.use(nil)
	w.read("plain.go")
	w.read("checked.go")

	toggle := func(name string, i int, with bool) time.Duration {
		old, new := "// toggle: a", "// toggle: b"
		if i%2 == 1 {
			old, new = new, old
		}
		if with {
			w.mw = mw
		} else {
			w.mw = nil
		}
		start := time.Now()
		res := w.edit(name, old, new)
		d := time.Since(start)
		if res.IsError {
			b.Fatalf("edit %s: %s", name, res.Text())
		}
		if with && Note(res) != "Diagnostics (gopls): no new problems after this change." {
			b.Fatalf("unexpected note: %q", Note(res))
		}
		return d
	}
	// Warm: start gopls and load the workspace.
	toggle("checked.go", 0, true)
	toggle("checked.go", 1, true)

	var plain, checked time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			plain += toggle("plain.go", i, false)
			checked += toggle("checked.go", i, true)
		} else {
			checked += toggle("checked.go", i, true)
			plain += toggle("plain.go", i, false)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(plain.Microseconds())/n, "µs/edit")
	b.ReportMetric(float64(checked.Microseconds())/n, "µs/edit+diagnostics")
	b.ReportMetric(float64((checked-plain).Milliseconds())/n, "ms-extra/edit")
}
