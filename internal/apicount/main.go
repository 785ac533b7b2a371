// Command apicount lists the exported identifiers of the module's public
// packages, as information for a review of the API: how many each package
// declares and, with -v, which. It checks nothing and never fails on a
// count; concepts are reviewed, not totals.
//
// It counts exported top-level names (types, functions, variables and
// constants), exported methods of exported types, and the exported methods
// of exported interfaces, in the non-test Go files of every package
// outside internal/ and examples/ (testdata and hidden directories are
// skipped). Run it from the module root:
//
//	go run ./internal/apicount        # the count per package and the total
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
}
