package agent_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type fakeReadIn struct {
	Path     string `json:"path"`
	Version  string `json:"version"`
	Start    int    `json:"start,omitempty"`
	End      int    `json:"end,omitempty"`
	Complete bool   `json:"complete,omitempty"`
}

// fakeRead returns a big body and the file access record a real read
// tool would.
func fakeRead() tools.Tool {
	return tools.Define(tools.Spec{Name: "read", Description: "read", ConcurrencySafe: true, NeverSpill: true},
		func(ctx context.Context, call *tools.Call, in fakeReadIn) (*harness.ToolResult, error) {
			body := fmt.Sprintf("%s@%s %d-%d\n", in.Path, in.Version, in.Start, in.End) + strings.Repeat("code line\n", 400)
			return &harness.ToolResult{Content: []harness.Block{harness.TextBlock(body)},
				Files: []harness.FileAccess{{Op: harness.FileRead, Path: in.Path, Version: in.Version, StartLine: in.Start, EndLine: in.End, Complete: in.Complete}}}, nil
		})
}

func fakeEdit() tools.Tool {
	return tools.Define(tools.Spec{Name: "edit", Description: "edit", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in fakeReadIn) (*harness.ToolResult, error) {
			return &harness.ToolResult{Content: []harness.Block{harness.TextBlock("edited " + in.Path)},
				Files: []harness.FileAccess{{Op: harness.FileWrite, Path: in.Path, Version: in.Version}}}, nil
		})
}

func rd(id, path, version string, start, end int, complete bool) harness.ToolCall {
	return replay.ToolCall(id, "read", fakeReadIn{Path: path, Version: version, Start: start, End: end, Complete: complete})
}

func resultByCall(msgs []harness.Message, id string) string {
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult && b.ToolResult.CallID == id {
				return resultText(b.ToolResult)
			}
		}
	}
	return "<missing>"
}

func TestPruneSupersededReads(t *testing.T) {
	ctx := context.Background()
	llm := replay.NewScripted(
		replay.Call(rd("r1", "/w/a.go", "v1", 1, 50, false)),
		replay.Call(rd("r2", "/w/a.go", "v1", 40, 90, false)), // overlaps r1, covers it not
		replay.Call(rd("r3", "/w/a.go", "v1", 0, 0, true)),    // whole file, same version: covers r1 and r2
		replay.Call(rd("r4", "/w/b.go", "v1", 1, 10, false)),
		replay.Call(replay.ToolCall("e1", "edit", fakeReadIn{Path: "/w/b.go", Version: "v2"})), // makes r4 stale
		replay.Call(rd("r5", "/w/c.go", "v1", 1, 10, false)),
		replay.Call(rd("r6", "/w/c.go", "v2", 1, 10, false)), // other version: r5 is not provably superseded
		replay.Response{Text: "done"},
	).WithInfo(model.Info{Name: "small", ContextWindow: 2000})
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead(), fakeEdit()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.01, CompactAt: 100}))
	evs, end, err := collect(t, s, ctx, "read things")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.NotEmpty(t, ofType[*agent.ContextPruned](evs))

	last := llm.Requests()[len(llm.Requests())-1].Messages
	assert.Contains(t, resultByCall(last, "r1"), "[pruned: the read result for /w/a.go lines 1-50 was superseded by a later read of the same lines (call r3)")
	assert.Contains(t, resultByCall(last, "r2"), "[pruned:")
	assert.Contains(t, resultByCall(last, "r3"), "code line", "the newest read stays")
	assert.Contains(t, resultByCall(last, "r4"), "made stale when edit changed the file (call e1)")
	assert.Contains(t, resultByCall(last, "r5"), "code line", "a read at another version proves nothing")
	assert.Contains(t, resultByCall(last, "r6"), "code line")

	// r2 was not pruned before r3 existed: overlapping windows prove nothing.
	third := llm.Requests()[2].Messages
	assert.Contains(t, resultByCall(third, "r1"), "code line")
	assert.Contains(t, resultByCall(third, "r2"), "code line")

	// The log keeps the originals and records each pruning once.
	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	pruned := map[string]int{}
	for _, e := range tr.Events {
		if p, ok := e.Data.(*session.Pruned); ok {
			for _, c := range p.Calls {
				pruned[c.CallID]++
			}
		}
		if f, ok := e.Data.(*session.ToolFinished); ok && f.CallID == "r1" {
			assert.Contains(t, f.Result.Text(), "code line", "the log keeps the original result")
		}
	}
	assert.Equal(t, map[string]int{"r1": 1, "r2": 1, "r4": 1}, pruned, "each result pruned exactly once")

	// The rebuilt history of the log is the pruned one the model saw.
	rebuilt := new(session.History).Add(tr.Events...).Messages()
	assert.Equal(t, js(last), js(rebuilt[:len(last)]))
}

