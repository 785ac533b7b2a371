package spill_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/spillwriter/noticetest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/spilltest"
	"github.com/go-harness/harness/tools"
)

// logBuffer is a slog handler target safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// runCall runs one call through the spill middleware and returns the
// result the model would get.
func runCall(t *testing.T, spec tools.Spec, res *harness.ToolResult, store tools.OutputStore, logs *logBuffer, cfg spill.Config) *harness.ToolResult {
	t.Helper()
	env := &tools.Env{SessionID: "sess", Output: store, Logger: slog.New(slog.DiscardHandler), State: &tools.State{}}
	if logs != nil {
		env.Logger = logs.logger()
	}
	call := &tools.Call{ID: "call_1", Name: spec.Name, Arguments: `{}`, Spec: spec, Env: env}
	h := middleware(t, cfg)(tools.Handler(func(ctx context.Context, c *tools.Call) *harness.ToolResult { return res }))
	return h(context.Background(), call)
}

// lines makes text of n numbered lines.
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%05d: output of the command, line %d\n", i, i)
	}
	return b.String()
}

func TestThresholdEdges(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	spec := tools.Spec{Name: "bash"}
	const threshold = 4000
	for _, size := range []int{0, 1, threshold - 1, threshold} {
		text := strings.Repeat("a", size)
		got := runCall(t, spec, harness.TextResult(text), store, nil, spill.Config{Threshold: threshold})
		assert.Equal(t, text, got.Text(), "%d bytes stay whole", size)
	}
	assert.Zero(t, spill.LenOf(store), "nothing was saved")

	text := strings.Repeat("a", threshold+1)
	got := runCall(t, spec, harness.TextResult(text), store, nil, spill.Config{Threshold: threshold})
	require.Equal(t, 1, spill.LenOf(store), "one byte over is spilled")
	assert.LessOrEqual(t, len(got.Text()), threshold)
	n := noticetest.Parse(t, got.Text())
	assert.Equal(t, threshold+1, n.Total)
	assert.Equal(t, text, string(spilltest.ReadAll(t, store, n.Locator)), "saved whole")
}

func TestSpillPreviewContents(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	text := lines(3000)
	got := runCall(t, tools.Spec{Name: "bash"}, harness.TextResult(text), store, nil, spill.Config{})
	preview := got.Text()
	require.LessOrEqual(t, len(preview), spill.DefaultThreshold, "the default threshold applies")
	require.Len(t, got.Content, 1)

	n := noticetest.Parse(t, preview)
	head, _, _ := strings.Cut(preview, "[...")
	tail := preview[strings.LastIndex(preview, "]\n")+2:]
	assert.True(t, strings.HasPrefix(text, head), "head is the start of the output")
	assert.True(t, strings.HasSuffix(text, tail), "tail is the end of the output")
	assert.True(t, strings.HasPrefix(head, "00001: "))
	assert.True(t, strings.HasSuffix(tail, "line 3000\n"))
	assert.Equal(t, len(text)-len(head)-len(tail), n.Omitted, "the exact omitted byte count")
	assert.Equal(t, len(text), n.Total)
	assert.Equal(t, 3000, n.Lines)
	assert.Equal(t, n.First, n.Offset)
	assert.Equal(t, n.Last-n.First+1, n.Limit)

	// Following the hint returns exactly the omitted middle.
	middle := noticetest.ReadLines(t, store, n.Locator, n.Offset, n.Limit)
	assert.Equal(t, text[len(head):len(text)-len(tail)], middle)
	assert.Contains(t, preview, "(offset and limit count lines)")
}

func TestNeverSpill(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	text := lines(5000)
	got := runCall(t, tools.Spec{Name: "read", NeverSpill: true}, harness.TextResult(text), store, nil, spill.Config{})
	assert.Equal(t, text, got.Text())
	assert.Zero(t, spill.LenOf(store))
	// Another tool name with the flag is exempt too, and "read" without
	// it is not: the flag decides, not the name.
	got = runCall(t, tools.Spec{Name: "cat_spill", NeverSpill: true}, harness.TextResult(text), store, nil, spill.Config{})
	assert.Equal(t, text, got.Text())
	got = runCall(t, tools.Spec{Name: "read"}, harness.TextResult(text), store, nil, spill.Config{})
	assert.NotEqual(t, text, got.Text())
	assert.Equal(t, 1, spill.LenOf(store))
}

type failingStore struct{ tools.OutputStore }

func (failingStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
	_, _ = io.CopyN(io.Discard, r, 100)
	return tools.Stored{}, errors.New("disk full")
}

