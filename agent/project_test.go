package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// contextFunc is a ContextSource made of a function.
type contextFunc func(ctx context.Context, q agent.ContextQuery) ([]session.ContextFile, error)

func (f contextFunc) Context(ctx context.Context, q agent.ContextQuery) ([]session.ContextFile, error) {
	return f(ctx, q)
}

func part(path, text string) session.ContextFile {
	return session.ContextFile{Path: path, Kind: "test", Text: text, Bytes: int64(len(text))}
}

func contextLogs(t *testing.T, store session.Store, id string) []*session.ContextLoaded {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	var out []*session.ContextLoaded
	for _, e := range tr.Events {
		if c, ok := e.Data.(*session.ContextLoaded); ok {
			out = append(out, c)
		}
	}
	return out
}

func TestAFailingContextSourceKeepsTheLoggedContext(t *testing.T) {
	var turn atomic.Int32
	src := contextFunc(func(ctx context.Context, q agent.ContextQuery) ([]session.ContextFile, error) {
		turn.Store(int32(q.Turn))
		switch q.Turn {
		case 1:
			return []session.ContextFile{part("a", "rules A"), {Path: "b", Text: "rules B", Digest: "sha256:forged"}}, nil
		case 2:
			return nil, errors.New("the disk is gone")
		case 3:
			panic("a broken source")
		}
		return []session.ContextFile{part("a", "rules A2")}, nil
	})
	store := session.NewMemory(session.StoreConfig{})
	m := replay.NewScripted(replay.Response{Text: "1"}, replay.Response{Text: "2"}, replay.Response{Text: "3"}, replay.Response{Text: "4"})
	_, s := newSession(t, agent.WithModel(m), agent.WithSystemPrompt("sys"), agent.WithStores(agent.Stores{Sessions: store}), agent.WithContext(src))
	for i := range 4 {
		_, end, err := collect(t, s, context.Background(), "go")
		require.NoError(t, err, "turn %d", i+1)
		require.Equal(t, session.ReasonCompleted, end.Reason)
	}
	reqs := m.Requests()
	assert.Equal(t, "sys\n\nrules A\n\nrules B", reqs[0].System)
	assert.Equal(t, reqs[0].System, reqs[1].System, "a failing source keeps the logged context")
	assert.Equal(t, reqs[0].System, reqs[2].System, "so does a panicking one")
	assert.Equal(t, "sys\n\nrules A2", reqs[3].System)
	logs := contextLogs(t, store, s.Header().ID)
	require.Len(t, logs, 2)
	assert.Equal(t, session.DigestText("rules B"), logs[0].Files[1].Digest, "the loop sets the digest itself")
	assert.Equal(t, int32(4), turn.Load())
}

// The project context is part of the prefix: pruning and compaction
// never cut it, and the summary request keeps it.
func TestCompactionKeepsTheContext(t *testing.T) {
	llm := sixReads()
	src := contextFunc(func(context.Context, agent.ContextQuery) ([]session.ContextFile, error) {
		return []session.ContextFile{part("AGENTS.md", "PROJECT RULES")}, nil
	})
	var compacted []int
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(fakeRead()), agent.WithContext(src),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.5, CompactAt: 0.6, KeepRecent: 0.3}),
		agent.WithLifecycle(agent.Lifecycle{Compact: func(ctx context.Context, info agent.CompactInfo) {
			compacted = append(compacted, info.Step)
			assert.Equal(t, "auto", info.Trigger)
		}}))
	evs, end, err := collect(t, s, context.Background(), "read the files")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	comp := ofType[*agent.ContextCompacted](evs)
	require.NotEmpty(t, comp)
	assert.Len(t, compacted, len(comp), "Compact is called before each compaction")
	for i, r := range llm.Requests() {
		assert.True(t, strings.HasSuffix(r.System, "PROJECT RULES") || strings.HasPrefix(r.System, "You compress"), "request %d: %.60q", i, r.System)
	}
}

