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
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	root := flag.String("root", ".", "the module root")
	limit := flag.Int("max", Budget, "fail when the total is above this (0: no limit)")
	flag.Parse()
	counts, err := Count(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(2)
	}
	total := 0
	for _, c := range counts {
		fmt.Printf("%5d  %s\n", c.Exported, c.Package)
		total += c.Exported
	}
	fmt.Printf("%5d  total\n", total)
	if *limit > 0 && total > *limit {
		fmt.Fprintf(os.Stderr, "apicount: %d exported identifiers, above the budget of %d: unexport or move to internal/ what only implementers need, or raise the budget on purpose\n", total, *limit)
		os.Exit(1)
	}
}
