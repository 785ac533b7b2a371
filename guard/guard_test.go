package guard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// sess simulates one session for observers: its Env and step counter.
type sess struct {
	env  *tools.Env
	step int
}

func newSess() *sess { return &sess{env: &tools.Env{SessionID: "s", Turn: 1, State: &tools.State{}}} }

// userMessage simulates a new user message.
func (s *sess) userMessage() {
	s.env = &tools.Env{SessionID: "s", Turn: s.env.Turn + 1, State: s.env.State}
}

type c struct {
	name, args string
	err        harness.Code // non-empty: the call failed with this code
}

func (s *sess) run(o tools.StepObserver, calls ...c) []harness.Reminder {
	s.step++
	st := &tools.Step{Env: s.env, Number: s.step}
	for i, x := range calls {
		st.Calls = append(st.Calls, &tools.Call{ID: fmt.Sprintf("c%d_%d", s.step, i), Name: x.name, Arguments: x.args, Step: s.step, Index: i, Env: s.env})
		res := harness.TextResult("ok")
		if x.err != "" {
			res = harness.ErrorResult(x.err, "failed: %s", x.err)
		}
		st.Results = append(st.Results, res)
	}
	return o(context.Background(), st)
}

func TestRepeatThresholdsAcrossSteps(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	fired := map[int]harness.Reminder{}
	for n := 1; n <= 12; n++ {
		rs := s.run(g, c{name: "grep", args: `{"pattern":"TODO","path":"src"}`})
		require.LessOrEqual(t, len(rs), 1)
		if len(rs) == 1 {
			fired[n] = rs[0]
		}
	}
	require.Len(t, fired, 3, "reminders at 3, 5 and 8 only")
	for _, n := range []int{3, 5, 8} {
		require.Contains(t, fired, n)
		assert.Equal(t, "repeat_guard", fired[n].Source)
		assert.Contains(t, fired[n].Text, "grep")
		assert.Contains(t, fired[n].Text, fmt.Sprintf("%d times in a row", n))
	}
	assert.NotContains(t, fired[3].Text, `"pattern"`, "the first reminder is short")
	assert.Less(t, len(fired[3].Text), len(fired[5].Text))
	for _, n := range []int{5, 8} {
		assert.Contains(t, fired[n].Text, `{"path":"src","pattern":"TODO"}`, "detailed reminders quote the arguments")
	}
	assert.Contains(t, fired[8].Text, "tell the user", "the last reminder escalates")
	assert.NotContains(t, fired[5].Text, "tell the user")
}

func TestRepeatKeyOrderAndNumbers(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	assert.Empty(t, s.run(g, c{name: "search", args: `{"a":1,"b":{"c":[1,2],"d":"x"}}`}))
	assert.Empty(t, s.run(g, c{name: "search", args: ` { "b" : { "d":"x", "c":[1.0, 2e0] }, "a" : 1 } `}))
	rs := s.run(g, c{name: "search", args: `{"b":{"c":[10e-1,0.2e1],"d":"x"},"a":100e-2}`})
	require.Len(t, rs, 1, "key order, whitespace and number spelling do not matter")
	assert.Contains(t, rs[0].Text, "3 times")
	// Array order does matter.
	assert.Empty(t, s.run(g, c{name: "search", args: `{"a":1,"b":{"c":[2,1],"d":"x"}}`}))
}

func TestRepeatBrokenByOtherCalls(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	same := c{name: "bash", args: `{"command":"make"}`}
	s.run(g, same)
	s.run(g, same)
	assert.Empty(t, s.run(g, c{name: "bash", args: `{"command":"make test"}`}), "other arguments break the run")
	s.run(g, same)
	s.run(g, same)
	assert.Empty(t, s.run(g, c{name: "sh", args: `{"command":"make"}`}), "another tool breaks the run")
	assert.Empty(t, s.run(g, same))
	assert.Empty(t, s.run(g, same))
	assert.Len(t, s.run(g, same), 1)
}

