package turns_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/examples/temporal/internal/effect"
	"github.com/go-harness/harness/examples/temporal/internal/fakemodel"
	"github.com/go-harness/harness/examples/temporal/turns"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// fixture is a memory store, the fake model behind the real adapter and
// the record_effect tool writing to a file of the test.
type fixture struct {
	acts    *turns.Activities
	store   session.Store
	effects string
}

func newFixture(t *testing.T, store session.Store) *fixture {
	t.Helper()
	srv := httptest.NewServer(fakemodel.Handler())
	t.Cleanup(srv.Close)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "unused", Model: fakemodel.Model})
	require.NoError(t, err)
	effects := filepath.Join(t.TempDir(), "effects")
	reg, err := tools.NewRegistry(effect.Tool(effects))
	require.NoError(t, err)
	if store == nil {
		store = session.NewMemory(session.StoreConfig{})
	}
	return &fixture{acts: &turns.Activities{Store: store, Model: m, Tools: reg, Cwd: "/ws"}, store: store, effects: effects}
}

// lines returns the effects file's lines.
func (f *fixture) lines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(f.effects)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(strings.ReplaceAll(string(b), "\n", " | "))
}

func (f *fixture) effectCount(t *testing.T) int {
	b, err := os.ReadFile(f.effects)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

func (f *fixture) events(t *testing.T, id string) []session.Event {
	t.Helper()
	tr, err := f.store.Load(context.Background(), id)
	require.NoError(t, err)
	return tr.Events
}

func (f *fixture) activityEnv(s *testsuite.WorkflowTestSuite) *testsuite.TestActivityEnvironment {
	s.SetLogger(quiet{})
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(f.acts.AppendUser, activity.RegisterOptions{Name: turns.ActAppendUser})
	env.RegisterActivityWithOptions(f.acts.ModelStep, activity.RegisterOptions{Name: turns.ActModelStep})
	env.RegisterActivityWithOptions(f.acts.ToolCall, activity.RegisterOptions{Name: turns.ActToolCall})
	env.RegisterActivityWithOptions(f.acts.EndTurn, activity.RegisterOptions{Name: turns.ActEndTurn})
	return env
}

// firstStep logs turn 1 of session id with prompt and its first model
// answer, through the activities, and returns the answer's calls.
func firstStep(t *testing.T, env *testsuite.TestActivityEnvironment, id, prompt string) []harness.ToolCall {
	t.Helper()
	_, err := env.ExecuteActivity(turns.ActAppendUser, turns.TurnInput{SessionID: id, Turn: 1, Prompt: prompt})
	require.NoError(t, err)
	v, err := env.ExecuteActivity(turns.ActModelStep, turns.StepInput{SessionID: id, Turn: 1, Step: 1})
	require.NoError(t, err)
	var sr turns.StepResult
	require.NoError(t, v.Get(&sr))
	require.NotEmpty(t, sr.Calls)
	return sr.Calls
}

func appendTo(t *testing.T, store session.Store, id string, ps ...session.Payload) {
	t.Helper()
	l, _, err := store.Open(context.Background(), id)
	require.NoError(t, err)
	_, err = l.Append(context.Background(), ps...)
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

func callTool(t *testing.T, env *testsuite.TestActivityEnvironment, id string, i int, c harness.ToolCall) turns.CallResult {
	t.Helper()
	v, err := env.ExecuteActivity(turns.ActToolCall, turns.CallInput{SessionID: id, Turn: 1, Step: 1, Index: i, Call: c})
	require.NoError(t, err)
	var cr turns.CallResult
	require.NoError(t, v.Get(&cr))
	return cr
}

// finished returns the logged ToolFinished events of a call.
func finished(events []session.Event, callID string) []*session.ToolFinished {
	var out []*session.ToolFinished
	for _, e := range events {
		if f, ok := e.Data.(*session.ToolFinished); ok && f.CallID == callID {
			out = append(out, f)
		}
	}
	return out
}

func TestToolCallStartedNotEndedIsOutcomeUnknown(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	calls := firstStep(t, env, "s1", "effects=1 steps=1 sleep=0")
	c := calls[0]
	// A worker logged the start and died before the end.
	appendTo(t, f.store, "s1", &session.ToolStarted{Step: 1, CallID: c.ID, Name: c.Name})

	for range 2 { // a second retry finds the end the first logged
		cr := callTool(t, env, "s1", 0, c)
		assert.Equal(t, harness.CodeOutcomeUnknown, cr.Code)
		assert.True(t, cr.IsError)
		assert.False(t, cr.Ran, "a call whose start was logged is never run again")
	}
	assert.Zero(t, f.effectCount(t), "the tool did not run")
	fs := finished(f.events(t, "s1"), c.ID)
	require.Len(t, fs, 1, "the outcome is logged once")
	assert.Equal(t, harness.CodeOutcomeUnknown, fs[0].Result.Code)
	assert.Contains(t, fs[0].Result.Text(), "outcome of this record_effect call is unknown")
}

func TestToolCallEndedReturnsLoggedResult(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	c := firstStep(t, env, "s1", "effects=1 steps=1 sleep=0")[0]
	logged := harness.ErrorResult(harness.CodeToolFailed, "the logged failure")
	appendTo(t, f.store, "s1",
		&session.ToolStarted{Step: 1, CallID: c.ID, Name: c.Name},
		&session.ToolFinished{Step: 1, CallID: c.ID, Name: c.Name, Result: *logged})

	cr := callTool(t, env, "s1", 0, c)
	assert.Equal(t, turns.CallResult{CallID: c.ID, Name: c.Name, IsError: true, Code: harness.CodeToolFailed}, cr)
	assert.Zero(t, f.effectCount(t), "the tool did not run")
	assert.Len(t, finished(f.events(t, "s1"), c.ID), 1, "nothing more was logged")
}

func TestToolCallRunsOnce(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	calls := firstStep(t, env, "s1", "effects=2 steps=1 sleep=0")
	require.Len(t, calls, 2)
	first := callTool(t, env, "s1", 0, calls[0])
	assert.True(t, first.Ran)
	assert.False(t, first.IsError)
	again := callTool(t, env, "s1", 0, calls[0])
	assert.False(t, again.Ran, "a retry after the end returns the logged result")
	assert.Equal(t, []string{"s1", calls[0].ID, "|"}, f.lines(t))

	// A call the logged answer does not hold is refused for good.
	_, err := env.ExecuteActivity(turns.ActToolCall, turns.CallInput{SessionID: "s1", Turn: 1, Step: 1, Call: harness.ToolCall{ID: "other", Name: "record_effect"}})
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.NonRetryable())
	assert.Contains(t, ae.Error(), "has no call other")
}

func TestModelStepLoggedIsNotCalledAgain(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	calls := firstStep(t, env, "s1", "effects=1 steps=1 sleep=0")
	// A model that fails every call: a logged step must not reach it.
	f.acts.Model = failingModel(t)
	v, err := env.ExecuteActivity(turns.ActModelStep, turns.StepInput{SessionID: "s1", Turn: 1, Step: 1})
	require.NoError(t, err)
	var sr turns.StepResult
	require.NoError(t, v.Get(&sr))
	assert.Equal(t, calls, sr.Calls)
	n := 0
	for _, e := range f.events(t, "s1") {
		if _, ok := e.Data.(*session.AssistantMessage); ok {
			n++
		}
	}
	assert.Equal(t, 1, n, "one answer logged")
}

func TestAppendUserIsIdempotent(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	in := turns.TurnInput{SessionID: "s1", Turn: 1, Prompt: "hello"}
	for range 2 {
		_, err := env.ExecuteActivity(turns.ActAppendUser, in)
		require.NoError(t, err)
	}
	h := new(session.History).Add(f.events(t, "s1")...)
	assert.Equal(t, 1, h.Turns())

	_, err := env.ExecuteActivity(turns.ActAppendUser, turns.TurnInput{SessionID: "s1", Turn: 1, Prompt: "another"})
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.NonRetryable())
	assert.Contains(t, ae.Error(), "logged with another prompt")
	_, err = env.ExecuteActivity(turns.ActAppendUser, turns.TurnInput{SessionID: "s1", Turn: 3, Prompt: "early"})
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, ae.Error(), "turn 3 cannot start before turn 2")
}

