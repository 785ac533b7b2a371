package agent_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
	"github.com/go-harness/harness/tools/permission"
)

// askTools are the gate tools and await_ask, which opens a gate and waits
// until the session in *s has a question pending.
func askTools(g *gates, s **agent.Session) []tools.Tool {
	await := tools.Define(tools.Spec{Name: "await_ask", Description: "Open a gate and wait for a question."},
		func(ctx context.Context, call *tools.Call, in gateIn) (*harness.ToolResult, error) {
			close(g.get(in.Name))
			for ctx.Err() == nil {
				if len((*s).Pending()) > 0 {
					return harness.TextResult("asked"), nil
				}
				time.Sleep(2 * time.Millisecond)
			}
			return nil, ctx.Err()
		})
	return append(append(g.tools(), echoTool(), await), jobs.Tools()...)
}

func askLoop(t *testing.T, m model.Model, g *gates, s **agent.Session, store session.Store, opts ...agent.Option) *agent.Loop {
	t.Helper()
	base := []agent.Option{agent.WithModel(m), agent.WithTools(askTools(g, s)...), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithPermissions(policy(t, permission.Rules{Ask: []string{"echo"}})),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "helper", Description: "helps", Tools: []string{"gate", "echo"}}}})}
	loop, err := agent.New(append(base, opts...)...)
	require.NoError(t, err)
	return loop
}

func resolve(t *testing.T, s *agent.Session, answers map[string]permission.Answer) ([]agent.Event, *agent.TurnEnd) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	for ev, err := range s.Resolve(context.Background(), answers) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			assert.Equal(t, te.Err, err)
			end = te
		}
	}
	require.NotNil(t, end)
	return evs, end
}

// The parent's side of the approval tests: start a background helper,
// wait until it asks, then (after the pause) read its answer.
func askParent() []replay.Response {
	return []replay.Response{
		{ToolCalls: []harness.ToolCall{bgTask("p1", "task a")}},
		{ToolCalls: []harness.ToolCall{replay.ToolCall("p2", "await_ask", map[string]any{"name": "a"})}},
	}
}

func readJob1() []replay.Response {
	return []replay.Response{
		{ToolCalls: []harness.ToolCall{replay.ToolCall("p3", "job_output", map[string]any{"job_id": "job1", "wait_ms": 20000})}},
		{Text: "done"},
	}
}

// A background child's call that needs approval goes to the parent's
// approver, which is told whose call it is.
func TestBackgroundSubAgentAsksTheParentsApprover(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	g := &gates{ch: map[string]chan struct{}{}}
	var s *agent.Session
	asked := make(chan permission.Request, 1)
	approver := func(ctx context.Context, r permission.Request) (permission.Answer, error) {
		asked <- r
		return permission.Answer{Allow: true}, nil
	}
	parent := replay.NewScripted(append(askParent()[:1], readJob1()...)...)
	child := replay.NewScripted(replay.Call(replay.ToolCall("a1", "echo", echoIn{Text: "hi"})), replay.Response{Text: "A done"})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": child}}
	loop := askLoop(t, m, g, &s, session.NewMemory(session.StoreConfig{}), agent.WithApprover(approver))
	defer loop.Close()
	var err error
	s, err = loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	evs, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	r := <-asked
	assert.Equal(t, "echo", r.Call.Name)
	require.NotNil(t, r.Origin)
	assert.Equal(t, "job1", r.Origin.Job)
	assert.Equal(t, "helper", r.Origin.Agent)
	assert.NotEmpty(t, r.Origin.Session)
	assert.Contains(t, callEnds(evs)["p3"].Result.Text(), "Final answer:\nA done")
	assert.Equal(t, "echo: hi", lastToolResults(child)[0].Text(), "the approved call ran")
}