func TestRepeatWithinAStep(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	same := c{name: "read", args: `{"file_path":"a.go"}`}
	rs := s.run(g, same, same, same)
	require.Len(t, rs, 1, "three identical calls in one step")
	assert.Contains(t, rs[0].Text, "3 times")

	s = newSess()
	rs = s.run(g, same, same, same, same, same, same)
	require.Len(t, rs, 1, "one reminder per run per step, the highest level")
	assert.Contains(t, rs[0].Text, "5 times")

	s = newSess()
	other := c{name: "read", args: `{"file_path":"b.go"}`}
	rs = s.run(g, same, same, same, other, other, other)
	require.Len(t, rs, 2, "two runs, two reminders, in call order")
	assert.Contains(t, rs[0].Text, "read")
	assert.Contains(t, rs[0].Text, "3 times")
	assert.Contains(t, rs[1].Text, "3 times")

	// A run continues from one step into the next.
	s = newSess()
	assert.Empty(t, s.run(g, same, same))
	rs = s.run(g, same, other)
	require.Len(t, rs, 1)
	assert.Contains(t, rs[0].Text, "3 times")
}

func TestRepeatExclusionsAreTransparent(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	same := c{name: "bash", args: `{"command":"go test"}`}
	todo := c{name: "todo_write", args: `{"todos":[]}`}
	ask := c{name: "ask_user", args: `{"question":"?"}`}
	assert.Empty(t, s.run(g, same, todo))
	assert.Empty(t, s.run(g, ask, same, todo))
	rs := s.run(g, todo, same)
	require.Len(t, rs, 1, "excluded calls neither count nor break the run")
	assert.Contains(t, rs[0].Text, "bash")
	assert.Empty(t, s.run(g, todo, todo, todo, todo, todo), "excluded tools never trigger")

	// A custom list replaces the default one.
	g = repeatGuard(t, guard.RepeatConfig{Exclude: []string{"poll"}})
	s = newSess()
	assert.Empty(t, s.run(g, c{name: "poll", args: "{}"}, c{name: "poll", args: "{}"}, c{name: "poll", args: "{}"}))
	assert.Len(t, s.run(g, todo, todo, todo), 1, "todo_write is no longer excluded")
	g = repeatGuard(t, guard.RepeatConfig{Exclude: []string{}})
	assert.Len(t, newSess().run(g, todo, todo, todo), 1, "an empty list excludes nothing")
}

func TestRepeatUserMessageResets(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	same := c{name: "bash", args: `{"command":"ls"}`}
	s.run(g, same)
	s.run(g, same)
	s.userMessage()
	assert.Empty(t, s.run(g, same), "a user message starts the count afresh")
	assert.Empty(t, s.run(g, same))
	assert.Len(t, s.run(g, same), 1)
}

func TestRepeatCustomThresholds(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{Thresholds: []int{4, 2, 2}})
	s := newSess()
	same := c{name: "x", args: "{}"}
	var at []int
	for n := 1; n <= 6; n++ {
		if len(s.run(g, same)) > 0 {
			at = append(at, n)
		}
	}
	assert.Equal(t, []int{2, 4}, at, "sorted, duplicates dropped")
}

func TestGuardConfigRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"threshold below 2", func() error { _, err := guard.RepeatGuard(guard.RepeatConfig{Thresholds: []int{4, 1}}); return err }, "not 1"},
		{"threshold zero", func() error { _, err := guard.RepeatGuard(guard.RepeatConfig{Thresholds: []int{0}}); return err }, "not 0"},
		{"no thresholds", func() error { _, err := guard.RepeatGuard(guard.RepeatConfig{Thresholds: []int{}}); return err }, "at least one"},
		{"streak below 2", func() error { _, err := guard.FailureGuard(guard.FailureConfig{Streak: 1}); return err }, "FailureConfig.Streak is 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, harness.CodeInvalidOption)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func repeatGuard(t *testing.T, cfg guard.RepeatConfig) tools.StepObserver {
	t.Helper()
	g, err := guard.RepeatGuard(cfg)
	require.NoError(t, err)
	return g
}

func failureGuard(t *testing.T, cfg guard.FailureConfig) tools.StepObserver {
	t.Helper()
	g, err := guard.FailureGuard(cfg)
	require.NoError(t, err)
	return g
}