func TestLifecycle(t *testing.T) {
	var calls []string
	h := agent.Lifecycle{
		SessionStart: func(ctx context.Context, info agent.SessionInfo) agent.Verdict {
			calls = append(calls, "start")
			return agent.Verdict{Context: "started"}
		},
		Prompt: func(ctx context.Context, info agent.PromptInfo) agent.Verdict {
			calls = append(calls, "prompt:"+info.Prompt)
			if strings.Contains(info.Prompt, "forbidden") {
				return agent.Verdict{Block: true, Reason: "not that"}
			}
			return agent.Verdict{Context: "noted: " + info.Prompt}
		},
		Stop: func(ctx context.Context, info agent.StopInfo) agent.Verdict {
			calls = append(calls, "stop")
			if !info.Active {
				return agent.Verdict{Block: true, Reason: "check your work"}
			}
			return agent.Verdict{}
		},
		SessionEnd: func(ctx context.Context, info agent.SessionInfo) { calls = append(calls, "end") },
	}
	panicky := agent.Lifecycle{Prompt: func(context.Context, agent.PromptInfo) agent.Verdict { panic("boom") }}
	store := session.NewMemory(session.StoreConfig{})
	m := replay.NewScripted(replay.Response{Text: "first"}, replay.Response{Text: "checked"}, replay.Response{Text: "again"}, replay.Response{Text: "checked again"})
	loop, s := newSession(t, agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store}), agent.WithLifecycle(h), agent.WithLifecycle(panicky))

	_, end, err := collect(t, s, context.Background(), "hello")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	reqs := m.Requests()
	require.Len(t, reqs, 2, "Stop kept the turn going once")
	texts := func(msgs []harness.Message) []string {
		var out []string
		for _, m := range msgs {
			out = append(out, m.Text())
		}
		return out
	}
	assert.Equal(t, []string{"<system-reminder>\nstarted\n</system-reminder>", "hello", "<system-reminder>\nnoted: hello\n</system-reminder>"}, texts(reqs[0].Messages))
	assert.Equal(t, "<system-reminder>\ncheck your work\n</system-reminder>", texts(reqs[1].Messages)[4])

	_, end, err = collect(t, s, context.Background(), "something forbidden")
	require.Error(t, err)
	assert.Equal(t, agent.ReasonBlocked, end.Reason)
	assert.ErrorIs(t, err, harness.Code("prompt_blocked"))
	assert.Contains(t, err.Error(), "not that")
	assert.Len(t, m.Requests(), 2, "a refused prompt calls no model")
	for _, msg := range s.Messages() {
		assert.NotContains(t, msg.Text(), "forbidden", "nor enters the history")
	}

	_, _, err = collect(t, s, context.Background(), "again")
	require.NoError(t, err)
	require.NoError(t, loop.Close())
	assert.Equal(t, []string{"start", "prompt:hello", "stop", "stop", "prompt:something forbidden", "prompt:again", "stop", "stop", "end"}, calls, "SessionStart once, SessionEnd at Close")
}

// A Stop call that always blocks is bounded by the step limit.
func TestAStopThatNeverLetsGoHitsTheStepLimit(t *testing.T) {
	var responses []replay.Response
	for range 5 {
		responses = append(responses, replay.Response{Text: "done?"})
	}
	m := replay.NewScripted(responses...)
	_, s := newSession(t, agent.WithModel(m), agent.WithLimits(agent.Limits{MaxSteps: 3}),
		agent.WithLifecycle(agent.Lifecycle{Stop: func(context.Context, agent.StopInfo) agent.Verdict {
			return agent.Verdict{Block: true, Reason: "keep going"}
		}}))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonStepLimit, end.Reason)
	assert.Len(t, m.Requests(), 3)
}

// A blocked prompt leaves a paused turn paused.
func TestABlockedPromptKeepsThePause(t *testing.T) {
	pol, err := permission.New(permission.Rules{Home: "/home/u"})
	require.NoError(t, err)
	side := tools.Define(tools.Spec{Name: "touch", Description: "touch", SideEffects: true},
		func(ctx context.Context, call *tools.Call, _ struct{}) (*harness.ToolResult, error) {
			return harness.TextResult("ok"), nil
		})
	m := replay.NewScripted(replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "touch", map[string]any{})}}, replay.Response{Text: "done"})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(side), agent.WithPermissions(pol),
		agent.WithLifecycle(agent.Lifecycle{Prompt: func(ctx context.Context, info agent.PromptInfo) agent.Verdict {
			return agent.Verdict{Block: info.Prompt == "no"}
		}}))
	_, end, _ := collect(t, s, context.Background(), "touch it")
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	_, end, _ = collect(t, s, context.Background(), "no")
	assert.Equal(t, agent.ReasonBlocked, end.Reason)
	require.Len(t, s.Pending(), 1, "the question still waits")
	var last *agent.TurnEnd
	for ev := range s.Resolve(context.Background(), map[string]permission.Answer{"c1": {Allow: true}}) {
		if te, ok := ev.(*agent.TurnEnd); ok {
			last = te
		}
	}
	require.NotNil(t, last)
	assert.Equal(t, session.ReasonCompleted, last.Reason, "%v", last.Err)
}

func TestRecheckAndConfirmOutsideTheLoopRefuse(t *testing.T) {
	call := &tools.Call{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}
	res := agent.Recheck(context.Background(), call)
	require.NotNil(t, res)
	assert.Equal(t, harness.CodeDenied, res.Code)
	res = agent.Confirm(context.Background(), call, "a hook asks")
	require.NotNil(t, res)
	assert.Equal(t, harness.CodeDenied, res.Code)
	err := agent.LogHookRun(context.Background(), &session.HookRun{Event: "Stop"})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments)
}
