package tools_test

import (
	"testing"

	"github.com/go-harness/harness/internal/benchbase"
	"github.com/go-harness/harness/internal/schemaguard"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/shell"
)

// BenchmarkNewRegistry registers the file, shell and search tools (a
// coding agent's default set) as NewRegistry does now, their plain
// schemas compiled at their first call, beside the same registration
// with every schema compiled at once (as it was), interleaved: the
// ratio is what a session that calls none of them pays against what it
// paid.
func BenchmarkNewRegistry(b *testing.B) {
	var ts []tools.Tool
	ts = append(ts, files.Tools(files.Config{})...)
	ts = append(ts, shell.Tools(shell.Config{})...)
	ts = append(ts, codesearch.Tools(codesearch.Config{})...)
	register := func() {
		if _, err := tools.NewRegistry(ts...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	benchbase.Interleave(b,
		benchbase.Part{Name: "lazy", Run: register},
		benchbase.Part{Name: "eager", Run: func() {
			register()
			for _, t := range ts {
				if _, err := schemaguard.Compile(t.Spec().InputSchema, schemaguard.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		}},
	)
}
