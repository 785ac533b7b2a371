package guard

import (
	"context"
	"fmt"
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
	DefaultLocalDeadline   = time.Minute
	DefaultProcessDeadline = 5 * time.Minute
	DefaultNetworkDeadline = 10 * time.Minute
)

// DefaultGrace is the least time a backstop leaves beyond a tool's own
// declared deadline.
const DefaultGrace = 30 * time.Second

// DefaultCancelWait is how long a call whose backstop fired (or whose turn
// was cancelled) is given to stop and return its own result before the
// dispatcher stops waiting for it.
const DefaultCancelWait = time.Second

// Deadlines puts a backstop deadline on every call at the dispatch point.
//
// The backstop is deliberately loose: a tool's own timeout (Spec.Deadline
// declares the longest it expects to run) should fire first, with an error
// that says more than the backstop can. A tool that declares a deadline
// gets that deadline plus a margin (half of it, and at least the grace,
// DefaultGrace unless changed); a tool that declares none gets its
// family's default. A per-tool setting replaces either.
//
// When the backstop fires, the call's context is cancelled. A tool that
// stops returns its own result, prefixed with what happened; a tool that
// ignores its context is abandoned after the cancel wait (DefaultCancelWait)
// and the call returns a timeout result at once, while the abandoned tool
// is reported in the log because it may still be running. The same holds
// when the turn is cancelled. A tool that declares side effects is said to
// have unknown side effects, so the model checks before retrying.
//
// The agent loop keeps a looser backstop of its own beneath this one
// (agent.CallLimits: 15 minutes for tools that declare no deadline, twice
// a declared deadline and at least a minute more), which the defaults
// here always stay inside. A FamilyDeadline or ToolDeadline longer than
// the loop's backstop is cut short by it: raise CallLimits.Backstop with
// it.
type Deadlines struct {
	family     map[tools.Family]time.Duration
	other      time.Duration
	perTool    map[string]time.Duration
	grace      time.Duration
	cancelWait time.Duration
}

// DeadlineOption configures Deadlines.
type DeadlineOption func(*Deadlines)

// FamilyDeadline sets the backstop of tools of a family that declare no
// deadline. The empty family is tools that declare none.
func FamilyDeadline(f tools.Family, d time.Duration) DeadlineOption {
	return func(ds *Deadlines) {
		if f == "" {
			ds.other = d
		} else {
			ds.family[f] = d
		}
	}
}

// ToolDeadline sets the backstop of one tool by name, whatever it
// declares. Zero or less means no backstop for it.
func ToolDeadline(name string, d time.Duration) DeadlineOption {
	return func(ds *Deadlines) { ds.perTool[name] = d }
}

// DeadlineGrace sets the least margin a backstop leaves beyond a tool's
// declared deadline.
func DeadlineGrace(d time.Duration) DeadlineOption {
	return func(ds *Deadlines) { ds.grace = max(d, 0) }
}

// CancelWait sets how long a cancelled call may take to return its own
// result before it is abandoned. Zero abandons it at once.
func CancelWait(d time.Duration) DeadlineOption {
	return func(ds *Deadlines) { ds.cancelWait = max(d, 0) }
}

// NewDeadlines returns the backstop policy with the defaults changed by
// opts.
func NewDeadlines(opts ...DeadlineOption) *Deadlines {
	ds := &Deadlines{
		family: map[tools.Family]time.Duration{
			tools.FamilyLocal:   DefaultLocalDeadline,
			tools.FamilyProcess: DefaultProcessDeadline,
			tools.FamilyNetwork: DefaultNetworkDeadline,
		},
		other:      DefaultProcessDeadline,
		perTool:    map[string]time.Duration{},
		grace:      DefaultGrace,
		cancelWait: DefaultCancelWait,
	}
	for _, o := range opts {
		if o != nil {
			o(ds)
		}
	}
	return ds
}

// Backstop returns the backstop deadline of calls of a tool; zero means
// none.
func (ds *Deadlines) Backstop(spec tools.Spec) time.Duration {
	if d, ok := ds.perTool[spec.Name]; ok {
		return max(d, 0)
	}
	if spec.Deadline > 0 {
		return spec.Deadline + max(spec.Deadline/2, ds.grace)
	}
	if d, ok := ds.family[spec.Family]; ok {
		return max(d, 0)
	}
	return max(ds.other, 0)
}

// Middleware returns the backstop as dispatch middleware.
func (ds *Deadlines) Middleware() tools.Middleware {
	return func(next tools.Handler) tools.Handler {
		return tools.HandlerFunc(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			return ds.handle(ctx, call, next)
		})
	}
}

func (ds *Deadlines) handle(ctx context.Context, call *tools.Call, next tools.Handler) *harness.ToolResult {
	limit := ds.Backstop(call.Spec)
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
		res = next.Handle(cctx, call)
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
func (ds *Deadlines) stopped(call *tools.Call, limit time.Duration, own *harness.ToolResult, running bool) *harness.ToolResult {
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
