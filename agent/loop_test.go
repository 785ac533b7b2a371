package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

func TestMultiStepToolUse(t *testing.T) {
	llm := replay.NewScripted(
		replay.Response{Reasoning: "I should echo.", ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "echo", map[string]any{"text": "one"})},
			Usage: &harness.Usage{InputTokens: 100, OutputTokens: 10}},
		replay.Call(replay.ToolCall("c2", "echo", map[string]any{"text": "two"})),
		replay.Response{Text: "done: one, two"},
	)
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(echoTool()), agent.WithSystemPrompt("be brief"))
	evs, end, err := collect(t, s, context.Background(), "echo twice")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 3, end.Steps)
	assert.Equal(t, int64(100), end.Usage.InputTokens)

	assert.Equal(t, []string{
		"reasoning_delta", "usage", "tool_call_start", "tool_call_end", "step_end",
		"tool_call_start", "tool_call_end", "step_end",
		"text_delta", "step_end", "turn_end",
	}, kinds(evs))
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 2)
	assert.Equal(t, "echo: one", ends[0].Result.Text())
	assert.Equal(t, "c1", ends[0].Call.ID)

	reqs := llm.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "be brief", reqs[0].System)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, "echo", reqs[0].Tools[0].Name)
	// The third request holds the whole conversation in order.
	roles := []harness.Role{}
	for _, m := range reqs[2].Messages {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []harness.Role{"user", "assistant", "tool", "assistant", "tool"}, roles)
	assert.Equal(t, "I should echo.", reqs[2].Messages[1].Content[0].Text, "reasoning is kept in history")
	assert.Equal(t, "echo: two", resultText(reqs[2].Messages[4].Content[0].ToolResult))
	assert.Equal(t, "done: one, two", s.Messages()[5].Text())
}

// TestParallelBatchesAndBarrier: safe calls run together, an unsafe call
// waits for the batch before it and blocks the batch after it, and results
// reach the model in call order.
func TestParallelBatchesAndBarrier(t *testing.T) {
	rec := &recorder{}
	var inFlight, peak atomic.Int32
	both := make(chan struct{})
	var arrived atomic.Int32
	safe := tools.Define(tools.Spec{Name: "safe", Description: "parallel", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			rec.add("start:" + in.Text)
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			if in.Text == "a" || in.Text == "b" {
				// Wait until both a and b run: proves they overlap.
				if arrived.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
				case <-time.After(time.Minute): // only a loop that runs them one by one waits this long
					return nil, errors.New("a and b did not run in parallel")
				}
				if in.Text == "a" {
					time.Sleep(20 * time.Millisecond) // a finishes after b
				}
			}
			inFlight.Add(-1)
			rec.add("end:" + in.Text)
			return harness.TextResult("safe " + in.Text), nil
		})
	barrier := tools.Define(tools.Spec{Name: "barrier", Description: "runs alone", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			rec.add("start:" + in.Text)
			if inFlight.Load() != 0 {
				return nil, errors.New("barrier ran while other calls were in flight")
			}
			rec.add("end:" + in.Text)
			return harness.TextResult("barrier " + in.Text), nil
		})
	llm := replay.NewScripted(
		replay.Call(
			replay.ToolCall("1", "safe", map[string]any{"text": "a"}),
			replay.ToolCall("2", "safe", map[string]any{"text": "b"}),
			replay.ToolCall("3", "barrier", map[string]any{"text": "x"}),
			replay.ToolCall("4", "safe", map[string]any{"text": "c"}),
			replay.ToolCall("5", "safe", map[string]any{"text": "d"}),
		),
		replay.Response{Text: "ok"},
	)
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(safe, barrier))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)

	assert.Greater(t, rec.index("start:x"), rec.index("end:a"))
	assert.Greater(t, rec.index("start:x"), rec.index("end:b"))
	assert.Less(t, rec.index("end:x"), rec.index("start:c"))
	assert.Less(t, rec.index("end:x"), rec.index("start:d"))
	assert.GreaterOrEqual(t, peak.Load(), int32(2))

	res := lastResults(llm.Requests()[1], 5)
	var texts []string
	for _, r := range res {
		assert.False(t, r.IsError, resultText(r))
		texts = append(texts, resultText(r))
	}
	assert.Equal(t, []string{"safe a", "safe b", "barrier x", "safe c", "safe d"}, texts)
}

