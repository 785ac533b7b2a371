package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountsWhatIsExported(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("a/a.go", `package a
type T struct{ Field int }        // 1 (fields do not count)
func (T) M()    {}                // 2
func (*T) m()   {}
type u struct{}
func (u) M()    {}                // unexported receiver: not counted
type I interface{ A(); b(); C() } // 3, 4, 5
func F()        {}                // 6
func f()        {}
var V, w = 1, 2                   // 7
const (C1 = iota; C2; c3)         // 8, 9
type G[X any] struct{}            // 10
func (G[X]) Get() {}              // 11
`)
	write("a/a_test.go", "package a\nfunc Exported() {}\n")
	write("a/testdata/x.go", "package x\nfunc Exported() {}\n")
	write("internal/i/i.go", "package i\nfunc Exported() {}\n")
	write("examples/e/e.go", "package e\nfunc Exported() {}\n")
	write("cmd/tool/main.go", "package main\nfunc Exported() {}\n")
	write("root.go", "package root\nfunc Exported() {}\n")

	counts, err := Count(root)
	require.NoError(t, err)
	assert.Equal(t, []PackageCount{{Package: ".", Exported: 1}, {Package: "a", Exported: 11}}, counts)

	names, err := List(root)
	require.NoError(t, err)
	assert.Equal(t, []PackageNames{
		{Package: ".", Names: []string{"Exported"}},
		{Package: "a", Names: []string{"C1", "C2", "F", "G", "G.Get", "I", "I.A", "I.C", "T", "T.M", "V"}},
	}, names)
}
