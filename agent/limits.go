package agent

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// Call limit defaults.
const (
	// defaultCallBackstop is the longest the loop waits for a call whose
	// tool declares no deadline: above every family default of the
	// optional deadline middleware, so that one fires first when it is
	// installed.
	defaultCallBackstop = 15 * time.Minute
	// defaultBackstopMargin scales a tool's declared deadline into its
	// backstop.
	defaultBackstopMargin = 2.0
	// minBackstopGrace is the least time a backstop leaves beyond a
	// tool's declared deadline.
	minBackstopGrace = time.Minute
	// defaultCancelWait is how long a cancelled call may take to return
	// before it is abandoned.
	defaultCancelWait = 2 * time.Second
	// defaultCloseWait is how long Close waits for a running turn to end
	// after cancelling it.
	defaultCloseWait = 5 * time.Second
)

// Limits bound a turn, whatever middleware is installed: how many model
// calls it makes, how a failed model call is retried, how many tool calls
// run at once, how long the loop waits for them, and how long Close waits
// for a running turn. The call limits are the dispatcher's last resort
// against a tool that ignores its context; a deadline middleware (the
// guard package's) should fire well before them and say more.
//
// Every call runs under a backstop: Margin times the tool's declared
// deadline (Spec.Deadline), and at least that deadline plus
// a minute, or Backstop for a tool that declares none. When the
// backstop passes, or the turn is cancelled, the call's context is
// cancelled and the call gets CancelWait to return. A call that has not
// returned by then is abandoned: its result says it did not stop and may
// still be running (and, for a tool with side effects, that its outcome is
// unknown), the turn goes on, and the goroutine running it is left to
// finish on its own, logged when it does, never waited for.
//
// A zero field means its default. A negative field, a Margin below 1, or
// a Retry with a negative field, is a configuration error reported by New.
type Limits struct {
	// MaxSteps is how many model calls one turn may make. Zero means 200:
	// generous, so it only stops runaway turns. When a turn reaches it, it
	// ends with reason step_limit.
	MaxSteps int
	// Retry is how a failed model call is retried. Nil means 4 retries,
	// starting at 1 s, each delay capped at 60 s; &RetryPolicy{} never
	// retries.
	Retry *RetryPolicy
	// MaxParallel is how many concurrency-safe calls of one step run at
	// once. Zero means 8.
	MaxParallel int
	// Backstop is the longest the loop waits for a call whose tool
	// declares no deadline. Zero means 15 minutes, above every family
	// default of the guard package's deadline middleware, so that one fires
	// first when it is installed.
	Backstop time.Duration
	// Margin scales a declared deadline into the tool's backstop. Zero
	// means 2.
	Margin float64
	// CancelWait is how long a call whose context was cancelled (its
	// backstop passed or its turn was cancelled) may take to return
	// before it is abandoned. Zero means 2 seconds.
	CancelWait time.Duration
	// CloseWait is how long Session.Close and Loop.Close wait for a
	// running turn to end after cancelling it. Zero means
	// 5 seconds. Keep it above CancelWait, so that a turn whose
	// tools ignore cancellation can still log its end before Close gives
	// up on it.
	CloseWait time.Duration
}

// WithLimits sets the limits of the loop's turns: each non-zero field of
// l replaces the default, or what an earlier WithLimits set. See Limits.
func WithLimits(l Limits) Option {
	return func(c *config) {
		set := func(dst *time.Duration, v time.Duration) {
			if v != 0 {
				*dst = v
			}
		}
		if l.MaxSteps != 0 {
			c.limits.MaxSteps = l.MaxSteps
		}
		if l.Retry != nil {
			c.limits.Retry = l.Retry
		}
		if l.MaxParallel != 0 {
			c.limits.MaxParallel = l.MaxParallel
		}
		if l.Margin != 0 {
			c.limits.Margin = l.Margin
		}
		set(&c.limits.Backstop, l.Backstop)
		set(&c.limits.CancelWait, l.CancelWait)
		set(&c.limits.CloseWait, l.CloseWait)
	}
}

