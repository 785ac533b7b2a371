package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// gates are channels the children's gate tool waits on, and the parent's
// open_gate tool opens, waiting then for the job it names to end.
type gates struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func (g *gates) get(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch[name] == nil {
		g.ch[name] = make(chan struct{})
	}
	return g.ch[name]
}

type gateIn struct {
	Name string `json:"name" jsonschema:"the gate"`
	Job  string `json:"job,omitempty" jsonschema:"the job to wait for"`
}

func (g *gates) tools() []tools.Tool {
	wait := tools.Define(tools.Spec{Name: "gate", Description: "Wait at a gate."},
		func(ctx context.Context, call *tools.Call, in gateIn) (*harness.ToolResult, error) {
			select {
			case <-g.get(in.Name):
				return harness.TextResult("passed " + in.Name), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	open := tools.Define(tools.Spec{Name: "open_gate", Description: "Open a gate and wait for a job."},
		func(ctx context.Context, call *tools.Call, in gateIn) (*harness.ToolResult, error) {
			close(g.get(in.Name))
			reg, err := jobs.FromState(call.Env.State, jobs.Config{})
			if err != nil {
				return nil, err
			}
			info, err := reg.Wait(ctx, in.Job)
			if err != nil {
				return nil, err
			}
			return harness.TextResult(string(info.Status)), nil
		})
	return []tools.Tool{wait, open}
}

func bgTask(id, prompt string) harness.ToolCall {
	return replay.ToolCall(id, "task", map[string]any{"agent": "helper", "description": "look around", "prompt": prompt, "background": true})
}

// Two background sub-agents run while the parent works; one ends and the
// parent is told at the next step, the other is stopped with job_stop;
// nothing of either is left running.
func TestBackgroundSubAgents(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	g := &gates{ch: map[string]chan struct{}{}}
	parent := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{bgTask("p1", "task a")}},
		replay.Response{ToolCalls: []harness.ToolCall{bgTask("p2", "task b")}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p3", "open_gate", map[string]any{"name": "a", "job": "job1"})}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p4", "job_stop", map[string]any{"job_id": "job2"})}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p5", "job_output", map[string]any{"job_id": "job1"})}},
		replay.Response{Text: "all done", Usage: usage(10, 1)},
	)
	childA := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("a1", "gate", map[string]any{"name": "a"})}, Usage: usage(5, 1)},
		replay.Response{Text: "answer A", Usage: usage(7, 2)},
	)
	childB := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("b1", "gate", map[string]any{"name": "b"})}},
	)
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": childA, "task b": childB}}
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(append(g.tools(), jobs.Tools()...)...),
		agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "helper", Description: "helps", Tools: []string{"gate"}}}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)

	evs, _, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	results := map[string]string{}
	for _, e := range ofType[*agent.ToolCallEnd](evs) {
		results[e.Call.ID] = e.Result.Text()
	}
	assert.Contains(t, results["p1"], "Started the helper agent in the background as job job1. ")
	assert.NotContains(t, results["p1"], "session", "a replay's sessions have other ids")
	assert.Contains(t, results["p2"], "as job job2")
	assert.Equal(t, "completed", results["p3"])
	assert.Contains(t, results["p4"], "[job2  agent  killed  ")
	assert.Contains(t, results["p5"], "[job1  agent  completed  ")
	assert.Contains(t, results["p5"], "Final answer:\nanswer A")

	reqs := parent.Requests()
	require.Len(t, reqs, 6)
	assert.Equal(t, `job job1 (agent) completed; read it with job_output {"job_id":"job1"}`, lastReminder(reqs[3].Messages),
		"the parent hears of the end after the step during which it came")
	for _, r := range reqs[4:] {
		assert.NotContains(t, allText(r.Messages[len(r.Messages)-1:]), "job job2", "job_stop showed the stop: no notice")
	}

	// The children are sessions of the store, named in the parent's log,
	// and their spend is the parent's.
	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	var children int
	for _, e := range tr.Events {
		if r, ok := e.Data.(*session.ToolRecord); ok && r.Tool == "task" && r.Name == "sub_agent" {
			children++
		}
	}
	assert.Equal(t, 2, children)
	u := s.Usage()
	assert.Equal(t, int64(10+5+7), u.InputTokens, "the parent's own calls and child A's")
	end := evs[len(evs)-1].(*agent.TurnEnd)
	assert.Equal(t, int64(10+5+7), end.Usage.InputTokens, "child A spent while the turn ran: the turn's usage has it")

	// The children's events reached the host in the parent's turn, tagged
	// with their jobs.
	byJob := map[string][]string{}
	var text string
	for _, e := range ofType[*agent.SubAgentEvent](evs) {
		assert.Equal(t, "helper", e.Agent)
		assert.Equal(t, 1, e.Depth)
		byJob[e.Job] = append(byJob[e.Job], agent.KindOf(e.Event))
		if d, ok := e.Event.(*agent.TextDelta); ok && e.Job == "job1" {
			text += d.Text
			assert.Equal(t, "p1", e.Call)
		}
	}
	assert.Equal(t, "answer A", text)
	assert.Contains(t, byJob["job1"], "tool_call_end")
	assert.Equal(t, "turn_end", byJob["job1"][len(byJob["job1"])-1])
	assert.Equal(t, "turn_end", byJob["job2"][len(byJob["job2"])-1], "the stopped child's end reached the host")
}

