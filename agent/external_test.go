package agent_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// remoteTool is a tool the host runs outside the loop: its handler
// counts the calls the loop ran itself, which must be none.
func remoteTool(ran *atomic.Int64) tools.Tool {
	return tools.Define(tools.Spec{Name: "remote", Description: "Run it elsewhere."},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			ran.Add(1)
			return harness.TextResult("ran in the loop"), nil
		})
}

// externalScript: one step with an echo and a remote call, then an
// answer.
func externalScript() *replay.Model {
	return replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("e1", "echo", echoIn{Text: "here"}),
			replay.ToolCall("x1", "remote", echoIn{Text: "there"}),
		}, Usage: usage(100, 10)},
		replay.Response{Text: "both done", Usage: usage(200, 10)},
	)
}

var remoteAnswer = agent.ToolAnswer{Result: *harness.TextResult("the host ran it"), Usage: harness.Usage{InputTokens: 300, OutputTokens: 40}}

// An external call pauses the turn after the step's other calls; the
// host's answer is the call's result, its spend the session's, and the
// same turn goes on. Answers that do not fit are refused with nothing
// logged.
func TestExternalToolPausesAndAnswerContinues(t *testing.T) {
	var ran atomic.Int64
	m := externalScript()
	store := sessionStore()
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithExternalTools("remote"),
		agent.WithStores(agent.Stores{Sessions: store}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingTool, end.Reason)
	assert.Len(t, ofType[*agent.ToolCallEnd](evs), 1, "the echo ran; the remote call waits")
	p := s.Paused()
	require.NotNil(t, p)
	assert.Equal(t, session.ReasonAwaitingTool, p.Reason)
	require.Len(t, p.Tools, 1)
	assert.Equal(t, "x1", p.Tools[0].ID)
	assert.Equal(t, "remote", p.Tools[0].Name)
	assert.JSONEq(t, `{"text":"there"}`, p.Tools[0].Arguments)
	before := len(must(store.Load(context.Background(), s.Header().ID)).Events)

	_, _, err = answerTurn(t, s, agent.Answers{Tools: map[string]agent.ToolAnswer{"zz": remoteAnswer}})
	assert.ErrorIs(t, err, agent.CodeNothingPending)
	_, _, err = answerTurn(t, s, agent.Answers{Tools: map[string]agent.ToolAnswer{}})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments, "every waiting call is answered at once")
	_, _, err = answerTurn(t, s, agent.Answers{Input: map[string][]string{"x1": {"no"}}})
	assert.ErrorIs(t, err, agent.CodeNothingPending, "answers of another kind")
	assert.Len(t, must(store.Load(context.Background(), s.Header().ID)).Events, before, "refused answers log nothing")

	evs, end, err = answerTurn(t, s, agent.Answers{Tools: map[string]agent.ToolAnswer{"x1": remoteAnswer}})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 2, end.Steps)
	assert.Zero(t, ran.Load(), "the loop never ran the external tool")
	res := toolResults(m.Requests()[1])
	require.Len(t, res, 2)
	assert.Equal(t, "echo: here", resultText(res[0]))
	assert.Equal(t, "the host ran it", resultText(res[1]))
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 1)
	assert.Equal(t, "x1", ends[0].Call.ID)
	assert.Nil(t, s.Paused())
	assert.Equal(t, int64(100+200+300), s.Usage().InputTokens, "the external call's spend is the session's")
	assert.Equal(t, int64(10+10+40), s.Usage().OutputTokens)
}

