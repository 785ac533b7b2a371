package agent_test

import (
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// routeModel sends each request to the model scripted for the session's
// first user message: one script for the parent, one for each child.
type routeModel struct {
	routes map[string]model.Model
}

func (m *routeModel) Info() model.Info { return model.Info{Name: "route"} }

func (m *routeModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	first := ""
	for _, msg := range req.Messages {
		if msg.Role == harness.RoleUser {
			first = msg.Text()
			break
		}
	}
	if r, ok := m.routes[first]; ok {
		return r.Stream(ctx, req)
	}
	return func(yield func(model.Chunk, error) bool) {
		yield(model.Chunk{}, &harness.Error{Code: harness.CodeInvalidRequest, Message: "no script for prompt " + first})
	}
}

func task(id, agentName, prompt string) harness.ToolCall {
	return replay.ToolCall(id, "task", map[string]string{"agent": agentName, "description": "look around", "prompt": prompt})
}

func usage(in, out int64) *harness.Usage { return &harness.Usage{InputTokens: in, OutputTokens: out} }

// barrierTool blocks until n calls are inside it at once, so a test
// fails unless they run in parallel.
func barrierTool(n int) tools.Tool {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	return tools.Define(tools.Spec{Name: "look", Description: "Look at something.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			mu.Lock()
			arrived++
			if arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return harness.TextResult("saw " + in.Text), nil
			case <-time.After(5 * time.Second):
				return nil, &harness.Error{Code: harness.CodeTimeout, Message: "the other calls never arrived: not parallel"}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
}

func lastToolResults(s *replay.Model) []*harness.ToolResult {
	reqs := s.Requests()
	return toolResults(reqs[len(reqs)-1])
}

func TestSubAgentsRunInParallelAndRollUp(t *testing.T) {
	leakcheck.Check(t)
	parent := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{task("t1", "explore", "find A"), task("t2", "explore", "find B")}, Usage: usage(100, 10)},
		replay.Response{Text: "A and B found", Usage: usage(200, 20)},
	)
	childA := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("a1", "look", echoIn{Text: "a"})}, Usage: usage(1000, 1)},
		replay.Response{Text: "A is in a.go:3", Usage: usage(2000, 2)},
	)
	childB := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("b1", "look", echoIn{Text: "b"})}, Usage: usage(3000, 3)},
		replay.Response{Text: "B is in b.go:9", Usage: usage(4000, 4)},
	)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "find A": childA, "find B": childB}}
	prices, err := pricing.NewTable("USD", map[string]pricing.Price{"route": {Input: 1, Output: 10}})
	require.NoError(t, err)
	loop, s := newSession(t, agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store}), agent.WithTools(barrierTool(2), echoTool()), agent.WithPrices(prices),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "explore", Description: "Explore the code.", System: "You explore.", Tools: []string{"look"}}}}))
	spec := specOf(t, loop, "task")
	assert.True(t, spec.ConcurrencySafe, "an agent type whose tools change nothing is read-only")

	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)

	res := lastToolResults(parent)
	require.Len(t, res, 2)
	assert.Equal(t, "A is in a.go:3", res[0].Text())
	assert.Equal(t, "B is in b.go:9", res[1].Text())
	assert.Equal(t, harness.Usage{InputTokens: 100 + 200 + 1000 + 2000 + 3000 + 4000, OutputTokens: 10 + 20 + 1 + 2 + 3 + 4}, end.Usage,
		"the children's usage adds to the parent's turn")
	wantCost := (float64(100+200+1000+2000+3000+4000)*1 + float64(10+20+1+2+3+4)*10) / 1e6
	assert.InDelta(t, wantCost, end.Cost, 1e-12, "the children's cost adds to the parent's turn")
	assert.InDelta(t, wantCost, s.Cost(), 1e-12, "and to the parent's session")
	assert.Equal(t, end.Usage, s.Usage(), "the parent's session counts its children's tokens, as its cost counts their calls")

	// The host sees the children's events tagged with their session ids.
	subs := ofType[*agent.SubAgentEvent](evs)
	byCall := map[string]string{}
	for _, se := range subs {
		assert.Equal(t, "explore", se.Agent)
		assert.Equal(t, 1, se.Depth)
		byCall[se.Call] = se.Session
	}
	require.Len(t, byCall, 2)
	assert.NotEqual(t, byCall["t1"], byCall["t2"])
	for call, id := range byCall {
		tr, err := store.Load(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, s.Header().ID, tr.Header.Parent)
		assert.Equal(t, call, tr.Header.ParentCall)
	}
	line, err := agent.MarshalEvent(subs[0])
	require.NoError(t, err)
	assert.Contains(t, string(line), `"type":"sub_agent"`)
	assert.Regexp(t, `"event":\{.*"type":"`, string(line), "the inner event carries its own kind")

	// The parent's log names each child.
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var referenced []string
	for _, ev := range tr.Events {
		if rec, ok := ev.Data.(*session.ToolRecord); ok && rec.Name == "sub_agent" {
			var r struct{ Session string }
			require.NoError(t, json.Unmarshal(rec.Data, &r))
			referenced = append(referenced, r.Session)
		}
	}
	assert.ElementsMatch(t, []string{byCall["t1"], byCall["t2"]}, referenced)

	// A child sees only its type's tools and prompt, and no task tool.
	creq := childA.Requests()[0]
	assert.Equal(t, "You explore.", creq.System)
	var names []string
	for _, tl := range creq.Tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"look"}, names)

	// Resumed, the parent's session costs what it did live: its log
	// keeps the children's model calls.
	id := s.Header().ID
	require.NoError(t, s.Close())
	loop2, err := agent.New(agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store}), agent.WithTools(barrierTool(2), echoTool()), agent.WithPrices(prices),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "explore", Description: "Explore the code.", System: "You explore.", Tools: []string{"look"}}}}))
	require.NoError(t, err)
	defer loop2.Close()
	r, err := loop2.ResumeSession(context.Background(), id)
	require.NoError(t, err)
	assert.InDelta(t, wantCost, r.Cost(), 1e-12, "a resumed parent counts its children's model calls")
	assert.Equal(t, end.Usage, r.Usage(), "and their tokens")
	require.NoError(t, r.Close())
}