func TestNoPruningBelowThreshold(t *testing.T) {
	llm := replay.NewScripted(
		replay.Call(rd("r1", "/w/a.go", "v1", 1, 10, false)),
		replay.Call(rd("r2", "/w/a.go", "v1", 1, 10, false)),
		replay.Response{Text: "done"},
	).WithInfo(model.Info{Name: "big", ContextWindow: 1_000_000})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()))
	evs, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Empty(t, ofType[*agent.ContextPruned](evs), "no pressure, no pruning: the cached prefix stays intact")
	assert.Contains(t, resultByCall(llm.Requests()[2].Messages, "r1"), "code line")
}

// summarizingModel answers compaction requests with a fixed summary and
// everything else from its script.
type summarizingModel struct {
	*replay.Model
	summary   string
	summaries []*model.Request
	// before holds, for each summary request, the last other request
	// sent before it (nil for none).
	before []*model.Request
	// toolCallFirst answers the first summary request that repeats the
	// conversation with a tool call instead of a summary.
	toolCallFirst bool
}

func summarizer(summary string, script ...replay.Response) *summarizingModel {
	return &summarizingModel{Model: replay.NewScripted(script...), summary: summary}
}

func (m *summarizingModel) WithInfo(info model.Info) *summarizingModel {
	m.Model.WithInfo(info)
	return m
}

func (m *summarizingModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	if isSummaryRequest(req) {
		var prev *model.Request
		if reqs := m.Requests(); len(reqs) > 0 {
			prev = reqs[len(reqs)-1]
		}
		m.summaries = append(m.summaries, req)
		m.before = append(m.before, prev)
		if m.toolCallFirst && !strings.HasPrefix(req.System, "You compress") {
			m.toolCallFirst = false
			return replay.NewScripted(replay.Response{ToolCalls: []harness.ToolCall{rd("x1", "/w/a.go", "v1", 1, 2, false)}, Usage: &harness.Usage{InputTokens: 800, OutputTokens: 20}}).Stream(ctx, req)
		}
		return replay.NewScripted(replay.Response{Text: m.summary, Usage: &harness.Usage{InputTokens: 900, OutputTokens: 40}}).Stream(ctx, req)
	}
	return m.Model.Stream(ctx, req)
}

// isSummaryRequest reports whether req asks for a compaction's summary,
// in either form: a transcript under the summarizer's system prompt, or
// the conversation followed by the summary instruction.
func isSummaryRequest(req *model.Request) bool {
	if strings.HasPrefix(req.System, "You compress") {
		return true
	}
	n := len(req.Messages)
	return n > 0 && req.Messages[n-1].Role == harness.RoleUser && strings.HasPrefix(req.Messages[n-1].Text(), "<compaction request>")
}

