package economy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
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
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
)

// bytesPerToken converts request bytes to tokens for the report: the same
// fixed ratio for both runs, about right for code and English.
const bytesPerToken = 3.5

// countingModel answers from a script, answers compaction requests with a
// short summary, and counts the bytes of every request it is sent.
type countingModel struct {
	script   *replay.Model
	info     model.Info
	requests int
	bytes    int64
	peak     int64
}

func (m *countingModel) Info() model.Info { return m.info }

func (m *countingModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	n := int64(len(req.System))
	for _, t := range req.Tools {
		n += int64(len(t.Name) + len(t.Description) + len(t.Parameters))
	}
	for _, msg := range req.Messages {
		b, _ := json.Marshal(msg)
		n += int64(len(b))
	}
	m.requests++
	m.bytes += n
	m.peak = max(m.peak, n)
	usage := &harness.Usage{InputTokens: int64(float64(n) / bytesPerToken), OutputTokens: 50}
	if isSummaryRequest(req) {
		return replay.NewScripted(replay.Response{Text: "## Goal\nTidy the markers in a.go-e.go and keep the tests green.\n## Done\nRead every file; edited markers 1-8; tests ran (long logs are in spill files).\n## Next\nContinue with the remaining markers.", Usage: usage}).Stream(ctx, req)
	}
	return func(yield func(model.Chunk, error) bool) {
		for c, err := range m.script.Stream(ctx, req) {
			if c.Type == model.ChunkFinish {
				if !yield(model.Chunk{Type: model.ChunkUsage, Usage: *usage}, nil) {
					return
				}
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// isSummaryRequest reports whether req asks for a compaction's summary,
// in either form: a transcript under the summarizer's system prompt, or
// the conversation followed by the summary instruction.
func isSummaryRequest(req *model.Request) bool {
	if strings.HasPrefix(req.System, "You compress") {
		return true
	}
	n := len(req.Messages)
	return n > 0 && req.Messages[n-1].Role == harness.RoleUser && strings.HasPrefix(req.Messages[n-1].Text(), compactionMarker)
}

// testLog is what a test runner prints: long, and the failure at the end.
func testLog(run int) string {
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, "=== RUN   TestCase%04d\n--- PASS: TestCase%04d (0.00s)\n", i, i)
	}
	fmt.Fprintf(&b, "--- FAIL: TestMarkers (0.01s)\n    markers_test.go:%d: marker %d is not done\nFAIL\n", 40+run, run)
	return b.String()
}

type runIn struct {
	Package string `json:"package"`
}

// runTests stands for a host-provided tool with no output cap of its own.
func runTests() tools.Tool {
	n := 0
	return tools.Define(tools.Spec{Name: "run_tests", Description: "Run the tests of a package.", Family: tools.FamilyProcess},
		func(ctx context.Context, call *tools.Call, in runIn) (*harness.ToolResult, error) {
			n++
			return harness.TextResult(testLog(n)), nil
		})
}

// sourceFile returns a file of code-like lines with ten unique markers.
func sourceFile(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n", strings.TrimSuffix(name, ".go"))
	for i := range 300 {
		if i%30 == 0 {
			fmt.Fprintf(&b, "// marker %d: todo\n", i/30)
			continue
		}
		fmt.Fprintf(&b, "func helper%03d(x int) int { return x*%d + %d } // keeps the example realistic\n", i, i, i%7)
	}
	return b.String()
}

// script is a 60-step session: reads, re-reads of the same files, edits
// (each followed by a re-read), windowed reads, and four huge test logs.
func script() []replay.Response {
	names := []string{"a.go", "b.go", "c.go", "d.go", "e.go"}
	var out []replay.Response
	id := 0
	call := func(name string, args any) {
		id++
		out = append(out, replay.Call(replay.ToolCall(fmt.Sprintf("c%02d", id), name, args)))
	}
	read := func(f string) { call("read", map[string]any{"file_path": f}) }
	for _, f := range names {
		read(f)
	}
	marker := 0
	for round := 0; len(out) < 59; round++ {
		f := names[round%len(names)]
		switch round % 6 {
		case 0, 3:
			call("edit", map[string]any{"file_path": f, "old_string": fmt.Sprintf("// marker %d: todo", marker%10), "new_string": fmt.Sprintf("// marker %d: done", marker%10)})
			marker++
			read(f)
		case 1:
			call("run_tests", map[string]any{"package": "./..."})
		case 2:
			call("read", map[string]any{"file_path": f, "offset": 100, "limit": 50})
			read(f)
		case 4, 5:
			read(f)
		}
	}
	out = out[:59]
	return append(out, replay.Response{Text: "All markers I could reach are done; the remaining test failure is marker 9."})
}

type outcome struct {
	requests int
	bytes    int64
	peak     int64
	spilled  int
	pruned   int
	compact  int
}

func runSession(t *testing.T, features bool, policy agent.ContextPolicy) outcome {
	ctx := context.Background()
	workspace := t.TempDir()
	for _, f := range []string{"a.go", "b.go", "c.go", "d.go", "e.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(workspace, f), []byte(sourceFile(f)), 0o644))
	}
	fsys, err := fslocal.New(workspace)
	require.NoError(t, err)
	defer fsys.Close()

	llm := &countingModel{script: replay.NewScripted(script()...), info: model.Info{Name: "scripted-128k", ContextWindow: 128_000}}
	store := session.NewMemory(session.StoreConfig{})
	opts := []agent.Option{
		agent.WithModel(llm), agent.WithStores(agent.Stores{Files: fsys, Sessions: store}),
		agent.WithTools(append(files.Tools(files.Config{}), runTests())...),
		agent.WithSystemPrompt("You are a careful coding agent."),
	}
	spillStore, err1 := spill.NewMemory(spill.StoreConfig{})
	spilling, err2 := spill.Middleware(spill.Config{})
	deadlines, err3 := guard.Deadlines(guard.DeadlineConfig{})
	repeats, err4 := guard.RepeatGuard(guard.RepeatConfig{})
	failures, err5 := guard.FailureGuard(guard.FailureConfig{})
	require.NoError(t, errors.Join(err1, err2, err3, err4, err5))
	if features {
		opts = append(opts,
			agent.WithStores(agent.Stores{Output: spillStore}),
			agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling, deadlines}}),
			agent.WithHooks(agent.Hooks{Steps: []tools.StepObserver{repeats, failures}}),
			agent.WithContextPolicy(policy))
	} else {
		opts = append(opts, agent.WithContextPolicy(agent.ContextPolicy{Disabled: true}))
	}
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	var end *agent.TurnEnd
	for ev, err := range s.Run(ctx, "Mark every marker in a.go to e.go as done and keep the tests passing.") {
		require.NoError(t, err)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.Equal(t, session.ReasonCompleted, end.Reason)
	require.Equal(t, 60, end.Steps)

	o := outcome{requests: llm.requests, bytes: llm.bytes, peak: llm.peak}
	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	runs := 0
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.Pruned:
			o.pruned += len(p.Calls)
		case *session.Compacted:
			o.compact++
		case *session.ToolFinished:
			if p.Name != "run_tests" {
				continue
			}
			runs++
			if !features {
				continue
			}
			// Everything stays retrievable: the spill file holds the whole log.
			text := p.Result.Text()
			i := strings.Index(text, tools.OutputScheme)
			require.GreaterOrEqual(t, i, 0, "the preview names its spill file")
			loc := text[i:]
			loc = loc[:strings.IndexAny(loc, " \"")]
			loc = strings.TrimSuffix(loc, ".")
			rc, err := spillStore.Open(ctx, loc)
			require.NoError(t, err, loc)
			whole, err := io.ReadAll(rc)
			rc.Close()
			require.NoError(t, err)
			assert.Equal(t, testLog(runs), string(whole), "spill file %s holds the whole output", loc)
			o.spilled++
		}
	}
	return o
}

