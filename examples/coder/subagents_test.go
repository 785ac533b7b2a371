package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// The explore agent is on by default: the model hands a search to it, the
// child reads with its own tools (no bash, no writes), its cards are
// nested under the task call, and its session is logged beside the
// parent's with the parent's id.
func TestExploreSubAgent(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t,
		sse(role(), toolCall(0, "call_1", "task", map[string]any{"agent": "explore", "description": "find the greeting", "prompt": "where is the greeting?"}),
			finish("tool_calls"), usage(1000, 10, 0)),
		sse(role(), toolCall(0, "sub_1", "read", map[string]any{"file_path": "main.go"}), finish("tool_calls"), usage(500, 10, 0)),
		sse(role(), text("The greeting is in main.go:7."), finish("stop"), usage(600, 10, 0)),
		sse(role(), text("It is in main.go:7."), finish("stop"), usage(1100, 10, 0)),
	)
	ws := workspace(t, map[string]string{"main.go": buggy})
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "where is the greeting?")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "  ⎿ ● explore: Read main.go")
	assert.Contains(t, r.stdout, "It is in main.go:7.")

	reqs := p.Requests()
	require.Len(t, reqs, 4)
	toolNames := func(c captured) string {
		var names []string
		for _, tl := range c.JSON(t)["tools"].([]any) {
			names = append(names, `"`+tl.(map[string]any)["function"].(map[string]any)["name"].(string)+`"`)
		}
		return strings.Join(names, " ")
	}
	parentTools, childTools := toolNames(reqs[0]), toolNames(reqs[1])
	assert.Contains(t, parentTools, `"task"`)
	assert.Contains(t, parentTools, `"bash"`)
	assert.NotContains(t, childTools, `"bash"`, "explore runs no commands")
	assert.NotContains(t, childTools, `"write"`, "explore writes nothing")
	assert.NotContains(t, childTools, `"task"`, "children cannot spawn")
	assert.Contains(t, childTools, `"grep"`)
	assert.Contains(t, reqs[3].Text(t), "The greeting is in main.go:7.", "the child's answer is the task result")

	var logs []string
	require.NoError(t, filepath.WalkDir(sessions, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			logs = append(logs, p)
		}
		return err
	}))
	require.Len(t, logs, 2, "the parent's and the child's logs")
	var child int
	for _, l := range logs {
		b, err := os.ReadFile(l)
		require.NoError(t, err)
		head, _, _ := strings.Cut(string(b), "\n")
		if strings.Contains(head, `"parent_call":"call_1"`) {
			child++
		}
	}
	assert.Equal(t, 1, child)

	// -continue goes on with the parent, not with the newer child.
	p.add(say("Still main.go:7."))
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-explore=false", "-continue", "and again?")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	reqs = p.Requests()
	last := reqs[len(reqs)-1].Text(t)
	assert.Contains(t, last, "It is in main.go:7.", "the parent's history")
	assert.NotContains(t, last, "You are explore")
	assert.NotContains(t, toolNames(reqs[len(reqs)-1]), `"task"`, "-explore=false leaves the task tool out")
}
