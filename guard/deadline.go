package guard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Default backstop deadlines by tool family, for tools that declare no
// deadline of their own: tools that wait on remote services get the most
// time, tools that touch only local state the least, tools that run
// programs sit in between. A tool with no family gets the process default.
const (
	defaultLocalDeadline   = time.Minute
	defaultProcessDeadline = 5 * time.Minute
	defaultNetworkDeadline = 10 * time.Minute
)

// defaultGrace is the least time a backstop leaves beyond a tool's own
// declared deadline.
const defaultGrace = 30 * time.Second

// defaultCancelWait is how long a call whose backstop fired (or whose turn
// was cancelled) is given to stop and return its own result before the
// dispatcher stops waiting for it.
const defaultCancelWait = time.Second

// deadlines is the backstop policy: see [Deadlines].
type deadlines struct {
	family     map[tools.Family]time.Duration
	other      time.Duration
	perTool    map[string]time.Duration
	grace      time.Duration
	cancelWait time.Duration
	err        error
}

func (ds *deadlines) fail(msg string) {
	ds.err = errors.Join(ds.err, toolexec.OptionError("%s", msg))
}

// Deadlines returns dispatch middleware that puts a backstop deadline on
// every call, with the defaults changed by cfg. An invalid DeadlineConfig
// is an error (harness.CodeInvalidOption) and no middleware.
//
// The backstop is deliberately loose: a tool's own timeout (Spec.Deadline
// declares the longest it expects to run) should fire first, with an error
// that says more than the backstop can. A tool that declares a deadline
// gets that deadline plus a margin (half of it, and at least the grace,
// 30 s unless changed); a tool that declares none gets its family's
// default: 1 minute for FamilyLocal, 10 minutes for FamilyNetwork, and 5
// minutes for FamilyProcess and for a tool with no or another family. A per-tool setting replaces either.
//
// When the backstop fires, the call's context is cancelled. A tool that
// stops returns its own result, prefixed with what happened; a tool that
// ignores its context is abandoned after the cancel wait (1 s by default)
// and the call returns a timeout result at once, while the abandoned tool
// is reported in the log because it may still be running. The same holds
// when the turn is cancelled. A tool that declares side effects is said to
// have unknown side effects, so the model checks before retrying.
//
// The agent loop keeps a looser backstop of its own beneath this one
// (agent.Limits: 15 minutes for tools that declare no deadline, twice
// a declared deadline and at least a minute more), which the defaults
// here always stay inside. A family or tool backstop longer than the
// loop's is cut short by it: raise Limits.Backstop with it.
func Deadlines(cfg DeadlineConfig) (tools.Middleware, error) {
	ds, err := newDeadlines(cfg)
	if err != nil {
		return nil, err
	}
	return func(next tools.Handler) tools.Handler {
		return tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			return ds.handle(ctx, call, next)
		})
	}, nil
}

