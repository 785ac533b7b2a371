package files_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
)

var hintRE = regexp.MustCompile(`call read with file_path "(spill://[^"]+)", offset (\d+) and limit (\d+)`)

// TestSpillHintWorks follows a spill preview's hint with the shipped read
// tool while the file system is confined to a workspace that does not
// contain the spill directory: the read returns exactly the omitted lines.
func TestSpillHintWorks(t *testing.T) {
	ctx := context.Background()
	workspace := t.TempDir()
	spillDir := t.TempDir() // outside the workspace
	fsys, err := fslocal.New(workspace)
	require.NoError(t, err)
	defer fsys.Close()

	var lines []string
	for i := 1; i <= 3000; i++ {
		lines = append(lines, fmt.Sprintf("log line %04d: something happened", i))
	}
	big := strings.Join(lines, "\n") + "\n"
	noisy := tools.Define(tools.Spec{Name: "noisy", Description: "prints a lot"},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			return harness.TextResult(big), nil
		})

	var locator string
	var offset, limit int
	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "noisy", nil)),
		replay.Response{Respond: func(req *model.Request) replay.Response {
			preview := lastResult(req)
			m := hintRE.FindStringSubmatch(preview)
			if m == nil {
				return replay.Response{Text: "no hint in: " + preview}
			}
			locator = m[1]
			offset, _ = strconv.Atoi(m[2])
			limit, _ = strconv.Atoi(m[3])
			return replay.Call(replay.ToolCall("c2", "read", map[string]any{"file_path": locator, "offset": offset, "limit": limit}))
		}},
		replay.Response{Respond: func(req *model.Request) replay.Response {
			return replay.Call(replay.ToolCall("c3", "write", map[string]any{"file_path": locator, "content": "overwritten"}))
		}},
		replay.Response{Text: "done"},
	)
	store, err := spill.NewDir(spillDir, spill.StoreConfig{})
	require.NoError(t, err)
	spilling, err := spill.Middleware(spill.Config{})
	require.NoError(t, err)
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Files: fsys}),
		agent.WithTools(append(files.Tools(files.Config{}), noisy)...),
		agent.WithStores(agent.Stores{Output: store}), agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	for _, err := range s.Run(ctx, "make noise") {
		require.NoError(t, err)
	}
	require.NotEmpty(t, locator, "the preview names a locator")
	assert.True(t, strings.HasPrefix(locator, tools.OutputScheme))

	reqs := llm.Requests()
	preview := lastResult(reqs[1])
	assert.LessOrEqual(t, len(preview), spillwriter.DefaultThreshold, "the preview never exceeds the threshold")
	assert.Contains(t, preview, "log line 0001", "head kept")
	assert.Contains(t, preview, "log line 3000", "tail kept")

	read := lastResult(reqs[2])
	// The read shows the omitted lines, numbered as in the saved output.
	var got []string
	for _, l := range strings.Split(read, "\n") {
		if n, text, ok := strings.Cut(l, ": "); ok {
			if _, err := strconv.Atoi(n); err == nil {
				got = append(got, text)
			}
		}
	}
	require.NotEmpty(t, got, read)
	assert.Equal(t, lines[offset-1], got[0])
	assert.Equal(t, lines[offset-1+len(got)-1], got[len(got)-1])
	assert.Contains(t, preview, lines[offset-2], "the line before the gap is in the head")

	// Tools can read spilled output but never write it.
	refused := lastResult(reqs[3])
	assert.Contains(t, refused, "is a saved tool output, which is read-only")
	rc, err := store.Open(ctx, locator)
	require.NoError(t, err)
	defer rc.Close()
	saved := make([]byte, 64)
	n, _ := rc.Read(saved)
	assert.Equal(t, "log line 0001", string(saved[:13]), "the saved output is unchanged: %q", saved[:n])
	entries, err := os.ReadDir(workspace)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing of the spill lands in the workspace")
}