// The pause outlives the session: resumed from the log, it still waits
// for the external call, and its answer continues the turn; the spend
// the answer brought is rebuilt from the log by the next resume.
func TestExternalToolAnsweredAfterResume(t *testing.T) {
	var ran atomic.Int64
	store := sessionStore()
	opts := func(m *replay.Model) []agent.Option {
		return []agent.Option{agent.WithModel(m), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithExternalTools("remote"),
			agent.WithStores(agent.Stores{Sessions: store})}
	}
	loop, s := newSession(t, opts(replay.NewScripted(replay.Response{ToolCalls: []harness.ToolCall{
		replay.ToolCall("e1", "echo", echoIn{Text: "here"}),
		replay.ToolCall("x1", "remote", echoIn{Text: "there"}),
	}, Usage: usage(100, 10)}))...)
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingTool, end.Reason)
	id := s.Header().ID
	require.NoError(t, s.Close())
	require.NoError(t, loop.Close())

	m := replay.NewScripted(replay.Response{Text: "both done", Usage: usage(200, 10)})
	_, s2 := resumeSession(t, id, opts(m)...)
	assert.Empty(t, s2.Warnings(), "a paused session resumes without repairs")
	assert.False(t, s2.Interrupted())
	p := s2.Paused()
	require.NotNil(t, p, "the pause is restored from the log")
	assert.Equal(t, session.ReasonAwaitingTool, p.Reason)
	require.Len(t, p.Tools, 1)
	assert.Equal(t, "x1", p.Tools[0].ID)
	_, end, err = answerTurn(t, s2, agent.Answers{Tools: map[string]agent.ToolAnswer{"x1": remoteAnswer}})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	res := toolResults(m.Requests()[0])
	require.Len(t, res, 2)
	assert.Equal(t, "the host ran it", resultText(res[1]))
	assert.Zero(t, ran.Load())
	require.NoError(t, s2.Close())

	_, s3 := resumeSession(t, id, opts(replay.NewScripted())...)
	assert.Equal(t, int64(100+300+200), s3.Usage().InputTokens, "the external spend is rebuilt from the log")
	assert.Nil(t, s3.Paused())
}

// A strict replay of a session with an external call reproduces it: the
// same pause, and with the same answer the same requests, no drift.
func TestExternalToolStrictReplay(t *testing.T) {
	var ran atomic.Int64
	store := sessionStore()
	m := externalScript()
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithExternalTools("remote"),
		agent.WithStores(agent.Stores{Sessions: store}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingTool, end.Reason)
	_, end, err = answerTurn(t, s, agent.Answers{Tools: map[string]agent.ToolAnswer{"x1": remoteAnswer}})
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)

	rm, err := replay.NewStrict(tr)
	require.NoError(t, err)
	_, rs := newSession(t, agent.WithModel(rm), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithExternalTools("remote"))
	_, end, err = collect(t, rs, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingTool, end.Reason)
	evs, end, err := answerTurn(t, rs, agent.Answers{Tools: map[string]agent.ToolAnswer{"x1": remoteAnswer}})
	require.NoError(t, err, "no drift")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	var text string
	for _, d := range ofType[*agent.TextDelta](evs) {
		text += d.Text
	}
	assert.Equal(t, "both done", text)
	assert.Equal(t, s.Usage(), rs.Usage(), "the replay spends what the recording did")
	assert.Zero(t, ran.Load())
}

// The spend an answer brings counts against the session's budget: the
// next model call waits for a raise.
func TestExternalSpendCountsAgainstTheBudget(t *testing.T) {
	var ran atomic.Int64
	m := externalScript()
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithExternalTools("remote"),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{Session: agent.Budget{Tokens: 400}}}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingTool, end.Reason)
	evs, end, err := answerTurn(t, s, agent.Answers{Tools: map[string]agent.ToolAnswer{"x1": remoteAnswer}})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingBudget, end.Reason, "110 spent by the model and 340 by the host pass 400")
	br := ofType[*agent.BudgetReached](evs)
	require.Len(t, br, 1)
	assert.Equal(t, int64(110+340), br[0].Spend.SessionTokens)
	assert.Len(t, m.Requests(), 1, "the second model call waits")
}

