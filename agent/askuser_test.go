package agent_test

import (
	"context"
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
)

func askCall(id string, qs ...harness.Question) harness.ToolCall {
	return replay.ToolCall(id, "ask_user", map[string]any{"questions": qs})
}

var (
	qDB    = harness.Question{Question: "Which database?", Choices: []string{"postgres", "sqlite"}}
	qName  = harness.Question{Question: "What should the service be called?"}
	qFlags = harness.Question{Question: "Which checks?", Choices: []string{"vet", "lint", "race"}, Multiple: true}
)

// With an answerer the questions are answered while the turn waits; the
// model reads the answers, and the host's card carries the questions,
// their choices and the answers.
func TestAskUserAnsweredInProcess(t *testing.T) {
	m := replay.NewScripted(replay.Call(askCall("q1", qDB, qName, qFlags)), replay.Response{Text: "ok"})
	var asked []agent.InputRequest
	answerer := func(ctx context.Context, req agent.InputRequest) ([]string, error) {
		asked = append(asked, req)
		return []string{"sqlite", "ledger", "vet, race"}, nil
	}
	_, s := newSession(t, agent.WithModel(m), agent.WithAskUser(answerer))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.Len(t, asked, 1)
	assert.Equal(t, []harness.Question{qDB, qName, qFlags}, asked[0].Questions)
	assert.Equal(t, "q1", asked[0].Call.ID)
	res := toolResults(m.Requests()[1])[0]
	assert.False(t, res.IsError)
	text := resultText(res)
	assert.Contains(t, text, "Which database?\n   sqlite")
	assert.Contains(t, text, "ledger")
	st := ofType[*agent.ToolCallStart](evs)
	require.Len(t, st, 1)
	assert.Equal(t, harness.RenderQuestions, st[0].Render)
	endEv := ofType[*agent.ToolCallEnd](evs)[0]
	require.NotNil(t, endEv.Result.Render)
	assert.Equal(t, harness.RenderQuestions, endEv.Result.Render.Kind)
	assert.Equal(t, []string{"sqlite", "ledger", "vet, race"}, endEv.Result.Render.Answers)
	assert.Len(t, endEv.Result.Render.Questions, 3)
	// The tool's schema is public API: snake_case and stable.
	var spec string
	loop, _ := agent.New(agent.WithModel(m), agent.WithAskUser(nil))
	for _, sp := range loop.Tools() {
		if sp.Name == "ask_user" {
			spec = string(sp.InputSchema)
		}
	}
	loop.Close()
	for _, field := range []string{`"questions"`, `"question"`, `"choices"`, `"multiple"`} {
		assert.Contains(t, spec, field)
	}
}

// Questions the tool refuses (none, an empty one, a single choice) are
// the model's to fix: an error result, and no one is asked.
func TestAskUserRefusesBadQuestions(t *testing.T) {
	m := replay.NewScripted(
		replay.Call(askCall("q1"), askCall("q2", harness.Question{Question: "x", Choices: []string{"only"}})),
		replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(m), agent.WithAskUser(nil))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "nothing waits: both were refused")
	res := toolResults(m.Requests()[1])
	require.Len(t, res, 2)
	assert.Equal(t, harness.CodeInvalidArguments, res[0].Code)
	assert.Contains(t, resultText(res[0]), "at least one question")
	assert.Contains(t, resultText(res[1]), "one choice")
	assert.Len(t, ofType[*agent.ToolCallRefused](evs), 2)
}

