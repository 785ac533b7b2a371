package guard_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// deadlines returns the deadline middleware with cfg, which must be
// valid.
func deadlines(t *testing.T, cfg guard.DeadlineConfig) tools.Middleware {
	t.Helper()
	mw, err := guard.Deadlines(cfg)
	require.NoError(t, err)
	return mw
}

// backstop returns the backstop a call of spec gets from mw: the time
// left on the context the tool runs with, to the second (zero when it has
// no deadline).
func backstop(t *testing.T, mw tools.Middleware, spec tools.Spec) time.Duration {
	t.Helper()
	var left time.Duration
	before := time.Now()
	mw(tools.Handler(func(ctx context.Context, c *tools.Call) *harness.ToolResult {
		if d, ok := ctx.Deadline(); ok {
			left = d.Sub(before).Round(time.Second)
		}
		return harness.TextResult("ok")
	}))(context.Background(), &tools.Call{Name: spec.Name, Spec: spec, Env: &tools.Env{}})
	return left
}

func TestBackstopDurations(t *testing.T) {
	ds := deadlines(t, guard.DeadlineConfig{})
	for _, tc := range []struct {
		name string
		spec tools.Spec
		want time.Duration
	}{
		{"local family", tools.Spec{Name: "read", Family: tools.FamilyLocal}, guard.DefaultLocalDeadline},
		{"process family", tools.Spec{Name: "run", Family: tools.FamilyProcess}, guard.DefaultProcessDeadline},
		{"network family", tools.Spec{Name: "fetch", Family: tools.FamilyNetwork}, guard.DefaultNetworkDeadline},
		{"no family", tools.Spec{Name: "x"}, guard.DefaultProcessDeadline},
		{"unknown family", tools.Spec{Name: "x", Family: "gpu"}, guard.DefaultProcessDeadline},
		{"declared short: grace", tools.Spec{Name: "grep", Family: tools.FamilyLocal, Deadline: 10 * time.Second}, 40 * time.Second},
		{"declared long: half again", tools.Spec{Name: "bash", Family: tools.FamilyProcess, Deadline: 10 * time.Minute}, 15 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := backstop(t, ds, tc.spec)
			assert.Equal(t, tc.want, got)
			if tc.spec.Deadline > 0 {
				assert.Greater(t, got, tc.spec.Deadline, "the backstop is well above the tool's own deadline")
			}
		})
	}
	assert.Greater(t, guard.DefaultNetworkDeadline, guard.DefaultProcessDeadline)
	assert.Greater(t, guard.DefaultProcessDeadline, guard.DefaultLocalDeadline)

	ds = deadlines(t, guard.DeadlineConfig{
		Families: map[tools.Family]time.Duration{tools.FamilyNetwork: time.Hour, "": 2 * time.Minute},
		Tools:    map[string]time.Duration{"bash": 3 * time.Minute, "forever": 0},
		Grace:    time.Minute,
	})
	assert.Equal(t, time.Hour, backstop(t, ds, tools.Spec{Name: "fetch", Family: tools.FamilyNetwork}))
	assert.Equal(t, 2*time.Minute, backstop(t, ds, tools.Spec{Name: "x"}))
	assert.Equal(t, 3*time.Minute, backstop(t, ds, tools.Spec{Name: "bash", Family: tools.FamilyProcess, Deadline: 10 * time.Minute}), "per tool wins")
	assert.Zero(t, backstop(t, ds, tools.Spec{Name: "forever", Family: tools.FamilyLocal}), "no backstop")
	assert.Equal(t, 70*time.Second, backstop(t, ds, tools.Spec{Name: "grep", Deadline: 10 * time.Second}), "the grace is the least margin")
}

func TestDeadlineConfigRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  guard.DeadlineConfig
		want string
	}{
		{"family", guard.DeadlineConfig{Families: map[tools.Family]time.Duration{tools.FamilyLocal: -time.Second}}, `DeadlineConfig.Families["local"] is -1s`},
		{"tool", guard.DeadlineConfig{Tools: map[string]time.Duration{"bash": -1}}, `DeadlineConfig.Tools["bash"] is -1ns`},
		{"grace", guard.DeadlineConfig{Grace: -time.Second}, "DeadlineConfig.Grace is -1s"},
		{"cancel wait", guard.DeadlineConfig{CancelWait: -time.Millisecond}, "DeadlineConfig.CancelWait is -1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mw, err := guard.Deadlines(tc.cfg)
			require.Error(t, err)
			assert.Nil(t, mw)
			assert.ErrorIs(t, err, harness.CodeInvalidOption)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Zero is a value, not a mistake: no backstop for a tool, the
	// default grace and wait.
	_, err := guard.Deadlines(guard.DeadlineConfig{Tools: map[string]time.Duration{"free": 0}})
	assert.NoError(t, err)
	_, err = guard.Deadlines(guard.DeadlineConfig{})
	assert.NoError(t, err)
}

// handle runs one call through the deadline middleware around fn.
func handle(ctx context.Context, ds tools.Middleware, spec tools.Spec, logs *logBuffer, fn func(ctx context.Context) *harness.ToolResult) *harness.ToolResult {
	env := &tools.Env{SessionID: "s", State: &tools.State{}, Logger: slog.New(slog.DiscardHandler)}
	if logs != nil {
		env.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	call := &tools.Call{ID: "call_1", Name: spec.Name, Arguments: "{}", Spec: spec, Env: env}
	h := ds(tools.Handler(func(ctx context.Context, c *tools.Call) *harness.ToolResult { return fn(ctx) }))
	return h(ctx, call)
}

func TestToolIgnoringContextIsCutOff(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the leak check
	ds := deadlines(t, guard.DeadlineConfig{Tools: map[string]time.Duration{"stuck": time.Millisecond}, CancelWait: time.Millisecond})
	for _, sideEffects := range []bool{true, false} {
		var logs logBuffer
		res := handle(context.Background(), ds, tools.Spec{Name: "stuck", SideEffects: sideEffects}, &logs, func(ctx context.Context) *harness.ToolResult {
			<-release // ignores ctx
			return harness.TextResult("too late")
		})
		require.True(t, res.IsError)
		assert.Equal(t, harness.CodeTimeout, res.Code)
		assert.Contains(t, res.Text(), "The stuck call was stopped after 1ms")
		assert.Contains(t, res.Text(), "did not stop when asked and may still be running")
		if sideEffects {
			assert.Contains(t, res.Text(), "Its side effects are unknown")
		} else {
			assert.Contains(t, res.Text(), "no side effects, so it is safe to retry")
			assert.NotContains(t, res.Text(), "side effects are unknown")
		}
		assert.Contains(t, logs.String(), "level=WARN")
		assert.Contains(t, logs.String(), "did not stop when cancelled")
		assert.Contains(t, logs.String(), "tool=stuck")
	}
}

func TestWellBehavedToolStopsWithItsOwnResult(t *testing.T) {
	leakcheck.Check(t)
	ds := deadlines(t, guard.DeadlineConfig{Tools: map[string]time.Duration{"slow": time.Millisecond}, CancelWait: time.Minute})
	var logs logBuffer
	res := handle(context.Background(), ds, tools.Spec{Name: "slow", SideEffects: true}, &logs, func(ctx context.Context) *harness.ToolResult {
		<-ctx.Done()
		return &harness.ToolResult{IsError: true, Code: harness.CodeTimeout,
			Content: []harness.Block{harness.TextBlock("partial output: 42 lines")},
			Render:  &harness.Render{Kind: harness.RenderTerminal}}
	})
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeTimeout, res.Code)
	assert.Contains(t, res.Text(), "stopped after 1ms")
	assert.Contains(t, res.Text(), "side effects are unknown")
	assert.Contains(t, res.Text(), "partial output: 42 lines", "the tool's own report is kept")
	assert.NotContains(t, res.Text(), "may still be running")
	assert.NotNil(t, res.Render)
	assert.NotContains(t, logs.String(), "did not stop")
}

func TestInnerTimeoutWins(t *testing.T) {
	leakcheck.Check(t)
	ds := deadlines(t, guard.DeadlineConfig{Grace: time.Hour})
	spec := tools.Spec{Name: "bash", SideEffects: true, Deadline: time.Millisecond}
	res := handle(context.Background(), ds, spec, nil, func(ctx context.Context) *harness.ToolResult {
		inner, cancel := context.WithTimeout(ctx, spec.Deadline)
		defer cancel()
		<-inner.Done()
		return harness.ErrorResult("command_timeout", "The command timed out after 1ms; output so far: building...")
	})
	assert.Equal(t, harness.Code("command_timeout"), res.Code)
	assert.Equal(t, "The command timed out after 1ms; output so far: building...", res.Text(), "the tool's own, more specific error reaches the model unchanged")
}

func TestFinishesInTime(t *testing.T) {
	leakcheck.Check(t)
	ds := deadlines(t, guard.DeadlineConfig{})
	var sawDeadline bool
	for range 200 {
		res := handle(context.Background(), ds, tools.Spec{Name: "read", Family: tools.FamilyLocal}, nil, func(ctx context.Context) *harness.ToolResult {
			_, sawDeadline = ctx.Deadline()
			return harness.TextResult("content")
		})
		require.Equal(t, "content", res.Text())
	}
	assert.True(t, sawDeadline, "the tool's context carries the backstop")
	// A tool with no backstop gets no deadline.
	ds = deadlines(t, guard.DeadlineConfig{Tools: map[string]time.Duration{"free": 0}})
	handle(context.Background(), ds, tools.Spec{Name: "free"}, nil, func(ctx context.Context) *harness.ToolResult {
		_, sawDeadline = ctx.Deadline()
		return harness.TextResult("")
	})
	assert.False(t, sawDeadline)
}

func TestTurnCancelled(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	ds := deadlines(t, guard.DeadlineConfig{CancelWait: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go func() { <-started; cancel() }()
	var logs logBuffer
	res := handle(ctx, ds, tools.Spec{Name: "deploy", SideEffects: true}, &logs, func(context.Context) *harness.ToolResult {
		close(started)
		<-release
		return harness.TextResult("deployed")
	})
	assert.Equal(t, harness.CodeAborted, res.Code)
	assert.Contains(t, res.Text(), "cancelled with its turn")
	assert.Contains(t, res.Text(), "may still be running")
	assert.Contains(t, res.Text(), "side effects are unknown")
	assert.Contains(t, logs.String(), "turn_cancelled=true")

	// A tool that stops on cancellation keeps its own result. Its wait is
	// long, so a slow machine cannot turn the prompt stop into a late one.
	ds = deadlines(t, guard.DeadlineConfig{CancelWait: time.Minute})
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	res = handle(ctx, ds, tools.Spec{Name: "deploy"}, nil, func(ctx context.Context) *harness.ToolResult {
		<-ctx.Done()
		return toolexec.Normalize(&tools.Call{Name: "deploy"}, nil, ctx.Err())
	})
	assert.Equal(t, harness.CodeAborted, res.Code)
	assert.Contains(t, res.Text(), "cancelled before it finished")
}

func TestPanicInGuardedTool(t *testing.T) {
	leakcheck.Check(t)
	res := handle(context.Background(), deadlines(t, guard.DeadlineConfig{}), tools.Spec{Name: "boom"}, nil, func(context.Context) *harness.ToolResult {
		panic("kaboom")
	})
	assert.Equal(t, harness.CodeToolPanic, res.Code)
	assert.Contains(t, res.Text(), "kaboom")
}

// TestDeadlinesInTheLoop: a tool that ignores its context does not hang
// the turn; the model gets the timeout result and the turn goes on.
func TestDeadlinesInTheLoop(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	stuck := tools.Define(tools.Spec{Name: "stuck", Description: "Never returns in time.", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			<-release
			return nil, errors.New("late")
		})
	model := replay.NewScripted(replay.Call(replay.ToolCall("c1", "stuck", nil)), replay.Response{Text: "it timed out"})
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(stuck),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{deadlines(t, guard.DeadlineConfig{Tools: map[string]time.Duration{"stuck": time.Millisecond}, CancelWait: time.Millisecond})}}))
	require.NoError(t, err)
	t.Cleanup(func() { close(release); loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	var end *agent.ToolCallEnd
	for ev, err := range s.Run(context.Background(), "go") {
		require.NoError(t, err)
		if e, ok := ev.(*agent.ToolCallEnd); ok {
			end = e
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, harness.CodeTimeout, end.Result.Code)
	assert.Contains(t, end.Result.Text(), "side effects are unknown")
	assert.Len(t, model.Requests(), 2, "the turn went on to the next model call")
}