func TestSaveFailureKeepsInline(t *testing.T) {
	var logs logBuffer
	text := lines(3000)
	res := harness.TextResult(text)
	got := runCall(t, tools.Spec{Name: "bash"}, res, failingStore{newMemory(t, spill.StoreConfig{})}, &logs, spill.Config{})
	assert.False(t, got.IsError, "a save failure never turns success into an error")
	assert.Equal(t, text, got.Text(), "the result stays whole")
	assert.Contains(t, logs.String(), "disk full")
	assert.Contains(t, logs.String(), "level=ERROR")
	assert.Contains(t, logs.String(), "call_id=call_1")

	logs = logBuffer{}
	got = runCall(t, tools.Spec{Name: "bash"}, harness.TextResult(text), nil, &logs, spill.Config{})
	assert.Equal(t, text, got.Text(), "no store: kept whole")
	assert.Contains(t, logs.String(), "no output store")
}

func TestErrorsAndImages(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	img := harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: "sha256:ab", MediaType: "image/png"}}
	res := &harness.ToolResult{
		IsError: true, Code: "exit_status",
		Content: []harness.Block{harness.TextBlock(lines(1000)), img, harness.TextBlock(lines(1000))},
		Render:  &harness.Render{Kind: harness.RenderTerminal, Terminal: &harness.Terminal{Command: "make"}},
		Files:   []harness.FileAccess{{Op: harness.FileRead, Path: "/w/a"}},
	}
	whole := res.Text()
	got := runCall(t, tools.Spec{Name: "bash"}, res, store, nil, spill.Config{Threshold: 5000})
	assert.True(t, got.IsError)
	assert.Equal(t, harness.Code("exit_status"), got.Code)
	assert.Same(t, res.Render, got.Render)
	assert.Equal(t, res.Files, got.Files)
	require.Len(t, got.Content, 2, "the text blocks become one preview; the image stays")
	assert.Equal(t, harness.BlockText, got.Content[0].Type)
	assert.Equal(t, img, got.Content[1])
	n := noticetest.Parse(t, got.Text())
	assert.Equal(t, whole, string(spilltest.ReadAll(t, store, n.Locator)))
	assert.Len(t, res.Content, 3, "the tool's own result is not modified")
}

func TestThresholdFloor(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	text := strings.Repeat("z", spill.MinThreshold)
	got := runCall(t, tools.Spec{Name: "bash"}, harness.TextResult(text), store, nil, spill.Config{Threshold: spill.MinThreshold})
	assert.Equal(t, text, got.Text(), "a text of exactly the threshold stays whole")

	mw, err := spill.Middleware(spill.Config{Threshold: 10})
	assert.Nil(t, mw, "a threshold below the floor is refused, not raised")
	require.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), "Config.Threshold is 10")
	assert.Contains(t, err.Error(), "1024")
}

// TestLoopSpill drives the real loop: a tool prints a big output, the
// model is sent the preview, and the spill file in a directory store
// holds the whole output.
func TestLoopSpill(t *testing.T) {
	big := lines(4000)
	bigTool := tools.Define(tools.Spec{Name: "build", Description: "Build the project."},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			return harness.TextResult(big), nil
		})
	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "build", nil)),
		replay.Response{Text: "done"},
	)
	store := newDir(t, t.TempDir(), spill.StoreConfig{})
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(bigTool),
		agent.WithStores(agent.Stores{Output: store}), agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{middleware(t, spill.Config{Threshold: 8000})}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	for _, err := range s.Run(context.Background(), "build it") {
		require.NoError(t, err)
	}
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	var result *harness.ToolResult
	for _, m := range reqs[1].Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				result = b.ToolResult
			}
		}
	}
	require.NotNil(t, result)
	text := result.Content[0].Text
	assert.LessOrEqual(t, len(text), 8000, "the model sees the preview")
	n := noticetest.Parse(t, text)
	assert.Contains(t, n.Locator, "build-c1-", "the file is named after the tool and call")
	assert.Equal(t, big, string(spilltest.ReadAll(t, store, n.Locator)))
	require.NoError(t, store.DeleteSession(context.Background(), s.Header().ID))
	_, err = store.Open(context.Background(), n.Locator)
	assert.ErrorIs(t, err, harness.CodeNotFound, "deleting the session removed its outputs")
}

func TestMiddlewarePastTheBudget(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{SessionBudget: 10_000})
	logs := &logBuffer{}
	text := lines(2000)
	res := runCall(t, tools.Spec{Name: "bash"}, harness.TextResult(text), store, logs, spill.Config{})
	got := res.Text()
	assert.False(t, res.IsError, "a refused save never turns a success into an error")
	assert.LessOrEqual(t, len(got), spill.DefaultThreshold, "the model still gets a bounded preview")
	assert.Contains(t, got, "The whole output could not be saved (spill: the output is larger than the session's whole spill budget of 9.8 KiB)")
	assert.Contains(t, got, "cannot be read back")
	assert.NotContains(t, got, "spill://")
	assert.True(t, strings.HasPrefix(got, "00001: "))
	assert.True(t, strings.HasSuffix(got, "line 2000\n"))
	assert.Contains(t, logs.String(), "spill budget is used up")
	assert.Zero(t, spill.LenOf(store), "nothing is kept")
}