// bgLoop builds a loop whose helper agents run in the background, with
// the gate tools and the job tools.
func bgLoop(t *testing.T, m model.Model, g *gates, store session.Store, opts ...agent.Option) *agent.Loop {
	t.Helper()
	base := []agent.Option{agent.WithModel(m), agent.WithTools(append(append(g.tools(), echoTool()), jobs.Tools()...)...),
		agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithSubAgents(agent.SubAgents{TurnSteps: 3, Types: []agent.AgentType{{Name: "helper", Description: "helps", Tools: []string{"gate", "echo"}}}})}
	loop, err := agent.New(append(base, opts...)...)
	require.NoError(t, err)
	return loop
}

func callEnds(evs []agent.Event) map[string]*agent.ToolCallEnd {
	out := map[string]*agent.ToolCallEnd{}
	for _, e := range ofType[*agent.ToolCallEnd](evs) {
		out[e.Call.ID] = e
	}
	return out
}

// A background child's steps count against the budget of sub-agent
// steps of the turn that started it, with its other children's: once
// spent, a background child is stopped after its step and a foreground
// task is refused.
func TestBackgroundSubAgentStepsCountAgainstTheTurnBudget(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	g := &gates{ch: map[string]chan struct{}{}}
	echo := func(id string) replay.Response {
		return replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall(id, "echo", map[string]any{"text": id})}}
	}
	parent := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{bgTask("p1", "task a")}},
		replay.Response{ToolCalls: []harness.ToolCall{bgTask("p2", "task b")}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p3", "open_gate", map[string]any{"name": "a", "job": "job1"})}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p4", "open_gate", map[string]any{"name": "b", "job": "job2"})}},
		replay.Response{ToolCalls: []harness.ToolCall{task("p5", "helper", "task c")}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p6", "job_output", map[string]any{"job_id": "job2"})}},
		replay.Response{Text: "done"},
	)
	childA := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("a1", "gate", map[string]any{"name": "a"})}},
		echo("a2"),
		replay.Response{Text: "A done"},
	)
	childB := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("b1", "gate", map[string]any{"name": "b"})}},
		echo("b2"),
		replay.Response{Text: "B done"},
	)
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": childA, "task b": childB}}
	loop := bgLoop(t, m, g, session.NewMemory(session.StoreConfig{}))
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	evs, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	res := callEnds(evs)
	assert.Equal(t, "completed", res["p3"].Result.Text(), "child A took the turn's 3 steps")
	assert.Equal(t, "completed", res["p4"].Result.Text())
	assert.Len(t, childB.Requests(), 1, "child B was stopped after the step that passed the budget")
	assert.Contains(t, res["p5"].Result.Text(), "spent its budget of 3 sub-agent steps", "the foreground task is refused")
	assert.Contains(t, res["p6"].Result.Text(), "[stopped at the turn's budget of sub-agent steps before it finished]")
}

// A background child's model calls are the parent session's as they are
// made: the parent's budget sees them at once, the child stops when the
// parent session's budget is reached, and the parent's turn pauses at its
// next step.
func TestBackgroundSubAgentSpendCountsAgainstTheParentBudget(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	g := &gates{ch: map[string]chan struct{}{}}
	parent := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{bgTask("p1", "task a")}, Usage: usage(10, 0)},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("p2", "open_gate", map[string]any{"name": "a", "job": "job1"})}, Usage: usage(50, 0)},
		replay.Response{Text: "never", Usage: usage(1, 0)},
	)
	childA := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("a1", "gate", map[string]any{"name": "a"})}, Usage: usage(30, 0)},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("a2", "echo", map[string]any{"text": "x"})}, Usage: usage(20, 0)},
		replay.Response{Text: "A done", Usage: usage(1, 0)},
	)
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": childA}}
	loop := bgLoop(t, m, g, session.NewMemory(session.StoreConfig{}), agent.WithLimits(agent.Limits{Budget: agent.Budgets{Session: agent.Budget{Tokens: 100}}}))
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	evs, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingBudget, end.Reason, "the parent's next step found the budget reached")
	assert.Equal(t, "completed", callEnds(evs)["p2"].Result.Text())
	assert.Len(t, childA.Requests(), 2, "the child stopped in the step that reached the parent's budget")
	assert.Equal(t, int64(10+50+30+20), s.Usage().InputTokens)
	assert.Equal(t, int64(10+50+30+20), end.Usage.InputTokens)
	br := ofType[*agent.BudgetReached](evs)
	require.Len(t, br, 1)
	assert.Equal(t, "session_tokens", br[0].Spend.Reached)
	reg, err := jobs.FromState(s.State(), jobs.Config{})
	require.NoError(t, err)
	j, err := reg.Get("job1")
	require.NoError(t, err)
	assert.Equal(t, "stopped at the parent session's budget of money or tokens before it finished", j.Info().Detail)
}
