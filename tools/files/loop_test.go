package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/files"
)

func lastResult(req *model.Request) string {
	var text string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				text = ""
				for _, c := range b.ToolResult.Content {
					text += c.Text
				}
			}
		}
	}
	return text
}

// TestThroughTheLoop drives the real loop with a scripted model over a
// real directory: read, a refused edit, a stale edit, a fixed edit.
func TestThroughTheLoop(t *testing.T) {
	leakcheck.Check(t)
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"helo\")\n}\n"), 0o644))
	fsys, err := fslocal.New(dir)
	require.NoError(t, err)
	defer fsys.Close()

	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "edit", map[string]any{"file_path": "main.go", "old_string": "helo", "new_string": "hello"})),
		replay.Call(replay.ToolCall("c2", "read", map[string]any{"file_path": "main.go"})),
		replay.Response{Respond: func(req *model.Request) replay.Response {
			// Someone changes the file between the read and the edit.
			os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"helo!\")\n}\n"), 0o644)
			return replay.Call(replay.ToolCall("c3", "edit", map[string]any{"file_path": "main.go", "old_string": "helo", "new_string": "hello"}))
		}},
		replay.Call(replay.ToolCall("c4", "read", map[string]any{"file_path": "main.go", "offset": 4, "limit": 1})),
		replay.Call(replay.ToolCall("c5", "edit", map[string]any{"file_path": "main.go", "old_string": "\"helo!\"", "new_string": "\"hello!\""})),
		replay.Response{Text: "Fixed the greeting."},
	)
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Files: fsys}), agent.WithTools(files.Tools(files.Config{})...))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	assert.Equal(t, filepath.ToSlash(dir), sess.Header().Cwd, "the root is the default working directory")

	var ends []*agent.ToolCallEnd
	for ev, err := range sess.Run(context.Background(), "fix the typo in main.go") {
		require.NoError(t, err)
		if e, ok := ev.(*agent.ToolCallEnd); ok {
			ends = append(ends, e)
		}
	}
	reqs := llm.Requests()
	require.Len(t, reqs, 6)
	assert.Contains(t, lastResult(reqs[1]), "You have not read "+filepath.ToSlash(main)+" in this session")
	assert.Equal(t, "File: "+filepath.ToSlash(main)+"\n1: package main\n2: \n3: func main() {\n4: \tprintln(\"helo\")\n5: }\n(End of file: all 5 lines shown.)", lastResult(reqs[2]))
	assert.Contains(t, lastResult(reqs[3]), "changed after you last read it")
	assert.Equal(t, "File: "+filepath.ToSlash(main)+"\n4: \tprintln(\"helo!\")\n(Lines 4-4 of 5 shown. To continue, call read with offset=5.)", lastResult(reqs[4]))
	assert.Contains(t, lastResult(reqs[5]), "Edited "+filepath.ToSlash(main)+": replaced 1 occurrence (+1 -1 lines).")

	got, err := os.ReadFile(main)
	require.NoError(t, err)
	assert.Equal(t, "package main\n\nfunc main() {\n\tprintln(\"hello!\")\n}\n", string(got))

	require.Len(t, ends, 5)
	assert.Equal(t, harness.CodeNotObserved, ends[0].Result.Code)
	assert.Equal(t, harness.CodeStale, ends[2].Result.Code)
	last := ends[4].Result
	require.Equal(t, harness.RenderDiff, last.Render.Kind)
	assert.Equal(t, []string{" package main", " ", " func main() {", "-\tprintln(\"helo!\")", "+\tprintln(\"hello!\")", " }"}, last.Render.Diff.Hunks[0].Lines)
	require.Len(t, last.Files, 1)
	assert.Equal(t, harness.FileWrite, last.Files[0].Op)
}

// ExampleTools runs a scripted model that reads a file and edits it.
func ExampleTools() {
	fsys := fstest.NewMemFS("/project")
	fsys.SetFile("/project/greet.txt", []byte("Hello, wrold!\n"), 0o644)
	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("1", "read", map[string]any{"file_path": "greet.txt"})),
		replay.Call(replay.ToolCall("2", "edit", map[string]any{"file_path": "greet.txt", "old_string": "wrold", "new_string": "world"})),
		replay.Response{Text: "Done."},
	)
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Files: fsys}), agent.WithTools(files.Tools(files.Config{})...))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	sess, _ := loop.NewSession(context.Background(), session.Header{})
	for ev := range sess.Run(context.Background(), "fix the typo") {
		if e, ok := ev.(*agent.ToolCallEnd); ok {
			fmt.Println(strings.SplitN(e.Result.Text(), "\n", 2)[0])
			if d := e.Result.Render.Diff; d != nil {
				fmt.Println(strings.Join(d.Hunks[0].Lines, "\n"))
			}
		}
	}
	// Output:
	// File: /project/greet.txt
	// Edited /project/greet.txt: replaced 1 occurrence (+1 -1 lines). The lines around the change now read:
	// -Hello, wrold!
	// +Hello, world!
}