func specOf(t *testing.T, loop *agent.Loop, name string) tools.Spec {
	t.Helper()
	for _, sp := range loop.Tools() {
		if sp.Name == name {
			return sp
		}
	}
	t.Fatalf("no tool %q", name)
	return tools.Spec{}
}

func TestSubAgentPermissionEscalationRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	parent := replay.NewScripted(
		replay.Call(task("t1", "worker", "mark it")),
		replay.Response{Text: "done"},
	)
	child := replay.NewScripted(
		replay.Call(replay.ToolCall("m1", "mark", markIn{Text: "x"})),
		replay.Response{Text: "I could not mark: denied"},
	)
	var asked []string
	approver := func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		asked = append(asked, req.Call.Name)
		return permission.Answer{Allow: req.Call.Name == "task", Feedback: "no"}, nil
	}
	m := &routeModel{routes: map[string]model.Model{"go": parent, "mark it": child}}
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file)),
		agent.WithPermissions(policy(t, permission.Rules{Ask: []string{"mark"}})), agent.WithApprover(approver),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "worker", Description: "Works.", Tools: []string{"mark"}}}}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Empty(t, marks(t, file), "the child's call was refused as the parent's would be")
	assert.Equal(t, []string{"task", "mark"}, asked, "the child's ask went to the parent's approver")
	cres := lastToolResults(child)
	require.Len(t, cres, 1)
	assert.Equal(t, harness.CodeDenied, cres[0].Code)
	assert.Equal(t, "I could not mark: denied", lastToolResults(parent)[0].Text())
	var decided bool
	for _, se := range ofType[*agent.SubAgentEvent](evs) {
		if d, ok := se.Event.(*agent.PermissionDecision); ok {
			decided = true
			assert.Equal(t, permission.Deny, d.Outcome)
		}
	}
	assert.True(t, decided, "the host sees the child's decision")
}