func runWorkflow(t *testing.T, f *fixture, in turns.TurnInput) turns.TurnResult {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet{})
	env := s.NewTestWorkflowEnvironment()
	f.acts.Register(env)
	env.ExecuteWorkflow(turns.WorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res turns.TurnResult
	require.NoError(t, env.GetWorkflowResult(&res))
	return res
}

func TestWorkflowTurn(t *testing.T) {
	f := newFixture(t, nil)
	res := runWorkflow(t, f, turns.TurnInput{SessionID: "s1", Turn: 1, Prompt: "effects=2 steps=2 sleep=0"})
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	assert.Equal(t, 3, res.Steps)
	assert.Equal(t, "done: 4 results, 0 outcome unknown", res.Answer)
	require.Len(t, res.Calls, 4)
	for _, c := range res.Calls {
		assert.True(t, c.Ran)
		assert.False(t, c.IsError)
	}
	assert.Equal(t, 4, f.effectCount(t))

	var types []string
	for _, e := range f.events(t, "s1") {
		types = append(types, e.Type())
	}
	assert.Equal(t, strings.Fields("user model_request assistant tool_start tool_result tool_start tool_result "+
		"model_request assistant tool_start tool_result tool_start tool_result model_request assistant turn_end"), types)

	res = runWorkflow(t, f, turns.TurnInput{SessionID: "s1", Turn: 2, Prompt: "thanks"})
	assert.Equal(t, "You said: thanks", res.Answer)
	h := new(session.History).Add(f.events(t, "s1")...)
	assert.Equal(t, 2, h.Turns())
	end, _ := h.Repair()
	assert.Nil(t, end, "the last turn ended: nothing to repair")

	// The log is an ordinary session log: the plain loop resumes it with
	// nothing to repair and goes on with a third turn.
	loop, err := agent.New(agent.WithModel(f.acts.Model), agent.WithTools(effect.Tool(f.effects)), agent.WithStores(agent.Stores{Sessions: f.store}))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.ResumeSession(context.Background(), "s1")
	require.NoError(t, err)
	assert.Empty(t, sess.Warnings())
	assert.Len(t, sess.Messages(), len(h.Messages()))
	var answer string
	for ev, err := range sess.Run(context.Background(), "and now?") {
		require.NoError(t, err)
		if d, ok := ev.(*agent.TextDelta); ok {
			answer += d.Text
		}
	}
	assert.Equal(t, "You said: and now?", answer)
	require.NoError(t, sess.Close())
}

