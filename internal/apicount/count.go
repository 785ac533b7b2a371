package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// PackageCount is the number of exported identifiers of one package
// directory.
type PackageCount struct {
	Package  string // slash-separated directory relative to the root
	Exported int
}

// Count walks the module at root and returns the count per package
// directory, sorted by directory.
func Count(root string) ([]PackageCount, error) {
	names, err := List(root)
	if err != nil {
		return nil, err
	}
	out := make([]PackageCount, 0, len(names))
	for _, p := range names {
		out = append(out, PackageCount{Package: p.Package, Exported: len(p.Names)})
	}
	return out, nil
}

// PackageNames is the exported identifiers of one package directory:
// top-level names as they are ("New", "ErrNotFound"), methods as
// "Type.Method" and interface methods as "Interface.Method", sorted.
type PackageNames struct {
	Package string
	Names   []string
}

// List walks the module at root and returns the exported identifiers per
// package directory, sorted by directory.
func List(root string) ([]PackageNames, error) {
	per := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		dir := dirOf(rel)
		per[dir] = append(per[dir], exportedIn(f)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]PackageNames, 0, len(per))
	for pkg, names := range per {
		sort.Strings(names)
		out = append(out, PackageNames{Package: pkg, Names: names})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out, nil
}

func skipDir(rel, name string) bool {
	return name == "internal" || rel == "examples" || name == "testdata" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

func dirOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return "."
}

// exportedIn returns the exported identifiers one file declares.
func exportedIn(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, d.Name.Name)
			} else if recv, ok := receiverName(d.Recv); ok {
				out = append(out, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					out = append(out, s.Name.Name)
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							for _, name := range m.Names {
								if name.IsExported() {
									out = append(out, s.Name.Name+"."+name.Name)
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							out = append(out, name.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiverName returns the name of a method's receiver type and whether
// it is exported.
func receiverName(recv *ast.FieldList) (string, bool) {
	if recv == nil || len(recv.List) == 0 {
		return "", false
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name, x.IsExported()
		default:
			return "", false
		}
	}
}