func TestBadCallsBecomeErrorResults(t *testing.T) {
	boom := tools.Define(tools.Spec{Name: "boom", Description: "panics"},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			var m map[string]int
			m["x"]++ // nil map write: a real panic
			return nil, nil
		})
	llm := replay.NewScripted(
		replay.Call(
			replay.ToolCall("1", "echo", `{"text": "unterminated`),
			replay.ToolCall("2", "echo", map[string]any{"text": 42}),
			replay.ToolCall("3", "echo", map[string]any{"text": "x", "extra": true}),
			replay.ToolCall("4", "ecko", map[string]any{"text": "x"}),
			replay.ToolCall("5", "boom", nil),
			replay.ToolCall("6", "echo", `[1,2]`),
			replay.ToolCall("7", "echo", map[string]any{"text": "fine"}),
		),
		replay.Response{Text: "recovered"},
	)
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(echoTool(), boom))
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "the turn goes on after bad calls")

	res := lastResults(llm.Requests()[1], 7)
	cases := []struct {
		code     harness.Code
		contains []string
	}{
		{harness.CodeInvalidArguments, []string{"not valid JSON", "Parameters: text (string, required)"}},
		{harness.CodeInvalidArguments, []string{"do not match its schema", "text", "string"}},
		{harness.CodeInvalidArguments, []string{"extra"}},
		{harness.CodeUnknownTool, []string{`"ecko"`, `Did you mean "echo"?`, "Available tools: boom, echo."}},
		{harness.CodeToolPanic, []string{"boom", "internal error", "assignment to entry in nil map"}},
		{harness.CodeInvalidArguments, []string{"must be a JSON object, not an array"}},
	}
	for i, c := range cases {
		assert.True(t, res[i].IsError, "call %d", i+1)
		assert.Equal(t, c.code, res[i].Code, "call %d: %s", i+1, resultText(res[i]))
		for _, want := range c.contains {
			assert.Contains(t, resultText(res[i]), want, "call %d", i+1)
		}
	}
	assert.False(t, res[6].IsError)
	assert.Equal(t, "echo: fine", resultText(res[6]))
}

func TestStepLimit(t *testing.T) {
	llm := replay.NewScripted()
	for i := range 10 {
		llm.Push(replay.Call(replay.ToolCall("c"+string(rune('a'+i)), "echo", map[string]any{"text": "again"})))
	}
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(echoTool()), agent.WithLimits(agent.Limits{MaxSteps: 3}))
	evs, end, err := collect(t, s, context.Background(), "loop forever")
	require.NoError(t, err, "the step limit is not an error")
	assert.Equal(t, session.ReasonStepLimit, end.Reason)
	assert.Equal(t, 3, end.Steps)
	assert.Len(t, ofType[*agent.ToolCallEnd](evs), 3, "the last step's tools still ran and were logged")
	assert.Len(t, llm.Requests(), 3, "one model call a step")

	// The session stays usable after the limit.
	model2 := replay.NewScripted(replay.Response{Text: "fine"})
	require.NoError(t, s.SetModel(model2))
	_, end, err = collect(t, s, context.Background(), "stop now")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
}

