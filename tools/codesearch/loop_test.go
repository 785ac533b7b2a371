package codesearch_test

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
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
)

func toolResults(req *model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				var s strings.Builder
				for _, c := range b.ToolResult.Content {
					s.WriteString(c.Text)
				}
				out = append(out, s.String())
			}
		}
	}
	return out
}

// TestThroughTheLoop drives the real loop with a scripted model: glob and
// grep in one step (they run concurrently), then a read of what grep
// found, on MemFS and on a real directory.
func TestThroughTheLoop(t *testing.T) {
	leakcheck.Check(t)
	src := map[string]string{
		"cmd/server/main.go": "package main\n\nfunc main() {\n\tserve(\":8080\")\n}\n",
		"internal/serve.go":  "package internal\n\n// serve listens on addr.\nfunc serve(addr string) error {\n\treturn nil\n}\n",
		"vendor/x/x.go":      "package x\nfunc serve() {}\n",
		".gitignore":         "vendor/\n",
	}
	mem := fstest.NewMemFS("/repo")
	for p, c := range src {
		require.NoError(t, mem.SetFile("/repo/"+p, []byte(c), 0o644))
	}
	dir := t.TempDir()
	for p, c := range src {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	local, err := fslocal.New(dir)
	require.NoError(t, err)
	defer local.Close()
	for _, fsys := range []fs.FileSystem{mem, local} {
		root := fsimpl.RootOf(fsys)
		t.Run(root, func(t *testing.T) {
			llm := replay.NewScripted(
				replay.Call(
					replay.ToolCall("c1", "glob", map[string]any{"pattern": "**/*.go"}),
					replay.ToolCall("c2", "grep", map[string]any{"pattern": `func serve\(`, "output_mode": "content"}),
				),
				replay.Call(replay.ToolCall("c3", "read", map[string]any{"file_path": "internal/serve.go", "offset": 4, "limit": 1})),
				replay.Response{Text: "serve is in internal/serve.go."},
			)
			loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Files: fsys}),
				agent.WithTools(append(codesearch.Tools(codesearch.Config{}), files.Read(files.Config{}))...))
			require.NoError(t, err)
			defer loop.Close()
			sess, err := loop.NewSession(context.Background(), session.Header{})
			require.NoError(t, err)
			var ends []*agent.ToolCallEnd
			for ev, err := range sess.Run(context.Background(), "where is serve defined?") {
				require.NoError(t, err)
				if e, ok := ev.(*agent.ToolCallEnd); ok {
					ends = append(ends, e)
				}
			}
			reqs := llm.Requests()
			require.Len(t, reqs, 3)
			got := toolResults(reqs[1])
			require.Len(t, got, 2)
			assert.Contains(t, got[0], "2 files in "+root+" match \"**/*.go\"")
			assert.Contains(t, got[0], "cmd/server/main.go")
			assert.NotContains(t, got[0], "vendor", "ignored by .gitignore")
			assert.Equal(t, "1 matching line in 1 file for the pattern \"func serve\\\\(\" under "+root+":\n\ninternal/serve.go\n4:func serve(addr string) error {", got[1])
			assert.Contains(t, toolResults(reqs[2])[2], "4: func serve(addr string) error {")
			require.Len(t, ends, 3)
			byID := map[string]*harness.ToolResult{}
			for _, e := range ends {
				byID[e.Call.ID] = e.Result // concurrent calls end in any order
			}
			assert.Equal(t, []harness.Location{{Path: root + "/internal/serve.go", StartLine: 4, EndLine: 4}}, byID["c2"].Render.Locations)
			assert.Len(t, byID["c1"].Render.Locations, 2)
		})
	}
}

// Example runs glob and grep over an in-memory project.
func Example() {
	fsys := fstest.NewMemFS("/project")
	fsys.SetFile("/project/main.go", []byte("package main\n\nfunc main() {\n\tgreet(\"world\")\n}\n"), 0o644)
	fsys.SetFile("/project/greet.go", []byte("package main\n\nimport \"fmt\"\n\nfunc greet(name string) {\n\tfmt.Println(\"hello,\", name)\n}\n"), 0o644)
	fsys.SetFile("/project/notes.md", []byte("greet everyone\n"), 0o644)
	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("1", "grep", map[string]any{"pattern": "greet\\(", "type": "go", "output_mode": "content"})),
		replay.Response{Text: "greet is defined in greet.go and called from main.go."},
	)
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Files: fsys}), agent.WithTools(codesearch.Tools(codesearch.Config{})...))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	sess, _ := loop.NewSession(context.Background(), session.Header{})
	for ev := range sess.Run(context.Background(), "where is greet?") {
		if e, ok := ev.(*agent.ToolCallEnd); ok {
			fmt.Println(e.Result.Text())
		}
	}
	// Output:
	// 2 matching lines in 2 files for the pattern "greet\\(" under /project:
	//
	// greet.go
	// 5:func greet(name string) {
	//
	// main.go
	// 4:	greet("world")
}