func TestSubAgentWithoutApproverCannotPause(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	parent := replay.NewScripted(replay.Call(task("t1", "worker", "mark it")), replay.Response{Text: "done"})
	child := replay.NewScripted(replay.Call(replay.ToolCall("m1", "mark", markIn{Text: "x"})), replay.Response{Text: "needs approval"})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "mark it": child}}
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file)),
		agent.WithPermissions(policy(t, permission.Rules{Ask: []string{"mark"}})),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "worker", Description: "Works.", Tools: []string{"mark"}}}}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason, "a task call that may change things pauses the parent, durably")
	pend := s.Pending()
	require.Len(t, pend, 1)
	assert.Equal(t, "task", pend[0].Call.Name)
	var evs []agent.Event
	for ev, err := range s.Resolve(context.Background(), map[string]permission.Answer{pend[0].Call.ID: {Allow: true}}) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			require.NoError(t, err)
			end = te
		}
	}
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Empty(t, marks(t, file))
	cres := lastToolResults(child)
	assert.Equal(t, harness.CodeDenied, cres[0].Code)
	// The child's model reads why, and that no user denied it.
	assert.Contains(t, cres[0].Text(), "a sub-agent cannot pause its parent's turn")
	assert.Contains(t, cres[0].Text(), "needs approval by the rule mark")
	assert.NotContains(t, cres[0].Text(), "The user denied it")
	// The host sees a denial by the policy that says what to configure.
	var decided []*agent.PermissionDecision
	for _, se := range ofType[*agent.SubAgentEvent](evs) {
		if d, ok := se.Event.(*agent.PermissionDecision); ok {
			decided = append(decided, d)
		}
	}
	require.Len(t, decided, 1, "the host sees the child's decision")
	assert.Equal(t, permission.Deny, decided[0].Outcome)
	assert.NotEqual(t, "user", decided[0].By, "no user was asked")
	assert.Contains(t, decided[0].Reason, "agent.WithApprover")
	assert.Empty(t, decided[0].Feedback)
}

func TestSubAgentOptionErrors(t *testing.T) {
	m := replay.NewScripted()
	for name, sa := range map[string]agent.SubAgents{
		"no types":     {},
		"unknown tool": {Types: []agent.AgentType{{Name: "explore", Tools: []string{"bash"}}}},
		"bad name":     {Types: []agent.AgentType{{Name: "Explore"}}},
		"twice":        {Types: []agent.AgentType{{Name: "a"}, {Name: "a"}}},
		"negative":     {Types: []agent.AgentType{{Name: "a"}}, TurnSteps: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agent.New(agent.WithModel(m), agent.WithTools(echoTool()), agent.WithSubAgents(sa))
			require.Error(t, err)
			assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
		})
	}
}

func TestSubAgentBudgetAndUnknownType(t *testing.T) {
	parent := replay.NewScripted(
		replay.Call(task("t1", "explore", "first")),
		replay.Call(task("t2", "explore", "second"), task("t3", "nobody", "x")),
		replay.Response{Text: "ok"},
	)
	first := replay.NewScripted(
		replay.Call(replay.ToolCall("e1", "echo", echoIn{Text: "1"})),
		replay.Call(replay.ToolCall("e2", "echo", echoIn{Text: "2"})),
		replay.Response{Text: "never reached"},
	)
	m := &routeModel{routes: map[string]model.Model{"go": parent, "first": first}}
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool()),
		agent.WithSubAgents(agent.SubAgents{TurnSteps: 2, Types: []agent.AgentType{{Name: "explore", Description: "x", Tools: []string{"echo"}, MaxSteps: 5}}}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	reqs := parent.Requests()
	require.Len(t, reqs, 3)
	res := toolResults(reqs[1])
	require.Len(t, res, 1)
	assert.Contains(t, res[0].Text(), "step limit", "the first child got the whole budget of 2 steps")
	res = toolResults(reqs[2])
	require.Len(t, res, 3)
	res = res[1:]
	assert.Equal(t, harness.CodeNotRun, res[0].Code, "nothing was left for the second")
	assert.Contains(t, res[0].Text(), "budget of 2 sub-agent steps")
	assert.Equal(t, harness.CodeInvalidArguments, res[1].Code)
	assert.Contains(t, res[1].Text(), "use one of: explore")
}

func TestSubAgentCapsTheAnswer(t *testing.T) {
	long := strings.Repeat("é", 100)
	parent := replay.NewScripted(replay.Call(task("t1", "explore", "talk")), replay.Response{Text: "ok"})
	child := replay.NewScripted(replay.Response{Text: long})
	store := session.NewMemory(session.StoreConfig{})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "talk": child}}
	_, s := newSession(t, agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store}), agent.WithTools(echoTool()),
		agent.WithSubAgents(agent.SubAgents{MaxAnswer: 51, Types: []agent.AgentType{{Name: "explore", Description: "x", Tools: []string{"echo"}}}}))
	evs, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	got := lastToolResults(parent)[0].Text()
	assert.True(t, strings.HasPrefix(got, strings.Repeat("é", 25)+"\n[The answer was cut at 50 of 200 bytes"), got)
	id := ofType[*agent.SubAgentEvent](evs)[0].Session
	assert.Contains(t, got, id)
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	var whole bool
	for _, ev := range tr.Events {
		if a, ok := ev.Data.(*session.AssistantMessage); ok && (harness.Message{Content: a.Content}).Text() == long {
			whole = true
		}
	}
	assert.True(t, whole, "the child's log keeps the whole answer")
}