// Without an approver, a background child's ask pauses the child and,
// durably, the parent: Pending lists the question with the child's
// identity, Resolve answers it, the child goes on and the parent's turn
// continues.
func TestBackgroundSubAgentApprovalPausesTheParent(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	g := &gates{ch: map[string]chan struct{}{}}
	var s *agent.Session
	store := session.NewMemory(session.StoreConfig{})
	parent := replay.NewScripted(append(askParent(), readJob1()...)...)
	child := replay.NewScripted(replay.Call(replay.ToolCall("a0", "gate", map[string]any{"name": "a"})),
		replay.Call(replay.ToolCall("a1", "echo", echoIn{Text: "hi"})), replay.Response{Text: "A done"})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": child}}
	loop := askLoop(t, m, g, &s, store)
	defer loop.Close()
	var err error
	s, err = loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	evs, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason, "the parent paused for its child's question")
	assert.Len(t, parent.Requests(), 2, "the parent paused before its next model call")
	ar := ofType[*agent.ApprovalRequest](evs)
	require.NotEmpty(t, ar)
	last := ar[len(ar)-1]
	require.Len(t, last.Requests, 1)
	assert.Equal(t, "job1/a1", last.Requests[0].Call.ID)
	var childAsk bool
	for _, se := range ofType[*agent.SubAgentEvent](evs) {
		if _, ok := se.Event.(*agent.ApprovalRequest); ok && se.Job == "job1" {
			childAsk = true
		}
	}
	assert.True(t, childAsk, "the host saw the child's own request too")

	pend := s.Pending()
	require.Len(t, pend, 1)
	assert.Equal(t, "job1/a1", pend[0].Call.ID)
	assert.Equal(t, "echo", pend[0].Call.Name)
	require.NotNil(t, pend[0].Origin)
	assert.Equal(t, "job1", pend[0].Origin.Job)
	p := s.Paused()
	require.NotNil(t, p)
	assert.Equal(t, session.ReasonAwaitingApproval, p.Reason)
	assert.Len(t, child.Requests(), 2, "the child made no model call after asking")

	// A wrong id or a missing answer is refused; nothing runs.
	_, bad := resolve(t, s, map[string]permission.Answer{"job1/zz": {Allow: true}})
	assert.ErrorIs(t, bad.Err, agent.CodeNothingPending)
	require.Len(t, s.Pending(), 1)

	evs, end = resolve(t, s, map[string]permission.Answer{pend[0].Call.ID: {Allow: true, Digest: pend[0].Digest}})
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Contains(t, callEnds(evs)["p3"].Result.Text(), "Final answer:\nA done")
	res := lastToolResults(child)
	assert.Equal(t, "echo: hi", res[len(res)-1].Text(), "the approved call ran in the child")
	assert.Empty(t, s.Pending())

	// The child logged the user's answer.
	var decided []*session.PermissionDecided
	for _, e := range logEvents(t, store, pend[0].Origin.Session) {
		if d, ok := e.Data.(*session.PermissionDecided); ok && d.CallID == "a1" {
			decided = append(decided, d)
		}
	}
	require.Len(t, decided, 1)
	assert.Equal(t, "allow", decided[0].Outcome)
	assert.Equal(t, "user", decided[0].By)
}

// A child's question survives a restart: the parent's log and the
// child's hold the pause, a resumed parent takes the child up again as
// the same job, Resolve in the new process answers it, and the child
// finishes its turn.
func TestBackgroundSubAgentApprovalAfterRestart(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sessions")
	g := &gates{ch: map[string]chan struct{}{}}
	var s *agent.Session
	parent := replay.NewScripted(askParent()...)
	child := replay.NewScripted(replay.Call(replay.ToolCall("a0", "gate", map[string]any{"name": "a"})),
		replay.Call(replay.ToolCall("a1", "echo", echoIn{Text: "hi"})))
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": child}}
	loop := askLoop(t, m, g, &s, session.NewJSONL(dir, session.StoreConfig{}))
	var err error
	s, err = loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	id := s.Header().ID
	childID := s.Pending()[0].Origin.Session
	require.NoError(t, loop.Close()) // the process ends

	parent2 := replay.NewScripted(readJob1()...)
	child2 := replay.NewScripted(replay.Response{Text: "A done after the restart"})
	m2 := &routeModel{routes: map[string]model.Model{"go": parent2, "task a": child2}}
	var s2 *agent.Session
	loop2 := askLoop(t, m2, g, &s2, session.NewJSONL(dir, session.StoreConfig{}))
	defer loop2.Close()
	s2, err = loop2.ResumeSession(ctx, id)
	require.NoError(t, err)
	pend := s2.Pending()
	require.Len(t, pend, 1, "the resumed parent lists its child's question")
	assert.Equal(t, "job1/a1", pend[0].Call.ID)
	assert.Equal(t, &permission.Origin{Session: childID, Agent: "helper", Job: "job1"}, pend[0].Origin)
	reg, err := jobs.FromState(s2.State(), jobs.Config{})
	require.NoError(t, err)
	j, err := reg.Get("job1")
	require.NoError(t, err)
	assert.Equal(t, jobs.Running, j.Info().Status, "the waiting child is taken up again, not lost")

	evs, end := resolve(t, s2, map[string]permission.Answer{"job1/a1": {Allow: true}})
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Contains(t, callEnds(evs)["p3"].Result.Text(), "[job1  agent  completed")
	assert.Contains(t, callEnds(evs)["p3"].Result.Text(), "Final answer:\nA done after the restart")
	res := lastToolResults(child2)
	assert.Equal(t, "echo: hi", res[len(res)-1].Text(), "the call approved after the restart ran in the child")
	for _, r := range parent2.Requests() {
		assert.NotContains(t, allText(r.Messages), "(agent) lost")
	}
}