// Without an answerer the turn pauses after the step's other calls; the
// questions are in the log, listed by Paused, and answering them
// continues the same turn.
func TestAskUserPausesAndAnswerContinues(t *testing.T) {
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("e1", "echo", echoIn{Text: "first"}), askCall("q1", qDB)),
		replay.Response{Text: "using it"})
	store := sessionStore()
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(echoTool()), agent.WithAskUser(nil), agent.WithStores(agent.Stores{Sessions: store}))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonAwaitingInput, end.Reason)
	ir := ofType[*agent.InputRequested](evs)
	require.Len(t, ir, 1)
	assert.Equal(t, []harness.Question{qDB}, ir[0].Requests[0].Questions)
	assert.Len(t, ofType[*agent.ToolCallEnd](evs), 1, "the echo ran; the question waits")
	p := s.Paused()
	require.NotNil(t, p)
	assert.Equal(t, session.ReasonAwaitingInput, p.Reason)
	require.Len(t, p.Questions, 1)
	assert.Equal(t, "q1", p.Questions[0].Call.ID)

	_, _, err = answerTurn(t, s, agent.Answers{Input: map[string][]string{"q1": {"a", "b"}}})
	assert.ErrorIs(t, err, harness.CodeInvalidArguments, "one answer per question")
	_, _, err = answerTurn(t, s, agent.Answers{Input: map[string][]string{"zz": {"a"}}})
	assert.ErrorIs(t, err, agent.CodeNothingPending)

	evs, end, err = answerTurn(t, s, agent.Answers{Input: map[string][]string{"q1": {"postgres"}}})
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 2, end.Steps)
	res := toolResults(m.Requests()[1])
	require.Len(t, res, 2)
	assert.Equal(t, "echo: first", resultText(res[0]))
	assert.Contains(t, resultText(res[1]), "postgres")
	assert.Nil(t, s.Paused())
}

// A new user message instead of answers closes the questions as not
// answered.
func TestAskUserAbandonedByANewMessage(t *testing.T) {
	m := replay.NewScripted(replay.Call(askCall("q1", qName)), replay.Response{Text: "fine"})
	_, s := newSession(t, agent.WithModel(m), agent.WithAskUser(nil))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingInput, end.Reason)
	_, end, err = collect(t, s, context.Background(), "never mind")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	res := toolResults(m.Requests()[1])
	require.Len(t, res, 1)
	assert.Equal(t, harness.CodeNotRun, res[0].Code)
	assert.Contains(t, resultText(res[0]), "did not answer")
}

// The pause outlives its process: a child process runs the turn to its
// pause and exits; this one resumes the session from the log and
// answers.
func TestAskUserAnsweredAfterARestart(t *testing.T) {
	dir := t.TempDir()
	if os.Getenv("HARNESS_ASK_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAskUserAnsweredAfterARestart$")
		cmd.Env = append(os.Environ(), "HARNESS_ASK_CHILD="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		id := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, "id")))))
		require.NotEmpty(t, id)
		m := replay.NewScripted(replay.Response{Text: "named it"})
		_, s := resumeSession(t, id, agent.WithModel(m), agent.WithAskUser(nil),
			agent.WithStores(agent.Stores{Sessions: session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})}))
		p := s.Paused()
		require.NotNil(t, p, "the pause is restored from the log")
		require.Len(t, p.Questions, 1)
		assert.Equal(t, []harness.Question{qName}, p.Questions[0].Questions)
		_, end, err := answerTurn(t, s, agent.Answers{Input: map[string][]string{"q1": {"ledger"}}})
		require.NoError(t, err)
		assert.Equal(t, session.ReasonCompleted, end.Reason)
		res := toolResults(m.Requests()[0])
		require.Len(t, res, 1)
		assert.Contains(t, resultText(res[0]), "ledger")
		return
	}
	// The child: run to the pause, write the session id, exit.
	childDir := os.Getenv("HARNESS_ASK_CHILD")
	m := replay.NewScripted(replay.Call(askCall("q1", qName)))
	loop, err := agent.New(agent.WithModel(m), agent.WithAskUser(nil),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(filepath.Join(childDir, "sessions"), session.StoreConfig{})}))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	_, end, err := collect(t, s, context.Background(), "name the service")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingInput, end.Reason)
	require.NoError(t, os.WriteFile(filepath.Join(childDir, "id"), []byte(s.Header().ID), 0o644))
	require.NoError(t, loop.Close())
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
