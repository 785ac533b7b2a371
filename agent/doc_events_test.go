package agent_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The package doc lists every event type, one line each: the types with
// a kind method declared in this package, no more and no fewer.
func TestPackageDocListsEveryEvent(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var declared []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "kind" || len(fn.Recv.List) != 1 {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && ast.IsExported(id.Name) {
					declared = append(declared, id.Name)
				}
			}
		}
	}
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^//   - \[(\w+)\]: \S.*$`).FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, m[1])
	}
	sort.Strings(declared)
	sort.Strings(listed)
	require.NotEmpty(t, declared)
	assert.Equal(t, declared, listed, "agent/doc.go lists each event type (a type with a kind method) on a line of its own")
}
