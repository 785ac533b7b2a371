package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// CoreBudget is the most exported identifiers the core packages (those
// listed as Core in budgets) may declare together. It is a ratchet: lower
// it whenever a cut lands, and never raise it without saying why in the
// commit. It is below CoreGoal (issue 20) and must stay at or below it.
const CoreBudget = 450

// CoreGoal is the core budget issue 20 asks for.
const CoreGoal = 470

// Core marks a package of the core in budgets: it shares CoreBudget with
// the other core packages instead of having a budget of its own.
const Core = -1

// budgets is the one table of every public package's budget: Core for the
// core vocabulary and its packages, and for each capability package (one
// added for one capability: MCP tools, code search, permissions, ...) the
// most exported identifiers it may declare. A new public package must be
// listed here: a package without an entry fails the check, so its budget
// is always a stated decision.
func budgets() map[string]int {
	return map[string]int{
		// The core.
		".":                       Core,
		"agent":                   Core,
		"agent/model":             Core,
		"agent/model/modeltest":   Core,
		"agent/openai":            Core,
		"agent/openai/openaitest": Core,
		"agent/replay":            Core,
		"fs":                      Core,
		"fs/fstest":               Core,
		"fslocal":                 Core,
		"guard":                   Core,
		"session":                 Core,
		"session/attachments":     Core,
		"session/search":          Core,
		"session/sessiontest":     Core,
		"spill":                   Core,
		"spill/spilltest":         Core,
		"tools":                   Core,
		"tools/files":             Core,
		"tools/images":            Core,
		"tools/sessiontools":      Core,
		"tools/shell":             Core,
		"tools/toolstest":         Core,

		// Capability packages, each on its own budget.
		"tools/codesearch": 6,
		"tools/mcp":        16,
		"tools/permission": 20,
		"observe":          2,
		"pricing":          9,
		// Stores kept outside the process (issue 18).
		"session/attachments/s3": 7,
		"session/postgres":       3,
		"spill/s3":               3,
	}
}

// Check returns what is over budget in counts: the core's total above
// coreBudget (no check when it is 0 or less), a capability package above
// its own budget, and any package budgets does not list. It returns the
// core's total too.
func Check(counts []PackageCount, coreBudget int) (core int, problems []string) {
	table := budgets()
	for _, c := range counts {
		b, ok := table[c.Package]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("package %s (%d exported identifiers) has no budget: list it in budgets in internal/apicount/count.go, as Core or with a capability budget of its own", c.Package, c.Exported))
		case b == Core:
			core += c.Exported
		case c.Exported > b:
			problems = append(problems, fmt.Sprintf("package %s: %d exported identifiers, above its budget of %d", c.Package, c.Exported, b))
		}
	}
	if coreBudget > 0 && core > coreBudget {
		problems = append(problems, fmt.Sprintf("the core: %d exported identifiers, above the core budget of %d (the goal is %d)", core, coreBudget, CoreGoal))
	}
	return core, problems
}

// BudgetOf returns a package's budget: Core, its own, or false when it
// has none.
func BudgetOf(pkg string) (int, bool) {
	b, ok := budgets()[pkg]
	return b, ok
}

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
