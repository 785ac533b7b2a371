package codesearch_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/tools/permission"
)

// BenchmarkRestricted measures what the path policy costs a search:
// grep and glob over GOROOT/src through the plain file system and through
// fs.Restrict with issue 27's rules (and a pattern without a slash, which
// every entry is matched against), interleaved in one loop, with the ratio.
func BenchmarkRestricted(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		b.Skip("no GOROOT/src on this machine")
	}
	fsys, err := fslocal.New(src)
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(./secrets/**)", "Edit(./.git/**)", "Read(.env)", "Read(*.pem)"}})
	if err != nil {
		b.Fatal(err)
	}
	plain, restricted := newRig(b, fsys), newRig(b, fs.Restrict(fsys, pol.Paths(fsys.Root())))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"grep", map[string]any{"pattern": "NewReader", "literal": true}},
		{"glob", map[string]any{"pattern": "**/*.go"}},
	} {
		b.Run(c.tool, func(b *testing.B) {
			var tp, tr time.Duration
			for b.Loop() {
				t0 := time.Now()
				if res := plain.call(context.Background(), c.tool, c.args); res.IsError {
					b.Fatal(res.Text())
				}
				t1 := time.Now()
				if res := restricted.call(context.Background(), c.tool, c.args); res.IsError {
					b.Fatal(res.Text())
				}
				tp += t1.Sub(t0)
				tr += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tp.Nanoseconds())/n, "plain-ns/op")
			b.ReportMetric(float64(tr.Nanoseconds())/n, "restricted-ns/op")
			b.ReportMetric(float64(tr)/float64(tp), "restricted/plain")
		})
	}
}
