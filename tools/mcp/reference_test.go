package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools/mcp"
)

// The reference servers are installed by .ci/run with npm ci from
// testdata/npm into HARNESS_MCP_SERVERS (default
// $HOME/.cache/harness-ci/mcp-servers), outside the repository.
func referenceServer(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the reference MCP server tests need it (.ci/run installs it)")
	}
	dir := os.Getenv("HARNESS_MCP_SERVERS")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skip("no home directory to find the reference MCP servers in; set HARNESS_MCP_SERVERS")
		}
		dir = filepath.Join(home, ".cache", "harness-ci", "mcp-servers")
	}
	script = filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/%s is not installed in %s: run .ci/run (npm ci from tools/mcp/testdata/npm)", pkg, dir)
	}
	return node, script
}

func everything(t testing.TB) mcp.Server {
	node, script := referenceServer(t, "server-everything")
	return mcp.Server{Name: "everything", Command: node, Args: []string{script, "stdio"}}
}

func filesystem(t testing.TB, root string) mcp.Server {
	node, script := referenceServer(t, "server-filesystem")
	return mcp.Server{Name: "fs", Command: node, Args: []string{script, root}}
}

// toolResults returns the tool results of a request, by call id.
func toolResults(req *model.Request) map[string]*harness.ToolResult {
	out := map[string]*harness.ToolResult{}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				out[b.ToolResult.CallID] = b.ToolResult
			}
		}
	}
	return out
}

// TestReferenceServers runs the two reference servers through the loop
// with a scripted model and checks what the model saw.
func TestReferenceServers(t *testing.T) {
	leakcheck.Check(t)
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the file system\n"), 0o644))
	root, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{everything(t), filesystem(t, root)}})
	require.NoError(t, err)
	defer set.Close()

	ts := set.Tools()
	got := names(ts)
	t.Logf("tools: %s", strings.Join(got, " "))
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__fs__read_text_file", "mcp__fs__list_directory",
		"mcp_list_resources", "mcp_read_resource"} {
		assert.Contains(t, got, want)
	}
	for _, st := range set.Status() {
		assert.True(t, st.Connected, st.Name)
		assert.Positive(t, st.Tools, st.Name)
	}
	// The schema is the server's own text, not a re-encoding of it.
	for _, tool := range ts {
		if tool.Spec().Name == "mcp__everything__get-sum" {
			var s map[string]any
			require.NoError(t, json.Unmarshal(tool.Spec().InputSchema, &s))
			assert.Equal(t, "object", s["type"])
		}
	}

	scripted := replay.NewScripted(
		replay.Call(
			replay.ToolCall("c1", "mcp__everything__echo", map[string]any{"message": "hi there"}),
			replay.ToolCall("c2", "mcp__everything__get-sum", map[string]any{"a": 2, "b": 40}),
			replay.ToolCall("c3", "mcp__fs__read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")}),
			replay.ToolCall("c4", "mcp__fs__list_directory", map[string]any{"path": root}),
			replay.ToolCall("c5", "mcp__fs__read_text_file", map[string]any{"path": "/etc/passwd"}),
			replay.ToolCall("c6", "mcp_list_resources", map[string]any{"server": "everything"}),
			replay.ToolCall("c8", "mcp__everything__get-tiny-image", map[string]any{}),
			replay.ToolCall("c9", "mcp__everything__get-structured-content", map[string]any{"location": "Chicago"}),
			replay.ToolCall("c10", "mcp__everything__get-resource-links", map[string]any{"count": 2}),
		),
		replay.Call(replay.ToolCall("c7", "mcp_read_resource", map[string]any{"server": "everything", "uri": "demo://resource/static/document/architecture.md"})),
		replay.Response{Text: "done"},
	).WithInfo(model.Info{Name: "seeing", Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}})
	loop, err := agent.New(agent.WithModel(scripted), agent.WithTools(ts...), agent.WithStores(agent.Stores{Attachments: attachments.NewMemory()}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	defer s.Close()
	for _, err := range s.Run(context.Background(), "use the servers") {
		require.NoError(t, err)
	}
	reqs := scripted.Requests()
	require.Len(t, reqs, 3)
	var sent []string
	for _, tool := range reqs[0].Tools {
		sent = append(sent, tool.Name)
	}
	assert.Equal(t, got, sent, "the model is offered every tool, in the set's order")

	res := toolResults(reqs[1])
	assert.Contains(t, res["c1"].Text(), "hi there")
	assert.False(t, res["c1"].IsError)
	assert.Contains(t, res["c2"].Text(), "42")
	assert.Equal(t, "hello from the file system\n", res["c3"].Text(), "the file's text, as the server returned it")
	assert.Contains(t, res["c4"].Text(), "[FILE] hello.txt")
	assert.True(t, res["c5"].IsError, "outside the allowed directory: %s", res["c5"].Text())
	assert.Contains(t, res["c5"].Text(), "denied")
	assert.Contains(t, res["c6"].Text(), "everything:\n")
	t.Logf("resources: %.600s", res["c6"].Text())
	var imgs int
	for _, b := range res["c8"].Content {
		if b.Type == harness.BlockImage {
			imgs++
			assert.Equal(t, "image/png", b.Image.MediaType)
		}
	}
	assert.Equal(t, 1, imgs, "the image reached the model through the attachment store: %+v", res["c8"].Content)
	assert.Contains(t, res["c9"].Text(), `"temperature":`)
	assert.False(t, res["c9"].IsError)
	assert.Contains(t, res["c10"].Text(), "Resource link: demo://")
	read := toolResults(reqs[2])["c7"]
	t.Logf("resource: %.300s", read.Text())
	assert.False(t, read.IsError, read.Text())
}
