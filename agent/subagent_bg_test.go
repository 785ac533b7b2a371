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
	assert.Contains(t, results["p1"], "Started the helper agent in the background as job job1 (session ")
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
}
