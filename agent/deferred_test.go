package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// countedTool is a tool with a long description that counts its runs.
func countedTool(name, desc string, runs *atomic.Int32) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: desc, ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			runs.Add(1)
			return harness.TextResult(name + " did " + in.Text), nil
		})
}

const (
	fetchDesc = "Fetch a web page and return it as text. " + "Only http and https URLs are fetched; the page is cut at 100 KiB, scripts are dropped, and redirects are followed up to five times. " +
		"Use it for documentation the user names."
	probeDesc = "Ask the language server about a symbol.\nIt answers definitions, references and hover text for a position in a file."
)

// deferredSetup is a loop whose fetch and probe tools are deferred.
type deferredSetup struct {
	fetchRuns, probeRuns atomic.Int32
}

func (d *deferredSetup) tools() []tools.Tool {
	return []tools.Tool{echoTool(), countedTool("fetch", fetchDesc, &d.fetchRuns), countedTool("probe", probeDesc, &d.probeRuns)}
}

func deferredToolNames(ts []model.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func toolBytes(t *testing.T, ts []model.Tool) int {
	b, err := json.Marshal(ts)
	require.NoError(t, err)
	return len(b)
}

func load(id string, names ...string) harness.ToolCall {
	return replay.ToolCall(id, "load_tools", map[string]any{"names": names})
}

// Deferred tools are listed in load_tools' description by name and one
// line; a call before loading does not run and says to load the tool;
// load_tools appends the loaded schemas after the others, in the order
// they were loaded, never reordering the prefix; an unknown name is a
// typed error naming the deferred tools.
func TestDeferredToolsLoadOnDemand(t *testing.T) {
	d := &deferredSetup{}
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "fetch", echoIn{Text: "early"})),
		replay.Call(load("c2", "probe")),
		replay.Call(replay.ToolCall("c3", "probe", echoIn{Text: "x"}), load("c4", "fetch", "probe", "fetch")),
		replay.Call(replay.ToolCall("c5", "fetch", echoIn{Text: "y"}), load("c6", "nope", "echo")),
		replay.Call(load("c7")),
		replay.Response{Text: "done"})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(d.tools()...), agent.WithDeferredTools("fetch", "probe"))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	reqs := m.Requests()
	require.Len(t, reqs, 6)

	// The first request: echo whole, the deferred tools by name and line.
	first := reqs[0].Tools
	require.Equal(t, []string{"echo", "load_tools"}, deferredToolNames(first))
	desc := first[1].Description
	assert.Contains(t, desc, "\n- fetch: Fetch a web page and return it as text.\n")
	assert.True(t, strings.HasSuffix(desc, "\n- probe: Ask the language server about a symbol."), desc)
	assert.NotContains(t, desc, "redirects", "only the first sentence is listed")

	// A call before loading: refused with a remedy, not run.
	refused := ofType[*agent.ToolCallRefused](evs)
	require.NotEmpty(t, refused)
	assert.Equal(t, "c1", refused[0].Call.ID)
	assert.Equal(t, agent.CodeNotLoaded, refused[0].Code)
	r1 := lastResults(reqs[1], 1)[0]
	assert.True(t, r1.IsError)
	assert.Contains(t, resultText(r1), `Load it first with load_tools {"names": ["fetch"]}`)
	for _, st := range ofType[*agent.ToolCallStart](evs) {
		assert.NotEqual(t, "c1", st.Call.ID, "an unloaded tool does not run")
	}

	// probe loaded: its whole schema follows, the prefix unchanged.
	assert.Equal(t, []string{"echo", "load_tools"}, deferredToolNames(reqs[1].Tools))
	require.Equal(t, []string{"echo", "load_tools", "probe"}, deferredToolNames(reqs[2].Tools))
	assert.Equal(t, probeDesc, reqs[2].Tools[2].Description)
	assert.Contains(t, string(reqs[2].Tools[2].Parameters), `"text"`)
	assert.Equal(t, first, reqs[2].Tools[:2], "the prefix stays byte for byte")
	assert.Contains(t, resultText(lastResults(reqs[2], 1)[0]), "Loaded probe")

	// probe runs; fetch loads after it (load order, not registration
	// order), probe twice in one call is already loaded.
	assert.Equal(t, int32(1), d.probeRuns.Load())
	require.Equal(t, []string{"echo", "load_tools", "probe", "fetch"}, deferredToolNames(reqs[3].Tools))
	assert.Equal(t, reqs[2].Tools, reqs[3].Tools[:3])
	got := resultText(lastResults(reqs[3], 1)[0])
	assert.Contains(t, got, "Loaded fetch:")
	assert.Contains(t, got, "Already loaded: probe")

	// fetch runs now (once: c1 did not); the unknown name is a typed
	// error that loads nothing.
	assert.Equal(t, int32(1), d.fetchRuns.Load())
	bad := lastResults(reqs[4], 1)[0]
	assert.Equal(t, harness.CodeUnknownTool, bad.Code)
	assert.Contains(t, resultText(bad), `There is no deferred tool named "nope"`)
	assert.Contains(t, resultText(bad), `"echo" is not deferred`)
	assert.Contains(t, resultText(bad), "The deferred tools are: fetch, probe.")
	assert.Equal(t, harness.CodeInvalidArguments, lastResults(reqs[5], 1)[0].Code, "an empty list")
	assert.Equal(t, []string{"probe", "fetch"}, s.LoadedTools())
}

