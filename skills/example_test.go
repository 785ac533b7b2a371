package skills_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/go-harness/harness/skills"
	iofs "io/fs"
)

// A host ships a skill in its binary (an embed.FS works the same); the
// model is told of its name and description, and loads the rest with
// the skill tool.
func ExampleCatalog() {
	shipped := fstest.MapFS{
		"release-notes/SKILL.md": {Data: []byte("---\nname: release-notes\ndescription: Write release notes from the git log. Use when asked for a changelog.\nallowed-tools: Bash(git log:*) Read\n---\nRun `git log --oneline` since the last tag, then group the changes.\n")},
	}
	catalog, err := skills.New(skills.Config{Embedded: []iofs.FS{shipped}})
	if err != nil {
		panic(err)
	}
	found := catalog.Find(context.Background(), nil, "")
	fmt.Println(skills.Listing(found.Skills))
	s := found.Lookup("release-notes")
	fmt.Println(s.AllowedTools, s.Base())
	// Output:
	// Skills are available: folders of instructions, scripts and references for particular tasks. When a task matches a skill's description, call the skill tool with the skill's name before you start, and follow what it says; read the files it names with read, from the folder it gives.
	//
	// - release-notes: Write release notes from the git log. Use when asked for a changelog.
	// [Bash(git log:*) Read] skill://release-notes
}