func TestCancelMidStream(t *testing.T) {
	leakcheck.Check(t)
	llm := replay.NewScripted(replay.Response{Text: "partial answ", Hang: true})
	store := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var end *agent.TurnEnd
	var endErr error
	for ev, err := range s.Run(ctx, "hello") {
		switch e := ev.(type) {
		case *agent.TextDelta:
			cancel() // the user presses Ctrl-C while text streams
		case *agent.TurnEnd:
			end, endErr = e, err
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCancelled, end.Reason)
	assert.ErrorIs(t, endErr, context.Canceled)

	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	last := tr.Events[len(tr.Events)-1].Data.(*session.TurnEnded)
	assert.Equal(t, session.ReasonCancelled, last.Reason)
	am := tr.Events[len(tr.Events)-2].Data.(*session.AssistantMessage)
	assert.Equal(t, model.FinishAborted, am.Finish)
	assert.Equal(t, "partial answ", am.Content[0].Text, "what the user saw is logged")
}

func TestCancelDuringTools(t *testing.T) {
	leakcheck.Check(t)
	started := make(chan struct{})
	slow := tools.Define(tools.Spec{Name: "slow", Description: "waits", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("1", "slow", nil), replay.ToolCall("2", "echo", map[string]any{"text": "never"})))
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(slow, echoTool()))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	evs, end, err := collect(t, s, ctx, "go")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, session.ReasonCancelled, end.Reason)
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 2)
	assert.Equal(t, harness.CodeAborted, ends[0].Result.Code)
	assert.Contains(t, ends[0].Result.Text(), "side effects are unknown")
	assert.Equal(t, harness.CodeNotRun, ends[1].Result.Code)

	// Every call has a logged result, so the history needs no repair.
	msgs := s.Messages()
	assert.Equal(t, harness.CodeNotRun, msgs[len(msgs)-1].Content[0].ToolResult.Code)
}

func TestHostStopsIterating(t *testing.T) {
	leakcheck.Check(t)
	llm := replay.NewScripted(replay.Response{Text: "streaming", Hang: true}, replay.Response{Text: "second turn"})
	_, s := newSession(t, agent.WithModel(llm))
	for ev := range s.Run(context.Background(), "hi") {
		if _, ok := ev.(*agent.TextDelta); ok {
			break
		}
	}
	_, end, err := collect(t, s, context.Background(), "again")
	require.NoError(t, err, "the session is usable after the host stopped a turn")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
}

func TestRetry(t *testing.T) {
	fast := agent.RetryPolicy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}
	rateLimited := model.NewError(harness.CodeRateLimit, "slow down", &model.ProviderError{Status: 429, RetryAfter: 30 * time.Millisecond})

	t.Run("RecoversWithinBound", func(t *testing.T) {
		llm := replay.NewScripted(
			replay.Response{Err: rateLimited},
			replay.Response{Text: "half", Err: model.NewError(harness.CodeServer, "", &model.ProviderError{Status: 503})},
			replay.Response{Chunks: []model.Chunk{{Type: model.ChunkText, Text: "no finish"}}}, // truncated
			replay.Response{Text: "finally"},
		)
		_, s := newSession(t, agent.WithModel(llm), agent.WithLimits(agent.Limits{Retry: &fast}))
		evs, end, err := collect(t, s, context.Background(), "hi")
		require.NoError(t, err)
		assert.Equal(t, session.ReasonCompleted, end.Reason)
		retries := ofType[*agent.Retry](evs)
		require.Len(t, retries, 3)
		assert.GreaterOrEqual(t, retries[0].Delay, 30*time.Millisecond, "Retry-After is honoured")
		assert.LessOrEqual(t, retries[0].Delay, 50*time.Millisecond, "and capped")
		assert.Equal(t, harness.CodeTruncatedStream, harness.CodeOf(retries[2].Err))
		assert.Equal(t, "finally", s.Messages()[1].Text(), "only the successful answer is in history")
	})
	t.Run("GivesUpAfterBound", func(t *testing.T) {
		llm := replay.NewScripted()
		for range 10 {
			llm.Push(replay.Response{Err: rateLimited})
		}
		_, s := newSession(t, agent.WithModel(llm), agent.WithLimits(agent.Limits{Retry: &fast}))
		evs, end, err := collect(t, s, context.Background(), "hi")
		assert.Equal(t, session.ReasonError, end.Reason)
		assert.Equal(t, harness.CodeRateLimit, harness.CodeOf(err))
		assert.Len(t, ofType[*agent.Retry](evs), 3)
		assert.Len(t, llm.Requests(), 4, "1 call + 3 retries")
	})
	t.Run("NotRetryable", func(t *testing.T) {
		llm := replay.NewScripted(replay.Response{Err: model.NewError(harness.CodeAuth, "bad key", &model.ProviderError{Status: 401})}, replay.Response{Text: "x"})
		_, s := newSession(t, agent.WithModel(llm), agent.WithLimits(agent.Limits{Retry: &fast}))
		evs, end, err := collect(t, s, context.Background(), "hi")
		assert.Equal(t, session.ReasonError, end.Reason)
		var me *harness.Error
		require.ErrorAs(t, err, &me)
		assert.Equal(t, harness.CodeAuth, me.Code)
		assert.Contains(t, err.Error(), "bad key")
		assert.Empty(t, ofType[*agent.Retry](evs))
	})
	t.Run("EmptyAnswerRetried", func(t *testing.T) {
		llm := replay.NewScripted(replay.Response{Reasoning: "hmm"}, replay.Response{Text: "there"})
		_, s := newSession(t, agent.WithModel(llm), agent.WithLimits(agent.Limits{Retry: &fast}))
		evs, _, err := collect(t, s, context.Background(), "hi")
		require.NoError(t, err)
		retries := ofType[*agent.Retry](evs)
		require.Len(t, retries, 1)
		assert.Equal(t, harness.CodeEmptyResponse, harness.CodeOf(retries[0].Err))
	})
}

