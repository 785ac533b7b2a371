// Command apicount counts the exported identifiers of the module's public
// packages and fails when they exceed the budget, so that growing the API
// is a decision and never an accident.
//
// It counts exported top-level names (types, functions, variables and
// constants), exported methods of exported types, and the exported methods
// of exported interfaces, in the non-test Go files of every package
// outside internal/ and examples/ (testdata and hidden directories are
// skipped). Run it from the module root:
//
//	go run ./internal/apicount        # the count per package and in total;
//	                                  # exit status 1 above the budget
//	go run ./internal/apicount -max 0 # no budget
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
	limit := flag.Int("max", Budget, "fail when the total is above this (0: no limit)")
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
	for _, p := range pkgs {
		fmt.Printf("%5d  %s\n", len(p.Names), p.Package)
		total += len(p.Names)
		if *verbose && (len(only) == 0 || only[p.Package]) {
			for _, n := range p.Names {
				fmt.Printf("         %s\n", n)
			}
		}
	}
	fmt.Printf("%5d  total\n", total)
	if *limit > 0 && total > *limit {
		fmt.Fprintf(os.Stderr, "apicount: %d exported identifiers, above the budget of %d: unexport or move to internal/ what only implementers need, or raise the budget on purpose\n", total, *limit)
		os.Exit(1)
	}
}