// TestEconomyFigure runs the same scripted 60-step session with every
// context-economy feature on and with all of them off, and compares the
// bytes (and estimated tokens) sent to the model over the session.
func TestEconomyFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("the economy figure runs two 60-step sessions")
	}
	tok := func(b int64) int64 { return int64(float64(b) / bytesPerToken) }
	off := runSession(t, false, agent.ContextPolicy{})
	t.Logf("features off:            %d requests, %d bytes sent (~%d tokens), largest request %d bytes (~%d tokens)",
		off.requests, off.bytes, tok(off.bytes), off.peak, tok(off.peak))
	runTestsCalls := 0
	for _, r := range script() {
		for _, c := range r.ToolCalls {
			if c.Name == "run_tests" {
				runTestsCalls++
			}
		}
	}
	for _, c := range []struct {
		name   string
		policy agent.ContextPolicy
		target float64
	}{
		{"default policy", agent.ContextPolicy{}, 0.60},
		{"prune early", agent.ContextPolicy{PruneAt: 0.15, CompactAt: 0.5, KeepRecent: 0.15}, 0.60},
	} {
		on := runSession(t, true, c.policy)
		saving := 1 - float64(on.bytes)/float64(off.bytes)
		t.Logf("features on (%s): %d requests, %d bytes sent (~%d tokens), largest request %d bytes (~%d tokens); %d outputs spilled, %d reads pruned, %d compactions; %.1f%% fewer tokens sent",
			c.name, on.requests, on.bytes, tok(on.bytes), on.peak, tok(on.peak), on.spilled, on.pruned, on.compact, 100*saving)
		assert.Equal(t, runTestsCalls, on.spilled, "every huge output was spilled and is retrievable")
		assert.Positive(t, on.pruned)
		assert.GreaterOrEqual(t, saving, c.target, "%s: target at least 60%% fewer tokens with everything on", c.name)
	}
}
