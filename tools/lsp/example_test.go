package lsp_test

import (
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools/lsp"
)

// Note finds the diagnostics block in a write or edit result, for a
// host's card of the change.
func ExampleNote() {
	res := &harness.ToolResult{Content: []harness.Block{
		harness.TextBlock("Edited main.go: +1 -1 lines."),
		harness.TextBlock("Diagnostics (gopls): 1 new problem after this change:\nmain.go:6:20: error: undefined: x (compiler UndeclaredName)"),
	}}
	fmt.Println(lsp.Note(res))
	// Output:
	// Diagnostics (gopls): 1 new problem after this change:
	// main.go:6:20: error: undefined: x (compiler UndeclaredName)
}

// New returns a Manager whose middleware goes in the loop's dispatch
// chain, inside the spill middleware.
func ExampleNew() {
	diags, err := lsp.New(lsp.Config{})
	if err != nil {
		panic(err)
	}
	defer diags.Close()
	_ = diags.Middleware() // agent.Hooks{Tools: []tools.Middleware{spilling, diags.Middleware(), deadlines}}
	for _, s := range lsp.DefaultServers() {
		fmt.Println(s.Name, s.Command)
	}
	// Output:
	// gopls [gopls]
	// pyright [pyright-langserver --stdio]
	// typescript-language-server [typescript-language-server --stdio]
	// rust-analyzer [rust-analyzer]
}
