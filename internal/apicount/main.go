// Command apicount counts the exported identifiers of the module's public
// packages and fails when they exceed their budget, so that growing the
// API is a decision and never an accident.
//
// It counts exported top-level names (types, functions, variables and
// constants), exported methods of exported types, and the exported methods
// of exported interfaces, in the non-test Go files of every package
// outside internal/ and examples/ (testdata and hidden directories are
// skipped).
//
// The budget has two tiers, both in one table in count.go: the core
// packages share CoreBudget (the goal is CoreGoal, 470), and each
// capability package has a small budget of its own. A public package the
// table does not list fails the check. Run it from the module root:
//
//	go run ./internal/apicount        # the count per package, the core's
//	                                  # total; exit status 1 over budget
//	go run ./internal/apicount -max 0 # no core budget (capability budgets
//	                                  # and unlisted packages still checked)
//	go run ./internal/apicount -v     # also list each package's identifiers
//	go run ./internal/apicount -v fs  # list only these packages' identifiers
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the module root")
	limit := flag.Int("max", CoreBudget, "fail when the core's total is above this (0: no core limit)")
	verbose := flag.Bool("v", false, "list each package's identifiers (only the packages named as arguments, if any)")
	flag.Parse()
	pkgs, err := List(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(2)
	}
	only := map[string]bool{}
	for _, a := range flag.Args() {
		only[strings.Trim(filepath.ToSlash(filepath.Clean(a)), "/")] = true
	}
	total := 0
	counts := make([]PackageCount, 0, len(pkgs))
	for _, p := range pkgs {
		tier := "core"
		if b, ok := BudgetOf(p.Package); !ok {
			tier = "no budget"
		} else if b != Core {
			tier = fmt.Sprintf("budget %d", b)
		}
		fmt.Printf("%5d  %-28s %s\n", len(p.Names), p.Package, tier)
		total += len(p.Names)
		counts = append(counts, PackageCount{Package: p.Package, Exported: len(p.Names)})
		if *verbose && (len(only) == 0 || only[p.Package]) {
			for _, n := range p.Names {
				fmt.Printf("         %s\n", n)
			}
		}
	}
	core, problems := Check(counts, *limit)
	fmt.Printf("%5d  core (budget %d, goal %d)\n", core, CoreBudget, CoreGoal)
	fmt.Printf("%5d  total\n", total)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "apicount:", p)
		}
		fmt.Fprintln(os.Stderr, "apicount: unexport or move to internal/ what only implementers need, or raise a budget on purpose")
		os.Exit(1)
	}
}