func TestRepeatPreviewCutAtRunes(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	long := c{name: "write", args: `{"content":"` + strings.Repeat("é𝄞", 600) + `"}`}
	s.run(g, long, long, long, long)
	rs := s.run(g, long)
	require.Len(t, rs, 1)
	lines := strings.Split(rs[0].Text, "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	preview := lines[1]
	assert.True(t, utf8.ValidString(preview))
	assert.True(t, strings.HasSuffix(preview, "…"))
	assert.Equal(t, 500+1, utf8.RuneCountInString(preview), "500 characters and the ellipsis")
	assert.True(t, strings.HasPrefix(preview, `{"content":"é𝄞`))
}

func TestRepeatStatePerSessionAndGuard(t *testing.T) {
	g := repeatGuard(t, guard.RepeatConfig{})
	a, b := newSess(), newSess()
	same := c{name: "bash", args: `{"command":"ls"}`}
	a.run(g, same)
	b.run(g, same)
	a.run(g, same)
	b.run(g, same)
	assert.Len(t, a.run(g, same), 1, "sessions count apart")
	other := repeatGuard(t, guard.RepeatConfig{})
	assert.Empty(t, a.run(other, same), "two guards keep apart state")
}

func TestFailureStreak(t *testing.T) {
	g := failureGuard(t, guard.FailureConfig{})
	s := newSess()
	assert.Empty(t, s.run(g, c{name: "edit", args: `{"old_string":"a"}`, err: "edit_not_found"}))
	assert.Empty(t, s.run(g, c{name: "read", args: `{"file_path":"x"}`}), "other tools leave the streak alone")
	assert.Empty(t, s.run(g, c{name: "edit", args: `{"old_string":"b"}`, err: "edit_not_found"}))
	rs := s.run(g, c{name: "edit", args: `{"old_string":"c"}`, err: "stale_version"})
	require.Len(t, rs, 1)
	assert.Equal(t, "failure_guard", rs[0].Source)
	assert.Contains(t, rs[0].Text, "edit has failed 3 times in a row")
	assert.Contains(t, rs[0].Text, "edit_not_found, edit_not_found, stale_version")
	assert.Contains(t, rs[0].Text, "reconsider the approach")

	assert.Empty(t, s.run(g, c{name: "edit", args: `{"old_string":"d"}`, err: "edit_not_found"}))
	assert.Empty(t, s.run(g, c{name: "edit", args: `{"old_string":"e"}`, err: "edit_not_found"}))
	rs = s.run(g, c{name: "edit", args: `{"old_string":"f"}`, err: "edit_not_found"})
	require.Len(t, rs, 1, "again at twice the streak")
	assert.Contains(t, rs[0].Text, "6 times")
	assert.Contains(t, rs[0].Text, "latest 5 error codes")
}

func TestFailureStreakResets(t *testing.T) {
	g := failureGuard(t, guard.FailureConfig{})
	s := newSess()
	fail := func(arg string) c { return c{name: "bash", args: `{"command":"` + arg + `"}`, err: "tool_failed"} }
	s.run(g, fail("a"), fail("b"))
	assert.Empty(t, s.run(g, c{name: "bash", args: `{"command":"ok"}`}, fail("c")), "a success ends the streak")
	s.run(g, fail("d"))
	s.userMessage()
	assert.Empty(t, s.run(g, fail("e")), "a user message resets")
	assert.Empty(t, s.run(g, fail("f"), c{name: "bash", args: `{}`, err: harness.CodeNotRun}, c{name: "bash", args: `{}`, err: harness.CodeAborted}),
		"calls that were not run or were cancelled do not count")
	assert.Len(t, s.run(g, fail("g")), 1)

	// Identical failing calls are the repeat guard's business.
	s = newSess()
	assert.Empty(t, s.run(g, fail("same"), fail("same"), fail("same"), fail("same")))

	// Within one step, a success after the third failure ends the streak
	// before the reminder goes out.
	s = newSess()
	assert.Empty(t, s.run(g, fail("a"), fail("b"), fail("c"), c{name: "bash", args: `{"command":"ok"}`}))
}

func TestFailureConfig(t *testing.T) {
	g := failureGuard(t, guard.FailureConfig{Streak: 2, Exclude: []string{"flaky"}})
	s := newSess()
	assert.Empty(t, s.run(g, c{name: "flaky", args: "1", err: "x"}, c{name: "flaky", args: "2", err: "x"}, c{name: "flaky", args: "3", err: "x"}))
	rs := s.run(g, c{name: "web_fetch", args: `{"url":"a"}`, err: "http_404"}, c{name: "web_fetch", args: `{"url":"b"}`, err: "http_404"})
	require.Len(t, rs, 1)
	assert.Contains(t, rs[0].Text, "web_fetch has failed 2 times")
}

// TestGuardsInTheLoop drives the real loop: the reminder follows the
// step's results, is logged, and a resumed session rebuilds the same
// history.
func TestGuardsInTheLoop(t *testing.T) {
	ctx := context.Background()
	lookup := tools.Define(tools.Spec{Name: "lookup", Description: "Look a key up.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in struct {
			Key string `json:"key"`
		}) (*harness.ToolResult, error) {
			if strings.HasPrefix(in.Key, "bad") {
				return nil, &harness.Error{Code: "no_such_key", Message: "no such key " + in.Key}
			}
			return harness.TextResult("value of " + in.Key), nil
		})
	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "lookup", `{"key":"k"}`)),
		replay.Call(replay.ToolCall("c2", "lookup", `{ "key" : "k" }`)),
		replay.Call(replay.ToolCall("c3", "lookup", `{"key":"k"}`), replay.ToolCall("c4", "lookup", `{"key":"bad1"}`)),
		replay.Call(replay.ToolCall("c5", "lookup", `{"key":"bad2"}`), replay.ToolCall("c6", "lookup", `{"key":"bad3"}`)),
		replay.Response{Text: "giving up"},
	)
	store := session.NewMemory(session.StoreConfig{})
	opts := []agent.Option{agent.WithModel(model), agent.WithTools(lookup), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithHooks(agent.Hooks{Steps: []tools.StepObserver{repeatGuard(t, guard.RepeatConfig{}), failureGuard(t, guard.FailureConfig{})}})}
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	var reminders []*agent.ReminderAdded
	for ev, err := range s.Run(ctx, "look it up") {
		require.NoError(t, err)
		if r, ok := ev.(*agent.ReminderAdded); ok {
			reminders = append(reminders, r)
		}
	}
	require.Len(t, reminders, 2)
	assert.Equal(t, 3, reminders[0].Step)
	assert.Equal(t, "repeat_guard", reminders[0].Source)
	assert.Equal(t, 4, reminders[1].Step)
	assert.Equal(t, "failure_guard", reminders[1].Source)
	assert.Contains(t, reminders[1].Text, "no_such_key, no_such_key, no_such_key")

	// The model saw the reminder right after the step's results.
	reqs := model.Requests()
	require.Len(t, reqs, 5)
	msgs := reqs[3].Messages
	last := msgs[len(msgs)-1]
	assert.Equal(t, harness.RoleUser, last.Role)
	assert.Contains(t, last.Text(), "lookup 3 times in a row")
	assert.Equal(t, harness.RoleTool, msgs[len(msgs)-2].Role)

	before := s.Messages()
	id := s.Header().ID
	require.NoError(t, s.Close())
	resumed, err := loop.ResumeSession(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, before, resumed.Messages(), "the reminders are in the log")
}

