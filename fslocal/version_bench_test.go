package fslocal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-harness/harness/fs"
)

// BenchmarkVersionCheck measures what the stale-version guard costs one
// write or edit, on files of several sizes:
//
//   - check-proven: the file's timestamps are old, so an identical
//     metadata digest proves the version (the usual case);
//
//   - check-racy: the file changed in the last two seconds, so the content
//     sum decides (over bytes the edit has read anyway);
//
//   - new-version: summing the written bytes for the new version, which
//     every write and edit pays.
//
//     go test -run '^$' -bench BenchmarkVersionCheck ./fslocal/
func BenchmarkVersionCheck(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 10 << 20} {
		data := bytes.Repeat([]byte("0123456789abcde\n"), size/16)
		p := filepath.Join(b.TempDir(), "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		m := statMeta(st)
		sum := sumBytes(data)
		proven := token{meta: m.digest(), proven: true, sum: sum, hasSum: true}.String()
		racy := token{meta: m.digest(), proven: false, sum: sum, hasSum: true}.String()
		name := fmt.Sprintf("%dKiB", size>>10)
		b.Run(name+"/check-proven", func(b *testing.B) {
			for range b.N {
				st, _ := os.Stat(p)
				ok, _ := matches(proven, statMeta(st), func() (uint64, error) { return sumBytes(data), nil })
				if !ok {
					b.Fatal("no match")
				}
			}
		})
		b.Run(name+"/check-racy", func(b *testing.B) {
			b.SetBytes(int64(size))
			for range b.N {
				st, _ := os.Stat(p)
				ok, _ := matches(racy, statMeta(st), func() (uint64, error) { return sumBytes(data), nil })
				if !ok {
					b.Fatal("no match")
				}
			}
		})
		b.Run(name+"/new-version", func(b *testing.B) {
			b.SetBytes(int64(size))
			for range b.N {
				_ = token{meta: m.digest(), proven: m.provenAt(time.Now()), sum: sumBytes(data), hasSum: true}.String()
			}
		})
	}
}

// BenchmarkEditPrecondition compares an edit of a 10 MB file with and
// without a version precondition (recently changed file: the content sum
// decides), the end-to-end cost of the guard.
//
//	go test -run '^$' -bench BenchmarkEditPrecondition ./fslocal/
func BenchmarkEditPrecondition(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "ten.txt")
	data := append(bytes.Repeat([]byte("some ordinary source text, nothing to see here\n"), 10_000_000/48), "MARKER-A\n"...)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	ns := filepath.ToSlash(p)
	for _, guarded := range []bool{false, true} {
		b.Run(map[bool]string{false: "unconditional", true: "if-version"}[guarded], func(b *testing.B) {
			t, err := f.ReadText(ctx, ns, fs.Window{Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			v := t.Info.Version
			for i := range b.N {
				o, n := "MARKER-A", "MARKER-B"
				if i%2 == 1 {
					o, n = n, o
				}
				pre := fs.Precondition{}
				if guarded {
					pre = fs.Precondition{Version: v}
				}
				res, err := f.Edit(ctx, ns, fs.Edit{Old: o, New: n}, pre)
				if err != nil {
					b.Fatal(err)
				}
				v = res.Info.Version
			}
			if b.N%2 == 1 {
				res, _ := f.Edit(ctx, ns, fs.Edit{Old: "MARKER-B", New: "MARKER-A"}, fs.Precondition{})
				_ = res
			}
		})
	}
}