func (l Limits) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Backstop", l.Backstop}, {"CancelWait", l.CancelWait}, {"CloseWait", l.CloseWait}} {
		if f.d < 0 {
			errs = append(errs, optionError("WithLimits: Limits.%s is %s; it must not be negative (zero means the default)", f.name, f.d))
		}
	}
	if l.MaxParallel < 0 {
		errs = append(errs, optionError("WithLimits: Limits.MaxParallel is %d; it must not be negative (zero means the default)", l.MaxParallel))
	}
	if l.Margin != 0 && !(l.Margin >= 1) { // also refuses NaN
		errs = append(errs, optionError("WithLimits: Limits.Margin is %v; it must be at least 1 (zero means the default)", l.Margin))
	}
	if l.MaxSteps < 0 {
		errs = append(errs, optionError("WithLimits: Limits.MaxSteps is %d; a turn needs at least 1 step (zero means the default)", l.MaxSteps))
	}
	if l.Retry != nil {
		if err := l.Retry.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (l Limits) withDefaults() Limits {
	if l.MaxParallel <= 0 {
		l.MaxParallel = defaultMaxParallelTools
	}
	if l.Backstop <= 0 {
		l.Backstop = defaultCallBackstop
	}
	if l.Margin < 1 {
		l.Margin = defaultBackstopMargin
	}
	if l.CancelWait <= 0 {
		l.CancelWait = defaultCancelWait
	}
	if l.CloseWait <= 0 {
		l.CloseWait = defaultCloseWait
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = defaultMaxSteps
	}
	if l.Retry == nil {
		r := defaultRetryPolicy()
		l.Retry = &r
	}
	return l
}

// backstop returns the backstop of calls of a tool.
func (l Limits) backstop(spec tools.Spec) time.Duration {
	l = l.withDefaults()
	if spec.Deadline <= 0 {
		return l.Backstop
	}
	const longest = time.Duration(math.MaxInt64)
	scaled := longest
	if f := float64(spec.Deadline) * l.Margin; f < float64(longest) {
		scaled = time.Duration(f)
	}
	floor := longest
	if spec.Deadline < longest-minBackstopGrace {
		floor = spec.Deadline + minBackstopGrace
	}
	return max(scaled, floor)
}

// abandonedCall is a tool call the loop stopped waiting for: it ignored
// the cancellation of its context and may still be running.
type abandonedCall struct {
	Tool   string
	CallID string
	Step   int
	Since  time.Time // when it was abandoned
}

// errAbandoned is returned by Close when tool calls the loop abandoned
// are still running: they ignored their cancelled context, so whatever
// they hold (processes, files, connections) may outlive the session. It
// matches harness.CodeNotStopped and names the calls.
func errAbandoned(calls []abandonedCall) error {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = fmt.Sprintf("%s (call %s)", c.Tool, c.CallID)
	}
	n := "call"
	if len(calls) != 1 {
		n = "calls"
	}
	return &harness.Error{Code: harness.CodeNotStopped, Message: fmt.Sprintf("agent: closed with %d abandoned tool %s still running, which did not stop when cancelled: %s",
		len(calls), n, strings.Join(names, ", "))}
}

// errTurnDidNotStop is returned by Close when the running turn did not
// end within the close wait (Limits.CloseWait) after it was
// cancelled: a model stream or a session store that ignores
// cancellation. It matches harness.CodeNotStopped. The session's log is
// closed when the turn ends.
func errTurnDidNotStop() error {
	return &harness.Error{Code: harness.CodeNotStopped, Message: "agent: the running turn did not stop within the close wait; the session log is closed when it ends"}
}

// runningCall is one call's execution, which the dispatcher may abandon.
type runningCall struct {
	tool, id string
	step     int
	done     chan *harness.ToolResult // buffered: the worker never blocks

	mu        sync.Mutex
	finished  bool
	abandoned bool
	since     time.Time
}

// finish hands the worker's result over, or, when the call was abandoned
// meanwhile, lets the session forget it.
func (r *runningCall) finish(s *Session, res *harness.ToolResult) {
	r.mu.Lock()
	r.finished = true
	abandoned := r.abandoned
	r.mu.Unlock()
	if !abandoned {
		r.done <- res
		return
	}
	s.forgetAbandoned(r)
	s.logger.Info("an abandoned tool call finished", "tool", r.tool, "call_id", r.id,
		"after_abandoning", time.Since(r.since).Round(time.Millisecond))
}

// abandon marks the call abandoned and registers it with the session. It
// reports false when the call finished meanwhile; its result is then on
// done.
func (r *runningCall) abandon(s *Session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return false
	}
	r.abandoned, r.since = true, time.Now()
	s.rememberAbandoned(r)
	return true
}

func (s *Session) rememberAbandoned(r *runningCall) {
	s.abMu.Lock()
	defer s.abMu.Unlock()
	if s.abandoned == nil {
		s.abandoned = map[*runningCall]struct{}{}
	}
	s.abandoned[r] = struct{}{}
}

func (s *Session) forgetAbandoned(r *runningCall) {
	s.abMu.Lock()
	defer s.abMu.Unlock()
	delete(s.abandoned, r)
}

// abandonedCalls returns the tool calls the loop abandoned that are still
// running, oldest first; Close reports them (errAbandoned).
func (s *Session) abandonedCalls() []abandonedCall {
	s.abMu.Lock()
	out := make([]abandonedCall, 0, len(s.abandoned))
	for r := range s.abandoned {
		out = append(out, abandonedCall{Tool: r.tool, CallID: r.id, Step: r.step, Since: r.since})
	}
	s.abMu.Unlock()
	slices.SortFunc(out, func(a, b abandonedCall) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.CallID, b.CallID)
	})
	return out
}