// TestWorkflowResumesCutOffTurn runs the workflow on a log that a dead
// worker left mid-call: the call is reported as outcome unknown, the
// other runs, and the model is told.
func TestWorkflowResumesCutOffTurn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	calls := firstStep(t, env, "s1", "effects=2 steps=1 sleep=0")
	appendTo(t, f.store, "s1", &session.ToolStarted{Step: 1, CallID: calls[0].ID, Name: calls[0].Name})

	res := runWorkflow(t, f, turns.TurnInput{SessionID: "s1", Turn: 1, Prompt: "effects=2 steps=1 sleep=0"})
	assert.Equal(t, "done: 2 results, 1 outcome unknown", res.Answer)
	require.Len(t, res.Calls, 2)
	assert.Equal(t, harness.CodeOutcomeUnknown, res.Calls[0].Code)
	assert.False(t, res.Calls[0].Ran)
	assert.True(t, res.Calls[1].Ran)
	assert.Equal(t, []string{"s1", calls[1].ID, "|"}, f.lines(t), "only the call that had not started ran")
	assert.Equal(t, 1, new(session.History).Add(f.events(t, "s1")...).Turns())
}

// TestToolCallCutOffIsOutcomeUnknown: a side-effecting call whose
// activity ends while it runs is logged as outcome unknown, not as a
// plain failure that would say it did nothing.
func TestToolCallCutOffIsOutcomeUnknown(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := newFixture(t, nil)
	env := f.activityEnv(&s)
	c := firstStep(t, env, "s1", "effects=1 steps=1 sleep=60000")[0]
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	_, err := env.ExecuteActivity(turns.ActToolCall, turns.CallInput{SessionID: "s1", Turn: 1, Step: 1, Call: c})
	require.Error(t, err, "the attempt timed out")
	fs := finished(f.events(t, "s1"), c.ID)
	require.Len(t, fs, 1, "its result is logged all the same")
	assert.Equal(t, harness.CodeOutcomeUnknown, fs[0].Result.Code)
	assert.Contains(t, fs[0].Result.Text(), "cut off while it ran")

	env = f.activityEnv(&s)
	cr := callTool(t, env, "s1", 0, c)
	assert.Equal(t, harness.CodeOutcomeUnknown, cr.Code)
	assert.False(t, cr.Ran, "the retry returns the logged result")
}
