package instructions_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/instructions"
)

// A Loader finds the instruction files of a working directory, the
// root's first; give it to agent.WithContext to put them in every
// request.
func ExampleLoader_Load() {
	ws := fstest.NewMemFS("/repo")
	_ = ws.SetFile("/repo/AGENTS.md", []byte("Run make test before you finish.\nStyle: @docs/style.md"), 0o644)
	_ = ws.SetFile("/repo/docs/style.md", []byte("Tabs, not spaces."), 0o644)
	_ = ws.SetFile("/repo/cmd/CLAUDE.md", []byte("@../AGENTS.md\nThe CLI prints JSON."), 0o644)

	files, err := instructions.New(instructions.Config{}).Load(context.Background(), ws, "/repo/cmd")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Printf("--- %s (%d bytes read)\n%s\n", f.Path, f.Bytes, f.Text)
	}
	// Output:
	// --- /repo/AGENTS.md (71 bytes read)
	// Instructions from /repo/AGENTS.md, for work in /repo and below:
	//
	// Run make test before you finish.
	// Style: @docs/style.md
	// [Imported from /repo/docs/style.md:]
	// Tabs, not spaces.
	// [End of /repo/docs/style.md.]
	// --- /repo/cmd/CLAUDE.md (34 bytes read)
	// Instructions from /repo/cmd/CLAUDE.md, for work in /repo/cmd and below:
	//
	// @../AGENTS.md
	// [@../AGENTS.md: /repo/AGENTS.md is included above.]
	// The CLI prints JSON.
}
