package permission_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/tools/permission"
)

// The Read and Edit rules as a path policy for a workspace: what
// fs.Restrict puts below the file tools and a sandbox masks from commands.
func ExamplePolicy_Paths() {
	p, err := permission.New(permission.Rules{
		Deny: []string{"Read(./secrets/**)", "Edit(./.git/**)"},
		Ask:  []string{"Read(./private/**)"},
	})
	if err != nil {
		panic(err)
	}
	paths := p.Paths("/proj")
	ctx := context.Background()
	check := func(path string, a fs.Access) {
		if err := paths.CheckPath(ctx, path, a, fs.FileID{}); err != nil {
			fmt.Printf("%s: %v\n", path, err)
			return
		}
		fmt.Printf("%s: allowed\n", path)
	}
	check("/proj/secrets/key.txt", fs.AccessRead)
	check("/proj/.git/config", fs.AccessRead)
	check("/proj/.git/config", fs.AccessWrite)
	check("/proj/private/notes.md", fs.AccessRead)                 // asked about by the dispatcher
	check("/proj/private/notes.md", fs.AccessRead|fs.AccessListed) // found by a walk: nobody asked
	// Output:
	// /proj/secrets/key.txt: the rule Read(./secrets/**) denies reading it
	// /proj/.git/config: allowed
	// /proj/.git/config: the rule Edit(./.git/**) denies changing it
	// /proj/private/notes.md: allowed
	// /proj/private/notes.md: the rule Read(./private/**) denies reading it
}