// blockTool waits for its context: a child that never finishes by itself.
func blockTool(started chan<- struct{}) tools.Tool {
	return tools.Define(tools.Spec{Name: "wait", Description: "Wait.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})
}

func TestSubAgentCancelledWithParentThenResumed(t *testing.T) {
	leakcheck.Check(t)
	started := make(chan struct{}, 2)
	parent := replay.NewScripted(replay.Call(task("t1", "explore", "wait A"), task("t2", "explore", "wait B")))
	wa := replay.NewScripted(replay.Call(replay.ToolCall("w1", "wait", echoIn{})))
	wb := replay.NewScripted(replay.Call(replay.ToolCall("w2", "wait", echoIn{})))
	dir := t.TempDir()
	m := &routeModel{routes: map[string]model.Model{"go": parent, "wait A": wa, "wait B": wb}}
	opts := []agent.Option{agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}), agent.WithTools(blockTool(started)),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "explore", Description: "x", Tools: []string{"wait"}}}})}
	loop, s := newSession(t, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		<-started
		cancel()
	}()
	evs, end, _ := collect(t, s, ctx, "go")
	assert.Equal(t, session.ReasonCancelled, end.Reason)
	children := map[string]bool{}
	for _, se := range ofType[*agent.SubAgentEvent](evs) {
		children[se.Session] = true
	}
	require.Len(t, children, 2)
	require.NoError(t, s.Close())
	require.NoError(t, loop.Close())

	// Both the parent and the interrupted children resume, in a new loop.
	loop2, err := agent.New(opts...)
	require.NoError(t, err)
	defer loop2.Close()
	ps, err := loop2.ResumeSession(context.Background(), s.Header().ID)
	require.NoError(t, err)
	assert.NotEmpty(t, ps.Messages())
	require.NoError(t, ps.Close())
	for id := range children {
		cs, err := loop2.ResumeSession(context.Background(), id)
		require.NoError(t, err, id)
		assert.Equal(t, s.Header().ID, cs.Header().Parent)
		last := cs.Messages()[len(cs.Messages())-1]
		require.NotEmpty(t, last.Content)
		require.NoError(t, cs.Close())
	}
}

func TestSubAgentReplay(t *testing.T) {
	parent := replay.NewScripted(replay.Call(task("t1", "explore", "find A")), replay.Response{Text: "A found"})
	child := replay.NewScripted(replay.Call(replay.ToolCall("e1", "echo", echoIn{Text: "a"})), replay.Response{Text: "A is here"})
	store := session.NewMemory(session.StoreConfig{})
	sa := agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "explore", Description: "x", Tools: []string{"echo"}}}})
	_, s := newSession(t, agent.WithModel(&routeModel{routes: map[string]model.Model{"go": parent, "find A": child}}),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithTools(echoTool()), sa)
	evs, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	childID := ofType[*agent.SubAgentEvent](evs)[0].Session

	// Replaying both logs reproduces the parent's and the child's answers.
	ptr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	ctr, err := store.Load(context.Background(), childID)
	require.NoError(t, err)
	rp, err := replay.NewStrict(ptr)
	require.NoError(t, err)
	rc, err := replay.NewStrict(ctr)
	require.NoError(t, err)
	_, s2 := newSession(t, agent.WithModel(&routeModel{routes: map[string]model.Model{"go": rp, "find A": rc}}),
		agent.WithTools(echoTool()), sa)
	evs2, end, err := collect(t, s2, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	text := func(evs []agent.Event) string {
		var b strings.Builder
		for _, e := range ofType[*agent.TextDelta](evs) {
			b.WriteString(e.Text)
		}
		return b.String()
	}
	assert.Equal(t, "A found", text(evs2))
	var childText strings.Builder
	for _, se := range ofType[*agent.SubAgentEvent](evs2) {
		if td, ok := se.Event.(*agent.TextDelta); ok {
			childText.WriteString(td.Text)
		}
	}
	assert.Equal(t, "A is here", childText.String())
}
