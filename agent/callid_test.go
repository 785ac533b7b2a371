package agent_test

import (
	"context"
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
	"github.com/go-harness/harness/session"
)

// loggedCallIDs returns the ids of the calls of the logged assistant
// messages, and of the logged results, in log order.
func loggedCallIDs(t *testing.T, store session.Store, id string) (calls, results []string) {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.AssistantMessage:
			for _, c := range (harness.Message{Content: p.Content}).ToolCalls() {
				calls = append(calls, c.ID)
			}
		case *session.ToolFinished:
			results = append(results, p.CallID)
		}
	}
	return calls, results
}

// A provider that numbers its calls per step sends call_0 in every step.
// The second call_0 is renamed as it arrives, so pruning replaces the old
// read and keeps the newest, live and after a resume.
func TestReusedCallIDAcrossSteps(t *testing.T) {
	ctx := context.Background()
	llm := replay.NewScripted(
		replay.Call(rd("call_0", "/w/a.go", "v1", 1, 50, false)),
		replay.Call(rd("call_0", "/w/a.go", "v1", 1, 50, false)),
		replay.Response{Text: "done"},
	).WithInfo(model.Info{Name: "small", ContextWindow: 2000})
	dir := t.TempDir()
	store := session.NewJSONL(dir, session.StoreConfig{})
	loop, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.01, CompactAt: 100}))
	evs, end, err := collect(t, s, ctx, "read it twice")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.NotEmpty(t, ofType[*agent.ContextPruned](evs))

	calls, results := loggedCallIDs(t, store, s.Header().ID)
	assert.Equal(t, []string{"call_0", "call_t1_s2_0"}, calls, "the repeated id is renamed, and the log holds the new one")
	assert.Equal(t, calls, results)
	var started []string
	for _, e := range ofType[*agent.ToolCallStart](evs) {
		started = append(started, e.Call.ID)
	}
	assert.Equal(t, calls, started, "the host sees the ids that are logged")

	last := llm.Requests()[len(llm.Requests())-1].Messages
	assert.Contains(t, resultByCall(last, "call_0"), "[pruned: the read result for /w/a.go lines 1-50 was superseded by a later read of the same lines (call call_t1_s2_0)")
	assert.Contains(t, resultByCall(last, "call_t1_s2_0"), "code line", "the newest read stays")
	assert.Equal(t, 1, strings.Count(js(last), "[pruned:"), "exactly one result is pruned")

	// Resuming rebuilds the same history.
	require.NoError(t, s.Close())
	require.NoError(t, loop.Close())
	loop2, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "again"})), agent.WithTools(fakeRead()), agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}))
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(ctx, s.Header().ID)
	require.NoError(t, err)
	assert.Empty(t, s2.Warnings())
	rebuilt := s2.Messages()
	assert.Equal(t, js(last), js(rebuilt[:len(last)]))
}

// Ids are unique in the whole session: across turns, for calls without
// an id, and when a provider's id happens to equal a generated one.
func TestCallIDsUniqueInTheSession(t *testing.T) {
	ctx := context.Background()
	llm := replay.NewScripted(
		replay.Call(rd("call_0", "/w/a.go", "v1", 1, 2, false), rd("", "/w/b.go", "v1", 1, 2, false)),
		replay.Response{Text: "one"},
		replay.Call(rd("call_0", "/w/a.go", "v1", 1, 2, false), rd("call_t2_s1_0", "/w/c.go", "v1", 1, 2, false), rd("call_t2_s1_0", "/w/d.go", "v1", 1, 2, false)),
		replay.Response{Text: "two"},
	)
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithStores(agent.Stores{Sessions: store}))
	for _, prompt := range []string{"first", "second"} {
		_, end, err := collect(t, s, ctx, prompt)
		require.NoError(t, err)
		assert.Equal(t, session.ReasonCompleted, end.Reason)
	}
	calls, results := loggedCallIDs(t, store, s.Header().ID)
	// Turn 2's call_0 is taken, so it becomes call_t2_s1_0; the provider's
	// own call_t2_s1_0 is then taken too, and so is its repetition.
	assert.Equal(t, []string{"call_0", "call_t1_s1_1", "call_t2_s1_0", "call_t2_s1_1", "call_t2_s1_2"}, calls)
	assert.ElementsMatch(t, calls, results, "results finish in any order")
	seen := map[string]bool{}
	for _, id := range calls {
		assert.False(t, seen[id], "id %s used twice", id)
		seen[id] = true
	}
}

// A log whose assistant message holds a tool_call block without its
// payload is resumed, compacted and rendered without a panic: loading
// leaves the block out and says so.
func TestResumeAndCompactWithInvalidBlocks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := session.NewJSONL(dir, session.StoreConfig{})
	require.NoError(t, os.MkdirAll(dir, 0o700))
	lines := []string{
		`{"type":"session","format":1,"id":"broken","cwd":"/w","created":"2026-01-01T00:00:00Z"}`,
		`{"seq":1,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"start"},{"type":"image"}]}}`,
		`{"seq":2,"time":"2026-01-01T00:00:00Z","type":"assistant","data":{"step":1,"content":[{"type":"text","text":"` + strings.Repeat("long answer ", 300) + `"},{"type":"tool_call"},{"type":"tool_result"},{"type":"image"}]}}`,
		`{"seq":3,"time":"2026-01-01T00:00:00Z","type":"turn_end","data":{"reason":"completed","steps":1,"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"seq":4,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"` + strings.Repeat("more words ", 300) + `"}]}}`,
		`{"seq":5,"time":"2026-01-01T00:00:00Z","type":"assistant","data":{"step":1,"content":[{"type":"text","text":"ok"}]}}`,
		`{"seq":6,"time":"2026-01-01T00:00:00Z","type":"turn_end","data":{"reason":"completed","steps":1,"usage":{"input_tokens":0,"output_tokens":0}}}`,
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600))

	llm := summarizer("## Goal\nthe summary", replay.Response{Text: "after compaction"}).
		WithInfo(model.Info{Name: "small", ContextWindow: 2000})
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.01, CompactAt: 0.02, KeepRecent: 0.01}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.ResumeSession(ctx, "broken")
	require.NoError(t, err)
	var warned []string
	for _, w := range s.Warnings() {
		warned = append(warned, w.String())
	}
	assert.Equal(t, []string{
		"line 2: event 1 (user): content item 2 is an image without its image reference; skipped",
		"line 3: event 2 (assistant): content block 2 is a tool_call block without its tool_call; skipped",
		"line 3: event 2 (assistant): content block 3 is a tool_result block without its tool_result; skipped",
		"line 3: event 2 (assistant): content block 4 is an image block without its image; skipped",
	}, warned)
	evs, end, err := collect(t, s, ctx, "go on")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs), "the history was compacted, so it was rendered")
	require.NotEmpty(t, llm.summaries)
	assert.Contains(t, llm.summaries[0].Messages[0].Text(), "long answer")
}