// A child that asks while no turn of its parent runs: the host hears of
// it through WithJobEvents, Paused and Pending say what waits, and
// Resolve answers it without a turn of the parent.
func TestBackgroundSubAgentAsksBetweenTurns(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	g := &gates{ch: map[string]chan struct{}{}}
	var s *agent.Session
	parent := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{bgTask("p1", "task a")}},
		replay.Response{Text: "started"},
	)
	child := replay.NewScripted(
		replay.Call(replay.ToolCall("a0", "gate", map[string]any{"name": "a"})),
		replay.Call(replay.ToolCall("a1", "echo", echoIn{Text: "hi"})),
		replay.Response{Text: "A done"})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": child}}
	between := make(chan *agent.SubAgentEvent, 100)
	loop := askLoop(t, m, g, &s, session.NewMemory(session.StoreConfig{}), agent.WithJobEvents(func(e *agent.SubAgentEvent) { between <- e }))
	defer loop.Close()
	var err error
	s, err = loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Nil(t, s.Paused())

	close(g.get("a"))
	for e := range between {
		if _, ok := e.Event.(*agent.ApprovalRequest); ok {
			assert.Equal(t, "job1", e.Job)
			break
		}
	}
	p := s.Paused()
	require.NotNil(t, p, "the parent waits for the answer, though no turn runs")
	require.Len(t, p.Approvals, 1)
	assert.Equal(t, "job1/a1", p.Approvals[0].Call.ID)

	evs, end := resolve(t, s, map[string]permission.Answer{"job1/a1": {Allow: false, Feedback: "not now"}})
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 0, end.Steps)
	// Resolve's turn takes no step: its own event is its end. The child
	// goes on at once, so the first of its events may come while that
	// turn runs and reach the host through it (as during any turn).
	var own, fromChild []agent.Event
	for _, ev := range evs {
		if se, ok := ev.(*agent.SubAgentEvent); ok {
			assert.Equal(t, "job1", se.Job)
			fromChild = append(fromChild, se.Event)
			continue
		}
		own = append(own, ev)
	}
	require.Len(t, own, 1)
	assert.Equal(t, end, own[0])
	reg, err := jobs.FromState(s.State(), jobs.Config{})
	require.NoError(t, err)
	info, err := reg.Wait(ctx, "job1")
	require.NoError(t, err)
	assert.Equal(t, "A done", info.Answer)
	res := lastToolResults(child)
	denied := res[len(res)-1]
	assert.Equal(t, harness.CodeDenied, denied.Code)
	assert.Contains(t, denied.Text(), `The user said: "not now"`)
	for len(between) > 0 {
		fromChild = append(fromChild, (<-between).Event)
	}
	var sawEnd bool
	for _, ev := range fromChild {
		if _, ok := ev.(*agent.TurnEnd); ok {
			sawEnd = true
		}
	}
	assert.True(t, sawEnd, "the child's continuation reached the host")
	assert.Nil(t, s.Paused())
}
