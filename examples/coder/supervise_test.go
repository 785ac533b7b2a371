package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
)

// askCall is an ask_user call with the given questions.
func askCall(id string, qs ...harness.Question) string {
	return toolCall(0, id, "ask_user", map[string]any{"questions": qs})
}

// twoQuestions are a choice and a free-text question.
var twoQuestions = []harness.Question{
	{Question: "Which database should the service use?", Choices: []string{"postgres", "sqlite"}},
	{Question: "What is the table called?"},
}

// shellWords splits a command line printed by coder as a POSIX shell
// would: words split on spaces, single quotes keep what they hold.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				words = append(words, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	require.False(t, in, "unbalanced quotes in %q", line)
	if any {
		words = append(words, cur.String())
	}
	return words
}

// printed returns the command after label in out, as words without the
// leading "coder".
func printed(t *testing.T, out, label string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)` + regexp.QuoteMeta(label) + ` (coder .*)$`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %q line in:\n%s", label, out)
	w := shellWords(t, m[1])
	require.Equal(t, "coder", w[0])
	return w[1:]
}

// Headless, ask_user pauses the turn (exit 3) and prints the questions
// and the command that answers them; that command, run with the
// answers in place (a choice by its number), answers the same turn,
// which goes on.
func TestQuestionsPauseHeadless(t *testing.T) {
	leakcheck.Check(t)
	for _, asJSON := range []bool{false, true} {
		p := newProvider(t, call(askCall("call_q", twoQuestions...)), say("Using sqlite, table users."))
		ws := workspace(t, nil)
		sessions := t.TempDir() + "/my logs"
		args := []string{"-C", ws, "-sessions", sessions, "-max-steps", "9"}
		if asJSON {
			args = append(args, "-json")
		}
		r := runCLI(t, p.env(), "", append(args, "-p", "set up the db")...)
		require.Equal(t, exitPaused, r.code, r.stderr)
		human := r.stdout
		if asJSON {
			human = r.stderr
			jsonLines(t, r.stdout) // stdout stays JSON
		}
		assert.Contains(t, human, "The turn is paused: the agent asks 2 questions.")
		assert.Contains(t, human, "1. Which database should the service use?  (one of: 1 postgres, 2 sqlite)")
		assert.Contains(t, human, "2. What is the table called?")
		words := printed(t, human, "Answer with:")
		assert.Equal(t, []string{"-C", ws, "-sessions", sessions}, words[:4])
		assert.Contains(t, strings.Join(words, " "), "-max-steps 9", "the flags given are kept")
		assert.NotContains(t, words, "-p")
		require.Len(t, p.Requests(), 1)

		for i, w := range words {
			switch w {
			case "ANSWER1":
				words[i] = "2"
			case "ANSWER2":
				words[i] = "users"
			}
		}
		r = runCLI(t, p.env(), "", words...)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Using sqlite, table users.")
		reqs := p.Requests()
		require.Len(t, reqs, 2)
		msgs := reqs[1].Messages(t)
		last := msgs[len(msgs)-1]
		assert.Equal(t, "tool", last["role"])
		assert.Contains(t, last["content"], "sqlite")
		assert.Contains(t, last["content"], "users")
		assert.NotContains(t, last["content"], "ANSWER")
	}
}

// -answer is checked against what waits: one per question, and only
// for a turn that waits for answers.
func TestAnswerFlagChecks(t *testing.T) {
	p := newProvider(t, call(askCall("call_q", twoQuestions...)), say("done"))
	ws := workspace(t, nil)
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-answer", "x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "give -continue")

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-p", "ask me")
	require.Equal(t, exitPaused, r.code, r.stderr)
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-answer", "1")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "the turn waits for 2 answers and -answer gave 1")
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-answer", "1", "-answer", "t", "-approve", "all")
	assert.Equal(t, exitUsage, r.code)
	// Still paused: the printed questions again, exit 3.
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue")
	assert.Equal(t, exitPaused, r.code, r.stderr)
	assert.Contains(t, r.stdout, "The turn is paused: the agent asks 2 questions.")
	assert.Len(t, p.Requests(), 1)
}

// big is a model reply with a read call and a large usage, so that one
// call spends a few cents at DeepSeek Flash's prices.
func bigCall(id string) reply {
	return sse(role(), toolCall(0, id, "read", map[string]any{"file_path": "a.txt"}), finish("tool_calls"), usage(100_000, 1000, 0))
}

// A session paused at -max-cost exits 3 with the command that goes on;
// -continue with the same budget is refused, and the printed command
// (a higher -max-cost) goes on with the same turn.
func TestBudgetPauseHeadless(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, bigCall("r1"), say("All read."))
	env := p.env("HARNESS_MODEL=deepseek-v4-flash")
	ws := workspace(t, map[string]string{"a.txt": "hello\n"})
	sessions := t.TempDir()
	r := runCLI(t, env, "", "-C", ws, "-sessions", sessions, "-max-cost", "0.01", "-p", "read a.txt")
	require.Equal(t, exitPaused, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "The turn is paused: the cost budget is reached: $0.0")
	assert.Contains(t, r.stdout, " spent of $0.0100")
	require.Len(t, p.Requests(), 1, "the second model call waits for the budget")
	words := printed(t, r.stdout, "Go on with:")
	line := strings.Join(words, " ")
	assert.Regexp(t, `-continue -max-cost 0\.0[36]\d*$`, line, "a higher budget, after -continue")
	assert.NotContains(t, line, "-max-cost 0.01 ", "the old budget is not repeated")

	// The same budget: still reached.
	r = runCLI(t, env, "", "-C", ws, "-sessions", sessions, "-max-cost", "0.01", "-continue")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "cost budget is still reached")
	assert.Contains(t, r.stderr, "give a higher -max-cost")
	require.Len(t, p.Requests(), 1)

	r = runCLI(t, env, "", words...)
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "All read.")
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages(t)
	assert.Equal(t, "tool", msgs[len(msgs)-1]["role"], "the same turn went on after the read")
	assert.Contains(t, msgs[len(msgs)-1]["content"], "hello")
}

// -max-tokens pauses at a token budget the same way, as JSON too.
func TestTokenBudgetPause(t *testing.T) {
	p := newProvider(t, bigCall("r1"), say("done"))
	ws := workspace(t, map[string]string{"a.txt": "hello\n"})
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-json", "-max-tokens", "50000", "-p", "read a.txt")
	require.Equal(t, exitPaused, r.code, r.stderr)
	assert.Contains(t, r.stderr, "the token budget is reached: 101.0k tokens spent of 50.0k")
	assert.Contains(t, r.stderr, "-continue -max-tokens 202000")
	var reached bool
	for _, l := range jsonLines(t, r.stdout) {
		if l["type"] == "budget_reached" {
			reached = true
		}
	}
	assert.True(t, reached, "the budget_reached event is in the JSON")

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-max-cost", "1", "-p", "x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "coder knows no prices for the model test-model")
}

func TestParseChoice(t *testing.T) {
	single := harness.Question{Question: "q", Choices: []string{"a", "b", "c"}}
	multi := harness.Question{Question: "q", Choices: []string{"a", "b", "c"}, Multiple: true}
	free := harness.Question{Question: "q"}
	for _, c := range []struct {
		q    harness.Question
		in   string
		want string
	}{
		{single, "2", "b"}, {single, " 3 ", "c"}, {single, "4", "4"}, {single, "0", "0"}, {single, "1,2", "1,2"},
		{single, "b", "b"}, {single, "something else", "something else"}, {single, "", ""}, {single, "+1", "+1"},
		{multi, "1,3", "a, c"}, {multi, "3 1", "c, a"}, {multi, "1, 1", "a"}, {multi, "1,x", "1,x"},
		{free, "2", "2"}, {free, "  my name ", "my name"},
	} {
		assert.Equal(t, c.want, parseChoice(c.q, c.in), "%+v %q", c.q, c.in)
	}
}

// Whatever the user types, an answer is either the text they typed
// (trimmed) or a list of the question's own choices.
func FuzzParseChoice(f *testing.F) {
	for _, s := range []string{"1", "1,3", "2 2", " x ", "", "-1", "99999999999999999999", "1,,2", "+2"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, multiple bool) {
		q := harness.Question{Question: "q", Choices: []string{"alpha", "beta, gamma", "delta"}, Multiple: multiple}
		got := parseChoice(q, in)
		if got == strings.TrimSpace(in) {
			return
		}
		if !multiple {
			if !(got == "alpha" || got == "beta, gamma" || got == "delta") {
				t.Fatalf("%q read as %q", in, got)
			}
			return
		}
		// A pick of several: the choices joined, each once.
		rest := got
		seen := map[string]bool{}
		for rest != "" {
			found := false
			for _, c := range q.Choices {
				if strings.HasPrefix(rest, c) && !seen[c] {
					after := strings.TrimPrefix(rest, c)
					if after == "" || strings.HasPrefix(after, ", ") {
						seen[c], rest, found = true, strings.TrimPrefix(after, ", "), true
						break
					}
				}
			}
			if !found {
				t.Fatalf("%q read as %q", in, got)
			}
		}
	})
}

func TestParseBudgetAnswer(t *testing.T) {
	for _, c := range []struct {
		in   string
		v    float64
		yes  bool
		fail bool
	}{
		{"", 2, true, false}, {"y", 2, true, false}, {"YES", 2, true, false}, {"n", 0, false, false},
		{"5", 5, true, false}, {"$1.50", 1.5, true, false}, {"300k", 300_000, true, false}, {"2m", 2_000_000, true, false},
		{"0", 0, false, true}, {"-3", 0, false, true}, {"lots", 0, false, true}, {"NaN", 0, false, true}, {"inf", 0, false, true}, {"0x10", 0, false, true},
	} {
		v, yes, err := parseBudgetAnswer(c.in, 2)
		if c.fail {
			assert.Error(t, err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.yes, yes, c.in)
		assert.InDelta(t, c.v, v, 1e-9, c.in)
	}
}

// A budget answer is a yes with a positive finite limit, a no, or an
// error that says what to type.
func FuzzParseBudgetAnswer(f *testing.F) {
	for _, s := range []string{"", "y", "n", "5", "$1.5", "10k", "1e3", "-1", "1_000", "$", "k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, yes, err := parseBudgetAnswer(in, 3)
		switch {
		case err != nil:
			if yes || v != 0 || !strings.Contains(err.Error(), "Enter or y goes on") {
				t.Fatalf("%q: %v %v %v", in, v, yes, err)
			}
		case yes:
			if !(v > 0) || v > 1e308 {
				t.Fatalf("%q: limit %v", in, v)
			}
		case v != 0:
			t.Fatalf("%q: a no with a limit %v", in, v)
		}
	})
}

func TestRaisedBudget(t *testing.T) {
	assert.InDelta(t, 0.032, raisedBudget(&session.Spend{Reached: "session_cost", Limit: 0.01, SessionCost: 0.0156}), 1e-9)
	assert.InDelta(t, 0.021, raisedBudget(&session.Spend{Reached: "session_cost", Limit: 0.01, SessionCost: 0.0100001}), 1e-9)
	assert.Equal(t, 202000.0, raisedBudget(&session.Spend{Reached: "session_tokens", Limit: 50000, SessionTokens: 101000}))
	assert.Equal(t, "202000", budgetValue("session_tokens", 202000))
	assert.Equal(t, "0.032", budgetValue("session_cost", 0.032))
}

// A line steered when no turn runs (the turn ended as it was sent) is
// queued, the screen says so, and it runs as the next turn.
func TestSteerAfterTurnIsQueued(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	p := newProvider(t, say("ran the queued one"))
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	var out lockedBuffer
	a := &app{o: o, env: p.env(), stdout: &out, stderr: &out}
	m, _, err := a.model(nil)
	require.NoError(t, err)
	loop, err := agent.New(agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: session.NewMemory(session.StoreConfig{})}))
	require.NoError(t, err)
	defer loop.Close()
	a.sess, err = loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	a.view, a.console = ui.Open(ui.Config{In: strings.NewReader(""), Out: &out, ErrOut: &out, Getenv: p.env()})
	defer a.view.Close()

	a.steer("too late for that turn", false)
	assert.Contains(t, out.String(), "» too late for that turn · the turn was ending, so it is queued: it runs next")
	a.steer("and this one", true)
	assert.Contains(t, out.String(), "» and this one · queued: it runs after this turn")
	assert.Equal(t, []string{"too late for that turn", "and this one"}, a.sess.Queued())

	// After a turn that did not complete the queue waits, and says so.
	code, exit := a.runQueued(ctx, exitFailed)
	assert.Equal(t, exitFailed, code)
	assert.False(t, exit)
	assert.Contains(t, out.String(), "2 queued messages wait: Enter at the empty prompt runs them")
	assert.Empty(t, p.Requests())

	p.add(say("and that one"))
	code, _ = a.runQueued(ctx, exitOK)
	assert.Equal(t, exitOK, code)
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[0].Text(t), "too late for that turn")
	msgs := reqs[1].Messages(t)
	assert.Equal(t, "and this one", msgs[len(msgs)-1]["content"])
	assert.Empty(t, a.sess.Queued())
}
