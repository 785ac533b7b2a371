package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/session/attachments"
)

// A checkpoint, a change, and the rewind back to it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)

	w, err := checkpoint.Open(dir, checkpoint.Config{Store: attachments.NewMemory()})
	if err != nil {
		panic(err)
	}
	before, _ := w.Take(ctx)

	// Any program changes the files.
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { panic(1) }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "junk.txt"), []byte("x\n"), 0o644)

	now, _ := w.Take(ctx) // what is there now is kept too
	plan, _ := w.Plan(ctx, before.Tree, now, checkpoint.PlanOptions{})
	for _, c := range plan.Changes {
		fmt.Printf("%s %s +%d -%d\n", c.Op, c.Path, c.Added, c.Removed)
	}
	if _, err := w.Apply(ctx, plan, false); err != nil {
		panic(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	fmt.Printf("%q\n", data)
	// Output:
	// created junk.txt +1 -0
	// modified main.go +1 -1
	// "package main\n\nfunc main() {}\n"
}