// The bytes a request spends on tools: deferring two long tools saves
// most of theirs, and loading them brings them back.
func TestDeferredToolsRequestBytes(t *testing.T) {
	measure := func(opts ...agent.Option) (first, loaded int) {
		d := &deferredSetup{}
		m := replay.NewScripted(replay.Call(load("c1", "fetch", "probe")), replay.Response{Text: "ok"})
		_, s := newSession(t, append([]agent.Option{agent.WithModel(m), agent.WithTools(d.tools()...)}, opts...)...)
		_, _, err := collect(t, s, context.Background(), "go")
		require.NoError(t, err)
		return toolBytes(t, m.Requests()[0].Tools), toolBytes(t, m.Requests()[len(m.Requests())-1].Tools)
	}
	whole, _ := measure(agent.WithDeferredTools("nothing_*"))
	deferred, loaded := measure(agent.WithDeferredTools("fetch", "probe"))
	t.Logf("tools: %d B whole, %d B deferred, %d B loaded", whole, deferred, loaded)
	assert.Less(t, deferred, whole, "deferring saves bytes")
	assert.Greater(t, loaded, whole, "loaded: the whole schemas and load_tools")
}

// The loaded tools are logged: a resumed session sends them in the same
// order, a strict replay of the recording matches it request by request,
// and a compaction keeps them.
func TestDeferredToolsResumeAndReplay(t *testing.T) {
	ctx := context.Background()
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	d := &deferredSetup{}
	opts := func(m model.Model) []agent.Option {
		return []agent.Option{agent.WithModel(m), agent.WithTools(d.tools()...), agent.WithStores(agent.Stores{Sessions: store}),
			agent.WithDeferredTools("fetch", "probe")}
	}
	m := replay.NewScripted(replay.Call(load("c1", "probe")), replay.Call(load("c2", "fetch")), replay.Response{Text: "ok"})
	loop, err := agent.New(opts(m)...)
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	_, _, err = collect(t, s, ctx, "load")
	require.NoError(t, err)
	want := m.Requests()[2].Tools
	require.Equal(t, []string{"echo", "load_tools", "probe", "fetch"}, deferredToolNames(want))
	id := s.Header().ID
	require.NoError(t, loop.Close())

	// Resumed: the same tools, in the same order.
	m2 := replay.NewScripted(replay.Call(replay.ToolCall("c3", "fetch", echoIn{Text: "z"})), replay.Response{Text: "again"})
	_, s2 := resumeSession(t, id, opts(m2)...)
	assert.Equal(t, []string{"probe", "fetch"}, s2.LoadedTools())
	_, end, err := collect(t, s2, ctx, "use it")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, want, m2.Requests()[0].Tools)
	assert.Equal(t, int32(1), d.fetchRuns.Load(), "the loaded tool runs after resume")
	require.NoError(t, s2.Close())

	// A strict replay of the whole recording matches every request.
	tr, err := store.Load(ctx, id)
	require.NoError(t, err)
	replayWith := func(opts ...agent.Option) error {
		rm, err := replay.NewStrict(tr)
		require.NoError(t, err)
		l, err := agent.New(append([]agent.Option{agent.WithModel(rm), agent.WithTools((&deferredSetup{}).tools()...)}, opts...)...)
		require.NoError(t, err)
		defer l.Close()
		rs, err := l.NewSession(ctx, session.Header{Cwd: "/ws"})
		require.NoError(t, err)
		for _, prompt := range []string{"load", "use it"} {
			if _, end, _ := collect(t, rs, ctx, prompt); end.Err != nil {
				return end.Err
			}
		}
		return nil
	}
	require.NoError(t, replayWith(agent.WithDeferredTools("fetch", "probe")))
	err = replayWith()
	require.Error(t, err, "without deferral the tools differ, and the strict replay says so")
	assert.ErrorIs(t, err, harness.CodeReplayDrift)
}

// A compaction summarizes the history that loaded a tool; the tool stays
// loaded.
func TestDeferredToolsSurviveCompaction(t *testing.T) {
	script := []replay.Response{replay.Call(load("l1", "probe"))}
	for i := range 6 {
		script = append(script, replay.Call(rd(fmt.Sprintf("r%d", i), fmt.Sprintf("/w/f%d.go", i), "v1", 1, 400, false)))
	}
	script = append(script, replay.Call(replay.ToolCall("p1", "probe", echoIn{Text: "after"})), replay.Response{Text: "finished"})
	llm := summarizer("## Goal\nread six files", script...).WithInfo(model.Info{Name: "small", ContextWindow: 4000})
	var runs atomic.Int32
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead(), countedTool("probe", probeDesc, &runs)),
		agent.WithDeferredTools("probe"),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3}))
	evs, end, err := collect(t, s, context.Background(), "read the files")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs))
	reqs := llm.Requests()
	last := reqs[len(reqs)-1]
	assert.NotContains(t, allText(last.Messages), "Loaded probe", "the load is summarized away")
	assert.Equal(t, []string{"read", "load_tools", "probe"}, deferredToolNames(last.Tools))
	assert.Equal(t, int32(1), runs.Load(), "probe runs after the compaction")
}