func TestRemindersFromObservers(t *testing.T) {
	obs := tools.StepObserver(func(ctx context.Context, st *tools.Step) []harness.Reminder {
		return []harness.Reminder{{Source: "test", Text: "you called " + st.Calls[0].Name}}
	})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("1", "echo", map[string]any{"text": "a"})), replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(echoTool()), agent.WithHooks(agent.Hooks{Steps: []tools.StepObserver{obs}}))
	evs, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	rem := ofType[*agent.ReminderAdded](evs)
	require.Len(t, rem, 1)
	msgs := llm.Requests()[1].Messages
	last := msgs[len(msgs)-1]
	assert.Equal(t, harness.RoleUser, last.Role)
	assert.Contains(t, last.Text(), "you called echo")
	assert.Contains(t, last.Text(), "<system-reminder>")
	assert.Equal(t, harness.RoleTool, msgs[len(msgs)-2].Role, "the reminder follows the results")
}

func TestConfigurationErrors(t *testing.T) {
	bad := tools.Define(tools.Spec{Name: "BadName", Description: "x"}, func(context.Context, *tools.Call, struct{}) (*harness.ToolResult, error) { return nil, nil })
	scripted := agent.WithModel(replay.NewScripted())
	for _, tc := range []struct {
		name string
		opts []agent.Option
		want []string
	}{
		{"no model", nil, []string{"agent.WithModel"}},
		{"two tools with one name", []agent.Option{scripted, agent.WithTools(echoTool(), echoTool())}, []string{`two tools are named "echo"`}},
		{"a tool name that is not snake_case", []agent.Option{scripted, agent.WithTools(bad)}, []string{"snake_case"}},
		{"negative steps", []agent.Option{scripted, agent.WithLimits(agent.Limits{MaxSteps: -3})}, []string{"Limits.MaxSteps is -3"}},
		{"negative parallel tools", []agent.Option{scripted, agent.WithLimits(agent.Limits{MaxParallel: -1})}, []string{"Limits.MaxParallel is -1"}},
		{"negative image budget", []agent.Option{scripted, agent.WithContextPolicy(agent.ContextPolicy{MaxImages: -1})}, []string{"ContextPolicy.MaxImages is -1"}},
		{"negative retry delay", []agent.Option{scripted, agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 2, BaseDelay: -time.Second}})}, []string{"Limits.Retry is", "BaseDelay:-1s"}},
		{"negative context share", []agent.Option{scripted, agent.WithContextPolicy(agent.ContextPolicy{PruneAt: -0.5})}, []string{"ContextPolicy.PruneAt is -0.5"}},
		{"NaN context share", []agent.Option{scripted, agent.WithContextPolicy(agent.ContextPolicy{KeepRecent: math.NaN()})}, []string{"ContextPolicy.KeepRecent is NaN"}},
		{"every error at once", []agent.Option{agent.WithLimits(agent.Limits{MaxSteps: -1}), agent.WithLimits(agent.Limits{MaxParallel: -1})}, []string{"agent.WithModel", "Limits.MaxSteps is -1", "Limits.MaxParallel is -1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := agent.New(tc.opts...)
			assert.Nil(t, l)
			require.ErrorIs(t, err, harness.CodeInvalidOption)
			var he *harness.Error
			require.True(t, errors.As(err, &he), "a *harness.Error: %v", err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
	l, err := agent.New(scripted, agent.WithLimits(agent.Limits{MaxSteps: 1, MaxParallel: 1}), agent.WithContextPolicy(agent.ContextPolicy{}), agent.WithLogger(nil))
	require.NoError(t, err, "the least valid values and zero defaults are accepted")
	require.NoError(t, l.Close())
}

func TestBusyAndClosed(t *testing.T) {
	leakcheck.Check(t)
	llm := replay.NewScripted(replay.Response{Text: "x", Hang: true})
	closed := make(chan struct{})
	holder := tools.Define(tools.Spec{Name: "hold", Description: "keeps state"},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) { return nil, nil })
	loop, s := newSession(t, agent.WithModel(llm), agent.WithTools(holder))
	_, err := tools.LoadState(s.State(), "k", func() io.Closer { return closerFunc(func() error { close(closed); return nil }) })
	require.NoError(t, err)

	running := make(chan struct{})
	done := make(chan *agent.TurnEnd, 1)
	go func() {
		for ev, _ := range s.Run(context.Background(), "hang") {
			if _, ok := ev.(*agent.TextDelta); ok {
				close(running)
			}
			if te, ok := ev.(*agent.TurnEnd); ok {
				done <- te
			}
		}
	}()
	<-running
	_, end, err := collect(t, s, context.Background(), "second")
	assert.ErrorIs(t, err, harness.CodeBusy)
	assert.Equal(t, session.ReasonError, end.Reason)

	require.NoError(t, loop.Close())
	te := <-done
	assert.Equal(t, session.ReasonCancelled, te.Reason, "closing the loop cancels running turns")
	select {
	case <-closed:
	default:
		t.Fatal("closing the loop released the session's tool state")
	}
	_, _, err = collect(t, s, context.Background(), "after close")
	assert.ErrorIs(t, err, harness.CodeClosed)
	_, err = loop.NewSession(context.Background(), session.Header{})
	assert.ErrorIs(t, err, harness.CodeClosed)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func TestCallIDsMadeUnique(t *testing.T) {
	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("", "echo", map[string]any{"text": "a"}), replay.ToolCall("dup", "echo", map[string]any{"text": "b"}), replay.ToolCall("dup", "echo", map[string]any{"text": "c"})),
		replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(echoTool()))
	_, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	res := lastResults(llm.Requests()[1], 3)
	ids := map[string]bool{}
	for i, r := range res {
		assert.NotEmpty(t, r.CallID)
		ids[r.CallID] = true
		assert.Equal(t, "echo: "+string(rune('a'+i)), resultText(r), "each result matches its own call")
	}
	assert.Len(t, ids, 3)
}