func newDeadlines(cfg DeadlineConfig) (*deadlines, error) {
	ds := &deadlines{
		family: map[tools.Family]time.Duration{
			tools.FamilyLocal:   defaultLocalDeadline,
			tools.FamilyProcess: defaultProcessDeadline,
			tools.FamilyNetwork: defaultNetworkDeadline,
		},
		other:      defaultProcessDeadline,
		perTool:    map[string]time.Duration{},
		grace:      defaultGrace,
		cancelWait: defaultCancelWait,
	}
	for _, f := range slices.Sorted(maps.Keys(cfg.Families)) {
		if d := cfg.Families[f]; d < 0 {
			ds.fail(fmt.Sprintf("guard: DeadlineConfig.Families[%q] is %s: the deadline must not be negative (zero means no backstop)", f, d))
		} else if f == "" {
			ds.other = d
		} else {
			ds.family[f] = d
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		if d := cfg.Tools[name]; d < 0 {
			ds.fail(fmt.Sprintf("guard: DeadlineConfig.Tools[%q] is %s: the deadline must not be negative (zero means no backstop)", name, d))
		} else {
			ds.perTool[name] = d
		}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
		into *time.Duration
	}{{"Grace", cfg.Grace, &ds.grace}, {"CancelWait", cfg.CancelWait, &ds.cancelWait}} {
		switch {
		case f.d < 0:
			ds.fail(fmt.Sprintf("guard: DeadlineConfig.%s is %s: it must not be negative (zero means the default)", f.name, f.d))
		case f.d > 0:
			*f.into = f.d
		}
	}
	return ds, ds.err
}

// backstop returns the backstop deadline of calls of a tool; zero means
// none.
func (ds *deadlines) backstop(spec tools.Spec) time.Duration {
	if d, ok := ds.perTool[spec.Name]; ok {
		return d
	}
	if spec.Deadline > 0 {
		return spec.Deadline + max(spec.Deadline/2, ds.grace)
	}
	if d, ok := ds.family[spec.Family]; ok {
		return d
	}
	return ds.other
}

func (ds *deadlines) handle(ctx context.Context, call *tools.Call, next tools.Handler) *harness.ToolResult {
	limit := ds.backstop(call.Spec)
	var cctx context.Context
	var cancel context.CancelFunc
	if limit > 0 {
		cctx, cancel = context.WithTimeout(ctx, limit)
	} else {
		cctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	start := time.Now()
	done := make(chan *harness.ToolResult, 1) // never blocks the tool's goroutine
	var abandoned atomic.Bool
	go func() {
		var res *harness.ToolResult
		defer func() {
			if p := recover(); p != nil {
				res = toolexec.PanicResult(call, p)
			}
			done <- res
			if abandoned.Load() {
				toolexec.Logger(call.Env).Info("an abandoned tool call finished",
					"tool", call.Name, "call_id", call.ID, "after", time.Since(start).Round(time.Millisecond))
			}
		}()
		res = next(cctx, call)
	}()

	select {
	case res := <-done:
		if res == nil || cctx.Err() == nil || ctx.Err() != nil || !res.IsError {
			// Finished in time, cancelled with its turn (its own result
			// says so), or finished successfully at the last moment.
			return res
		}
		// The tool stopped when the backstop fired: say so first.
		return ds.stopped(call, limit, res, false)
	case <-cctx.Done():
	}
	wait := time.NewTimer(ds.cancelWait)
	defer wait.Stop()
	select {
	case res := <-done:
		if res == nil || !res.IsError {
			return res
		}
		if ctx.Err() != nil {
			return res // the turn was cancelled and the tool stopped: its own result says so
		}
		return ds.stopped(call, limit, res, false)
	case <-wait.C:
	}
	abandoned.Store(true)
	toolexec.Logger(call.Env).Warn("a tool call did not stop when cancelled and was abandoned; it may still be running",
		"tool", call.Name, "call_id", call.ID, "backstop", limit, "turn_cancelled", ctx.Err() != nil,
		"waited", ds.cancelWait)
	if ctx.Err() != nil {
		return cancelledResult(call)
	}
	return ds.stopped(call, limit, nil, true)
}

// stopped is the result of a call its backstop cut off. own is what the
// tool returned when it stopped, if it did.
func (ds *deadlines) stopped(call *tools.Call, limit time.Duration, own *harness.ToolResult, running bool) *harness.ToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "The %s call was stopped after %s, the time limit the harness allows it.", call.Name, limit)
	if running {
		b.WriteString(" It did not stop when asked and may still be running in the background.")
	}
	if call.Spec.SideEffects {
		b.WriteString(" Its side effects are unknown: check the state it may have changed before retrying.")
	} else {
		b.WriteString(" It has no side effects, so it is safe to retry; if it keeps running out of time, ask for less at once or take another approach.")
	}
	res := &harness.ToolResult{IsError: true, Code: harness.CodeTimeout}
	if own != nil {
		res.Render, res.Files = own.Render, own.Files
		if text := own.Text(); text != "" {
			b.WriteString("\n\nWhat the tool reported when it stopped:\n")
			b.WriteString(text)
		}
		for _, c := range own.Content {
			if c.Type != harness.BlockText {
				res.Content = append(res.Content, c)
			}
		}
	}
	res.Content = append([]harness.Block{harness.TextBlock(b.String())}, res.Content...)
	return res
}

func cancelledResult(call *tools.Call) *harness.ToolResult {
	msg := fmt.Sprintf("The %s call was cancelled with its turn. It did not stop when asked and may still be running in the background.", call.Name)
	if call.Spec.SideEffects {
		msg += " Its side effects are unknown: check the state it may have changed before retrying."
	}
	return &harness.ToolResult{IsError: true, Code: harness.CodeAborted, Content: []harness.Block{harness.TextBlock(msg)}}
}