// A sub-agent defers the same tools, except those its parent had loaded:
// those it gets whole.
func TestDeferredToolsSubAgent(t *testing.T) {
	d := &deferredSetup{}
	parent := replay.NewScripted(
		replay.Call(load("l1", "fetch")),
		replay.Call(task("t1", "helper", "find it")),
		replay.Response{Text: "done"})
	child := replay.NewScripted(replay.Call(load("cl1", "probe")), replay.Response{Text: "found"})
	_, s := newSession(t, agent.WithModel(&routeModel{routes: map[string]model.Model{"go": parent, "find it": child}}),
		agent.WithTools(d.tools()...), agent.WithDeferredTools("fetch", "probe"),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "helper", Description: "Helps.", Tools: []string{"echo", "fetch", "probe"}}}}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	creqs := child.Requests()
	require.Len(t, creqs, 2)
	assert.Equal(t, []string{"echo", "fetch", "load_tools"}, deferredToolNames(creqs[0].Tools), "fetch, loaded by the parent, is whole")
	assert.NotContains(t, creqs[0].Tools[2].Description, "- fetch")
	assert.Contains(t, creqs[0].Tools[2].Description, "- probe")
	assert.Equal(t, []string{"echo", "fetch", "load_tools", "probe"}, deferredToolNames(creqs[1].Tools))
	assert.Equal(t, []string{"fetch"}, s.LoadedTools(), "the child's loads are its own")
}

// The names of WithDeferredTools are checked.
func TestDeferredToolsOptionErrors(t *testing.T) {
	m := replay.NewScripted()
	for name, tc := range map[string]struct {
		names []string
		want  string
	}{
		"unknown":    {[]string{"fetch", "fecth"}, "fecth names no tool of the loop"},
		"empty":      {[]string{""}, "names no tool"},
		"star":       {[]string{"*"}, "names no tool"},
		"inner star": {[]string{"mcp__*__x"}, "not at its end"},
		"loader":     {[]string{"load_tools"}, "cannot be deferred"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agent.New(agent.WithModel(m), agent.WithTools((&deferredSetup{}).tools()...), agent.WithDeferredTools(tc.names...))
			require.Error(t, err)
			assert.ErrorIs(t, err, harness.CodeInvalidOption)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A pattern may match nothing; then there is no load_tools.
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(echoTool()), agent.WithDeferredTools("mcp__*"))
	require.NoError(t, err)
	defer loop.Close()
	require.Len(t, loop.Tools(), 1)
	// A pattern defers every tool it matches.
	loop2, err := agent.New(agent.WithModel(m), agent.WithTools((&deferredSetup{}).tools()...), agent.WithDeferredTools("f*", "pro*"))
	require.NoError(t, err)
	defer loop2.Close()
	var names []string
	for _, sp := range loop2.Tools() {
		names = append(names, sp.Name)
	}
	assert.Equal(t, []string{"echo", "fetch", "probe", "load_tools"}, names, "Tools lists every tool, deferred or not")
}

// A narrowing of the turn (a skill's allowed tools) does not stop the
// model loading a deferred tool it allows; the calls stay narrowed.
func TestDeferredToolsUnderNarrowing(t *testing.T) {
	d := &deferredSetup{}
	narrow := tools.Define(tools.Spec{Name: "narrow", Description: "Narrow the turn."},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			n := permission.Narrowing{By: "the test", Allow: []string{"fetch"}, Exempt: []string{"narrow"}}
			if err := call.Env.Record(ctx, call, permission.NarrowRecord, n); err != nil {
				return nil, err
			}
			return harness.TextResult("narrowed"), nil
		})
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("n1", "narrow", map[string]any{})),
		replay.Call(load("l1", "fetch", "probe")),
		replay.Call(replay.ToolCall("f1", "fetch", echoIn{Text: "a"}), replay.ToolCall("p1", "probe", echoIn{Text: "b"})),
		replay.Response{Text: "done"})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(append(d.tools(), narrow)...), agent.WithDeferredTools("fetch", "probe"))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	reqs := m.Requests()
	assert.False(t, lastResults(reqs[2], 1)[0].IsError, resultText(lastResults(reqs[2], 1)[0]))
	assert.Equal(t, []string{"fetch", "probe"}, s.LoadedTools())
	res := lastResults(reqs[3], 2)
	assert.False(t, res[0].IsError, "fetch is allowed: %s", resultText(res[0]))
	assert.Equal(t, harness.CodeDenied, res[1].Code, "probe is loaded but narrowed away")
	assert.Equal(t, int32(1), d.fetchRuns.Load())
	assert.Equal(t, int32(0), d.probeRuns.Load())
}