func TestToolRecordIsLogged(t *testing.T) {
	rec := tools.Define(tools.Spec{Name: "rec", Description: "records"},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			return harness.TextResult("ok"), call.Env.Record(ctx, call, "opened", map[string]string{"TERM": "dumb"})
		})
	store := session.NewMemory(session.StoreConfig{})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("1", "rec", nil)), replay.Response{Text: "ok"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(rec), agent.WithStores(agent.Stores{Sessions: store}))
	_, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var found *session.ToolRecord
	for _, e := range tr.Events {
		if r, ok := e.Data.(*session.ToolRecord); ok {
			found = r
		}
	}
	require.NotNil(t, found)
	assert.Equal(t, "rec", found.Tool)
	assert.Equal(t, "opened", found.Name)
	assert.JSONEq(t, `{"TERM":"dumb"}`, string(found.Data))
}

func TestMarshalEvent(t *testing.T) {
	b, err := agent.MarshalEvent(&agent.TurnEnd{Reason: "error", Steps: 2, Err: model.NewError(harness.CodeAuth, "bad key", nil)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"turn_end","reason":"error","steps":2,"usage":{"input_tokens":0,"output_tokens":0},"error":{"code":"auth","message":"model: auth: bad key"}}`, string(b))
	// An expired deadline is a timeout, as everywhere (it used to be
	// reported as aborted); a cancellation is aborted.
	b, err = agent.MarshalEvent(&agent.TurnEnd{Reason: "cancelled", Err: fmt.Errorf("turn: %w", context.DeadlineExceeded)})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"error":{"code":"timeout","message":"turn: context deadline exceeded"}`)
	b, err = agent.MarshalEvent(&agent.TurnEnd{Reason: "cancelled", Err: context.Canceled})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"error":{"code":"aborted","message":"context canceled"}`)
	b, err = agent.MarshalEvent(&agent.TextDelta{Step: 1, Text: "hi"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"text_delta","step":1,"text":"hi"}`, string(b))
	assert.True(t, strings.HasPrefix(mustJSON(1), "1"))
}