// sixReads is a small model ("small", a 4,000-token window) that reads
// six 400-line files one call at a time and then finishes, summarizing
// when asked to compact.
func sixReads() *summarizingModel {
	var script []replay.Response
	for i := range 6 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%d", i), fmt.Sprintf("/w/f%d.go", i), "v1", 1, 400, false)))
	}
	script = append(script, replay.Response{Text: "finished"})
	return summarizer("## Goal\nread six files\n## Done\nread f0-f4", script...).
		WithInfo(model.Info{Name: "small", ContextWindow: 4000})
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	llm := sixReads()
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3}))
	evs, end, err := collect(t, s, ctx, "read the files")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	comp := ofType[*agent.ContextCompacted](evs)
	require.NotEmpty(t, comp)
	assert.Less(t, comp[0].SummaryTokens, comp[0].SourceTokens)

	require.NotEmpty(t, llm.summaries)
	for i, r := range llm.summaries {
		// The summary is asked for after the older part of the
		// conversation itself, a prefix of what was sent before, so the
		// provider's prefix cache holds its prompt.
		prev := llm.before[i]
		require.NotNil(t, prev)
		assert.Equal(t, prev.System, r.System)
		assert.Equal(t, js(prev.Tools), js(r.Tools), "the same tools, so the prefix is the same")
		n := len(r.Messages) - 1
		require.LessOrEqual(t, n, len(prev.Messages))
		assert.Equal(t, js(prev.Messages[:n]), js(r.Messages[:n]), "the older part, as it was sent")
		assert.True(t, strings.HasPrefix(r.Messages[n].Text(), "<compaction request>\nPause the task here and do not call any tool."))
	}
	var after *model.Request
	for _, r := range llm.Requests() {
		if len(r.Messages) > 0 && strings.Contains(r.Messages[0].Text(), "<summary of the earlier conversation>") {
			after = r
		}
	}
	require.NotNil(t, after, "a request after compaction starts with the summary")
	assert.Contains(t, after.Messages[0].Text(), "read f0-f4")
	// Pairing: every tool result follows the assistant message with its call.
	calls := map[string]bool{}
	for _, m := range after.Messages {
		for _, c := range m.ToolCalls() {
			calls[c.ID] = true
		}
		if m.Role == harness.RoleTool {
			assert.True(t, calls[m.Content[0].ToolResult.CallID], "result %s without its call", m.Content[0].ToolResult.CallID)
		}
	}

	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	var compacted []*session.Compacted
	for _, e := range tr.Events {
		if c, ok := e.Data.(*session.Compacted); ok {
			compacted = append(compacted, c)
		}
	}
	require.NotEmpty(t, compacted, "compaction is logged")
	rebuilt := new(session.History).Add(tr.Events...).Messages()
	last := llm.Requests()[len(llm.Requests())-1]
	assert.Equal(t, js(last.Messages), js(rebuilt[:len(last.Messages)]), "resume rebuilds the compacted history")
}

// A summary request that repeats the conversation may be answered with
// a tool call instead of a summary; the older part is then sent as a
// transcript, and both calls count in the compaction's usage.
func TestCompactionFallsBackToTranscript(t *testing.T) {
	ctx := context.Background()
	llm := sixReads()
	llm.toolCallFirst = true
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithContextPolicy(agent.ContextPolicy{Strategy: agent.ContextThresholds, PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3}))
	evs, end, err := collect(t, s, ctx, "read the files")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs))
	require.GreaterOrEqual(t, len(llm.summaries), 2)
	assert.Equal(t, "", llm.summaries[0].System, "first the conversation itself")
	assert.NotEmpty(t, llm.summaries[0].Tools)
	transcript := llm.summaries[1]
	assert.True(t, strings.HasPrefix(transcript.System, "You compress"), "then a transcript")
	assert.Empty(t, transcript.Tools, "the transcript request offers no tools")
	assert.Contains(t, transcript.Messages[0].Text(), "RESULT of read")

	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	for _, e := range tr.Events {
		if c, ok := e.Data.(*session.Compacted); ok {
			require.NotNil(t, c.Usage)
			assert.Equal(t, int64(800+900), c.Usage.InputTokens, "the failed attempt's usage counts too")
			assert.Equal(t, "## Goal\nread six files\n## Done\nread f0-f4", c.Summary)
			break
		}
	}
}