// TestRepeatReadsTheCheckedArguments: the guard compares the arguments
// the registry decoded when it checked each call; it does not parse
// their text again.
func TestRepeatReadsTheCheckedArguments(t *testing.T) {
	type in struct {
		Pattern string `json:"pattern"`
	}
	grep := tools.Define(tools.Spec{Name: "grep", Description: "Search."},
		func(context.Context, *tools.Call, in) (*harness.ToolResult, error) { return nil, nil })
	reg, err := tools.NewRegistry(grep)
	require.NoError(t, err)
	g := repeatGuard(t, guard.RepeatConfig{})
	s := newSess()
	var reminders []harness.Reminder
	for i := range 3 {
		call := &tools.Call{ID: fmt.Sprint("c", i), Name: "grep", Arguments: fmt.Sprintf(`{"pattern":%q}`, "TODO"), Env: s.env}
		require.Nil(t, reg.Check(call))
		call.Arguments = fmt.Sprintf(`{"pattern":"changed after the check %d"}`, i)
		s.step++
		reminders = g(context.Background(), &tools.Step{Env: s.env, Number: s.step, Calls: []*tools.Call{call}, Results: []*harness.ToolResult{harness.TextResult("ok")}})
	}
	require.Len(t, reminders, 1, "three identical calls, as decoded")
}
