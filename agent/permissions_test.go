package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

type markIn struct {
	Text string `json:"text" jsonschema:"what to write"`
}

// markTool appends its text to a file, one line per run, so a test can
// count how often it ran, in any process.
func markTool(file string) tools.Tool {
	return tools.Define(tools.Spec{Name: "mark", Description: "Append a line to the marks file.", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in markIn) (*harness.ToolResult, error) {
			f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if _, err := fmt.Fprintln(f, in.Text); err != nil {
				return nil, err
			}
			return harness.TextResult("marked " + in.Text), nil
		})
}

func marks(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

func policy(t *testing.T, r permission.Rules) *permission.Policy {
	t.Helper()
	p, err := permission.New(r)
	require.NoError(t, err)
	return p
}

func logEvents(t *testing.T, store session.Store, id string) []session.Event {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	return tr.Events
}

func ofPayload[T session.Payload](evs []session.Event) []T {
	var out []T
	for _, e := range evs {
		if p, ok := e.Data.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

func TestPermissionDenyByRule(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	m := replay.NewScripted(replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "a"})), replay.Response{Text: "ok"})
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file)), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithPermissions(policy(t, permission.Rules{Allow: []string{"mark"}, Deny: []string{"mark"}})))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Empty(t, marks(t, file), "a denied call never runs")
	res := toolResults(m.Requests()[1])[0]
	assert.Equal(t, harness.CodeDenied, res.Code)
	assert.Contains(t, resultText(res), "denied by the rule mark")
	assert.Contains(t, resultText(res), "Do not retry the same call")
	dec := ofType[*agent.PermissionDecision](evs)
	require.Len(t, dec, 1)
	assert.Equal(t, permission.Deny, dec[0].Outcome)
	assert.Equal(t, "rule", dec[0].By)
	logged := ofPayload[*session.PermissionDecided](logEvents(t, store, s.Header().ID))
	require.Len(t, logged, 1)
	assert.Equal(t, "deny", logged[0].Outcome)
	assert.Equal(t, "mark", logged[0].Rule)
}

func TestPermissionSynchronousApprover(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "one"}), replay.ToolCall("c2", "mark", map[string]any{"text": "two"})),
		replay.Call(replay.ToolCall("c3", "mark", map[string]any{"text": "three"})),
		replay.Response{Text: "done"})
	var asked []permission.Request
	approver := func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		asked = append(asked, req)
		switch req.Call.ID {
		case "c1":
			return permission.Answer{Allow: true}, nil
		case "c2":
			return permission.Answer{Feedback: "not that one"}, nil
		}
		return permission.Answer{Allow: true, Remember: "mark"}, nil
	}
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file)), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithPermissions(policy(t, permission.Rules{})), agent.WithApprover(approver))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, []string{"one", "three"}, marks(t, file))
	require.Len(t, asked, 3)
	assert.Equal(t, "mark", asked[0].Call.Name)
	assert.Contains(t, asked[0].Decision.Reason, "no rule allows")
	res := toolResults(m.Requests()[1])
	assert.Equal(t, "marked one", resultText(res[0]))
	assert.Equal(t, harness.CodeDenied, res[1].Code)
	assert.Contains(t, resultText(res[1]), "The user denied it")
	assert.Contains(t, resultText(res[1]), `"not that one"`)

	// The remembered rule allows the next call without asking.
	m.Push(replay.Call(replay.ToolCall("c4", "mark", map[string]any{"text": "four"})), replay.Response{Text: "done"})
	_, _, err = collect(t, s, context.Background(), "again")
	require.NoError(t, err)
	assert.Len(t, asked, 3, "the remembered rule answered")
	assert.Equal(t, []string{"one", "three", "four"}, marks(t, file))
	logged := ofPayload[*session.PermissionDecided](logEvents(t, store, s.Header().ID))
	require.Len(t, logged, 4)
	assert.Equal(t, []string{"user", "user", "user", "rule"}, []string{logged[0].By, logged[1].By, logged[2].By, logged[3].By})
	assert.Equal(t, "mark", logged[2].Remember)
}

func TestPermissionPlanMode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	m := replay.NewScripted(replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "a"}), replay.ToolCall("c2", "echo", map[string]any{"text": "b"})), replay.Response{Text: "plan"})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file), echoTool()),
		agent.WithPermissions(policy(t, permission.Rules{Allow: []string{"mark"}, Mode: permission.ModePlan})))
	_, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Empty(t, marks(t, file))
	first := m.Requests()[0].Messages
	assert.Contains(t, first[len(first)-1].Text(), "Plan mode is on", "the model is told it is planning")
	res := toolResults(m.Requests()[1])
	assert.Equal(t, harness.CodeDenied, res[0].Code)
	assert.Contains(t, resultText(res[0]), "plan mode is read-only")
	assert.Equal(t, "echo: b", resultText(res[1]), "calls without side effects run")
}

// pauseHelperEnv makes the test binary act as the first process of the
// durable pause test: it runs a turn until it pauses, and exits 3.
const pauseHelperEnv = "HARNESS_TEST_PAUSE_HELPER"

func pauseScript() *replay.Model {
	return replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "approved"}), replay.ToolCall("c2", "mark", map[string]any{"text": "denied"}), replay.ToolCall("c3", "echo", map[string]any{"text": "free"})),
		replay.Response{Text: "all done"})
}

func TestPauseHelperProcess(t *testing.T) {
	dir := os.Getenv(pauseHelperEnv)
	if dir == "" {
		t.Skip("run by TestDurablePauseAcrossProcesses")
	}
	ctx := context.Background()
	loop, err := agent.New(agent.WithModel(pauseScript()), agent.WithTools(markTool(filepath.Join(dir, "marks")), echoTool()),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})}), agent.WithPermissions(policy(t, permission.Rules{})))
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{ID: "paused", Cwd: "/proj"})
	require.NoError(t, err)
	_, end, err := collect(t, s, ctx, "do it")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	require.NoError(t, loop.Close())
	os.Exit(3)
}

func TestDurablePauseAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPauseHelperProcess$")
	cmd.Env = append(os.Environ(), pauseHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "output: %s", out)
	require.Equal(t, 3, exit.ExitCode(), "the first process paused and exited: %s", out)
	assert.Empty(t, marks(t, filepath.Join(dir, "marks")), "nothing ran before the answers")

	// A new process (this one) resumes the session from its JSONL log.
	ctx := context.Background()
	store := session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})
	// The model's first answer was given to the first process.
	m2 := replay.NewScripted(replay.Response{Text: "all done"})
	loop, err := agent.New(agent.WithModel(m2), agent.WithTools(markTool(filepath.Join(dir, "marks")), echoTool()),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithPermissions(policy(t, permission.Rules{})))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.ResumeSession(ctx, "paused")
	require.NoError(t, err)
	pending := s.Pending()
	require.Len(t, pending, 2, "the two mark calls wait; echo has no side effects")
	assert.Equal(t, "c1", pending[0].Call.ID)
	assert.Equal(t, "c2", pending[1].Call.ID)
	assert.Contains(t, pending[0].Decision.Reason, "no rule allows")

	// A wrong answer set changes nothing.
	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true}}))
	assert.Equal(t, harness.CodeInvalidArguments, harness.CodeOf(err))
	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true}, "c2": {}, "zz": {}}))
	assert.Equal(t, agent.CodeNothingPending, harness.CodeOf(err))

	evs, err := runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true}, "c2": {Feedback: "skip that"}}))
	require.NoError(t, err)
	end := evs[len(evs)-1].(*agent.TurnEnd)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, []string{"approved"}, marks(t, filepath.Join(dir, "marks")), "the approved call ran exactly once; the denied one never")
	require.Len(t, m2.Requests(), 1, "the model is called next")
	res := toolResults(m2.Requests()[0])
	require.Len(t, res, 3)
	assert.Equal(t, "marked approved", resultText(res[0]))
	assert.Equal(t, harness.CodeDenied, res[1].Code)
	assert.Contains(t, resultText(res[1]), `"skip that"`)
	assert.Equal(t, "echo: free", resultText(res[2]))
	assert.Nil(t, s.Pending())

	// The log holds the question, who decided, and the turn's one user
	// message: the same turn continued.
	logged := logEvents(t, store, "paused")
	assert.Len(t, ofPayload[*session.UserMessage](logged), 1)
	require.Len(t, ofPayload[*session.ApprovalRequested](logged), 1)
	var by []string
	for _, d := range ofPayload[*session.PermissionDecided](logged) {
		by = append(by, d.CallID+":"+d.Outcome+":"+d.By)
	}
	assert.Equal(t, []string{"c3:allow:mode", "c1:allow:user", "c2:deny:user"}, by)
	ends := ofPayload[*session.TurnEnded](logged)
	require.Len(t, ends, 2)
	assert.Equal(t, session.ReasonAwaitingApproval, ends[0].Reason)
	assert.Equal(t, session.ReasonCompleted, ends[1].Reason)

	// Resolving again finds nothing.
	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true}}))
	assert.Equal(t, agent.CodeNothingPending, harness.CodeOf(err))
}

func TestPauseAbandonedByNewMessage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	m := replay.NewScripted(replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "a"})), replay.Response{Text: "fine"})
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(markTool(file)), agent.WithStores(agent.Stores{Sessions: store}), agent.WithPermissions(policy(t, permission.Rules{})))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	req := ofType[*agent.ApprovalRequest](evs)
	require.Len(t, req, 1)
	assert.Equal(t, "c1", req[0].Requests[0].Call.ID)
	require.Len(t, s.Pending(), 1)

	_, end, err = collect(t, s, context.Background(), "never mind")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Empty(t, marks(t, file))
	assert.Nil(t, s.Pending())
	msgs := m.Requests()[1].Messages
	var res *harness.ToolResult
	for _, msg := range msgs {
		for _, b := range msg.Content {
			if b.ToolResult != nil {
				res = b.ToolResult
			}
		}
	}
	require.NotNil(t, res)
	assert.Equal(t, harness.CodeNotRun, res.Code)
	assert.Contains(t, resultText(res), "waiting for approval when the user sent a new message")
	assert.Equal(t, "never mind", msgs[len(msgs)-1].Text())
}

func TestPauseRemembersRulesAcrossResume(t *testing.T) {
	file := filepath.Join(t.TempDir(), "marks")
	dir := t.TempDir()
	ctx := context.Background()
	m := replay.NewScripted(replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "a"})), replay.Response{Text: "ok"},
		replay.Call(replay.ToolCall("c2", "mark", map[string]any{"text": "b"})), replay.Response{Text: "ok"})
	opts := []agent.Option{agent.WithModel(m), agent.WithTools(markTool(file)), agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}), agent.WithPermissions(policy(t, permission.Rules{}))}
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true, Remember: "mark"}}))
	require.NoError(t, err)
	id := s.Header().ID
	require.NoError(t, loop.Close())

	_, s2 := resumeSession(t, id, opts...)
	_, end, err = collect(t, s2, ctx, "more")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "the remembered rule survives the resume")
	assert.Equal(t, []string{"a", "b"}, marks(t, file))
}

// runAll drains a turn's events and returns them with the TurnEnd's
// error.
func runAll(seq func(func(agent.Event, error) bool)) ([]agent.Event, error) {
	var evs []agent.Event
	var last error
	for ev, err := range seq {
		evs = append(evs, ev)
		last = err
	}
	return evs, last
}