func TestCompactionRefusesLargerSummary(t *testing.T) {
	var script []replay.Response
	for i := range 4 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%d", i), fmt.Sprintf("/w/f%d.go", i), "v1", 1, 400, false)))
	}
	script = append(script, replay.Response{Text: "finished"})
	huge := strings.Repeat("a very long summary ", 5000)
	llm := summarizer(huge, script...).WithInfo(model.Info{Name: "small", ContextWindow: 3000})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Empty(t, ofType[*agent.ContextCompacted](evs))
	for _, m := range s.Messages() {
		assert.NotContains(t, m.Text(), "a very long summary")
	}
}

func TestOverflowTriggersPruneCompactRetry(t *testing.T) {
	overflow := model.NewError(harness.CodeContextWindowExceeded, "maximum context length exceeded", &model.ProviderError{Status: 400})
	llm := summarizer("## Goal\nsummary",
		replay.Call(rd("r1", "/w/a.go", "v1", 1, 10, false)),
		replay.Call(rd("r2", "/w/a.go", "v1", 0, 0, true)),
		replay.Call(rd("r3", "/w/b.go", "v1", 0, 0, true)),
		replay.Response{Err: overflow},
		replay.Response{Text: "fits now"},
	).WithInfo(model.Info{Name: "unknown-window"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	retries := ofType[*agent.Retry](evs)
	require.Len(t, retries, 1)
	assert.Equal(t, harness.CodeContextWindowExceeded, harness.CodeOf(retries[0].Err))
	require.NotEmpty(t, ofType[*agent.ContextPruned](evs), "overflow prunes even without a known window")
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs))

	// A second overflow in the same step is final.
	model2 := summarizer("## Goal\nsummary", replay.Call(rd("r1", "/w/a.go", "v1", 1, 10, false)),
		replay.Response{Err: overflow}, replay.Response{Err: overflow}, replay.Response{Text: "never"})
	_, s2 := newSession(t, agent.WithModel(model2), agent.WithTools(fakeRead()))
	_, end, err = collect(t, s2, context.Background(), "go")
	assert.Equal(t, session.ReasonError, end.Reason)
	assert.Equal(t, harness.CodeContextWindowExceeded, harness.CodeOf(err))
}

// TestCompactionCostSurvivesResume: the summarizing call is a model call
// the log records, so a resumed session's Cost and Usage count it as the
// live session did.
func TestCompactionCostSurvivesResume(t *testing.T) {
	ctx := context.Background()
	llm := sixReads()
	prices, err := pricing.NewTable("USD", map[string]pricing.Price{"small": {Input: 1, Output: 10}})
	require.NoError(t, err)
	store := session.NewMemory(session.StoreConfig{})
	opts := []agent.Option{agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithStores(agent.Stores{Sessions: store}), agent.WithPrices(prices),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3})}
	loop, s := newSession(t, opts...)
	evs, end, err := collect(t, s, ctx, "read the files")
	require.NoError(t, err)
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs))
	require.NotEmpty(t, llm.summaries)
	live, liveUsage := s.Cost(), s.Usage()
	require.Positive(t, live, "the summaries were priced")
	assert.Equal(t, end.Usage, liveUsage, "the session's usage counts the summarizing calls as the turn's does")
	assert.GreaterOrEqual(t, liveUsage.InputTokens, int64(900*len(llm.summaries)))
	id := s.Header().ID
	require.NoError(t, s.Close())
	require.NoError(t, loop.Close())

	_, s2 := resumeSession(t, id, opts...)
	assert.InDelta(t, live, s2.Cost(), 1e-12, "a resumed session costs what the live one did, compactions included")
	assert.Equal(t, liveUsage, s2.Usage())
}