func TestAfterFuncClosesLoop(t *testing.T) {
	leakcheck.Check(t)
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	llm := replay.NewScripted(replay.Response{Text: "x", Hang: true})
	loop, err := agent.New(agent.WithModel(llm))
	require.NoError(t, err)
	context.AfterFunc(base, func() { loop.Close() }) // the loop lives as long as base
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	var end *agent.TurnEnd
	for ev := range s.Run(context.Background(), "hang") {
		if _, ok := ev.(*agent.TextDelta); ok {
			cancel() // the host's lifetime ends
		}
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCancelled, end.Reason)
	require.Eventually(t, func() bool {
		_, err := loop.NewSession(context.Background(), session.Header{})
		return errors.Is(err, harness.CodeClosed)
	}, time.Minute, 10*time.Millisecond)
}

// Event lines are not escaped for HTML: a command's "&&" or "<" stays as
// it is, in the call, the result and the error alike.
func TestMarshalEventKeepsHTMLCharacters(t *testing.T) {
	tests := []struct {
		name string
		ev   agent.Event
		want []string
	}{
		{"text", &agent.TextDelta{Step: 1, Text: "a && b <c>"}, []string{`"text":"a && b <c>"`}},
		{"tool call end", &agent.ToolCallEnd{Step: 1,
			Call:   harness.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"make && ./run <in >out"}`},
			Result: harness.TextResult("ok && done <eof>")},
			[]string{`make && ./run <in >out`, `ok && done <eof>`}},
		{"turn end error", &agent.TurnEnd{Reason: "error", Err: model.NewError(harness.CodeServer, "a & b <html>", nil)}, []string{`a & b <html>`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := agent.MarshalEvent(tt.ev)
			require.NoError(t, err)
			for _, w := range tt.want {
				assert.Contains(t, string(b), w)
			}
			assert.NotContains(t, string(b), `\u0026`)
			assert.NotContains(t, string(b), `\u003c`)
			assert.False(t, strings.HasSuffix(string(b), "\n"), "one line, without its end")
			var m map[string]any
			require.NoError(t, json.Unmarshal(b, &m))
			assert.Equal(t, agent.KindOf(tt.ev), m["type"])
		})
	}
}