// A cancelled turn never hands its external calls to the host: they are
// logged not run.
func TestExternalToolNotHandedOverWhenCancelled(t *testing.T) {
	var ran atomic.Int64
	m := externalScript()
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithExternalTools("remote"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var end *agent.TurnEnd
	for ev := range s.Run(ctx, "go") {
		if _, ok := ev.(*agent.ToolCallStart); ok {
			cancel()
		}
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCancelled, end.Reason)
	assert.Nil(t, s.Paused())
	assert.Zero(t, ran.Load())
}

// OpenTask runs a task call outside its parent's turn: the child
// session, named after the parent and the call, runs the sub-agent with
// its type's tools, and its answer and spend answer the parent's call.
// Opening the task again finds the same session and its ended turn.
func TestOpenTaskRunsTheSubAgentOutsideTheTurn(t *testing.T) {
	var ran atomic.Int64
	store := sessionStore()
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("t1", "task", map[string]any{"agent": "helper", "description": "echo it", "prompt": "echo hi"})}, Usage: usage(100, 10)},
		// The child's two calls.
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", echoIn{Text: "hi"})}, Usage: usage(50, 5)},
		replay.Response{Text: "the child says hi", Usage: usage(60, 5)},
		// The parent's answer.
		replay.Response{Text: "done", Usage: usage(200, 10)},
	)
	loop, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool(), remoteTool(&ran)), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "helper", Description: "Echoes.", Tools: []string{"echo"}}}}),
		agent.WithExternalTools("task"))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingTool, end.Reason)
	call := s.Paused().Tools[0]

	ctx := context.Background()
	task, err := loop.OpenTask(ctx, s.Header().ID, call)
	require.NoError(t, err)
	require.Nil(t, task.Refused)
	assert.Equal(t, agent.TaskSessionID(s.Header().ID, "t1"), task.Session.Header().ID)
	assert.Equal(t, s.Header().ID, task.Session.Header().Parent)
	assert.Equal(t, "t1", task.Session.Header().ParentCall)
	assert.Equal(t, "echo hi", task.Prompt)
	var cend *agent.TurnEnd
	for ev := range task.Session.Run(ctx, task.Prompt) {
		if te, ok := ev.(*agent.TurnEnd); ok {
			cend = te
		}
	}
	require.NotNil(t, cend)
	assert.Equal(t, session.ReasonCompleted, cend.Reason)
	childReq := m.Requests()[1]
	var names []string
	for _, sp := range childReq.Tools {
		names = append(names, sp.Name)
	}
	assert.Equal(t, []string{"echo"}, names, "the child has its type's tools only")
	ans := task.Answer(cend)
	assert.Equal(t, "the child says hi", resultText(&ans.Result))
	assert.Equal(t, int64(50+60), ans.Usage.InputTokens)
	require.NoError(t, task.Close())

	again, err := loop.OpenTask(ctx, s.Header().ID, call)
	require.NoError(t, err)
	assert.Equal(t, 1, again.Session.Turns(), "the same session, its turn not run again")
	assert.Equal(t, "the child says hi", resultText(&[]agent.ToolAnswer{again.Answer(cend)}[0].Result))
	require.NoError(t, again.Close())

	_, end, err = answerTurn(t, s, agent.Answers{Tools: map[string]agent.ToolAnswer{call.ID: ans}})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, "the child says hi", resultText(toolResults(m.Requests()[3])[0]))
	assert.Equal(t, int64(100+110+200), s.Usage().InputTokens, "the child's spend is the parent session's")

	// A call the plain loop would refuse is refused here too, without a
	// child.
	bad := harness.ToolCall{ID: "t2", Name: "task", Arguments: `{"agent":"nobody","description":"x","prompt":"y"}`}
	refused, err := loop.OpenTask(ctx, s.Header().ID, bad)
	require.NoError(t, err)
	require.NotNil(t, refused.Refused)
	assert.Nil(t, refused.Session)
	assert.Equal(t, harness.CodeInvalidArguments, refused.Refused.Result.Code)
	assert.Contains(t, resultText(&refused.Refused.Result), `no agent type "nobody"`)
	require.NoError(t, refused.Close())
}
