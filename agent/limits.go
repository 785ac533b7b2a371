package agent

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"

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
	// Budget caps what model calls spend, per turn and per session (see
	// Budgets). When a turn reaches one, it pauses before its next model
	// call: a BudgetReached event, then a TurnEnd with reason
	// awaiting_budget, and Session.Answer with a raised Answers.Budget
	// (in this process, or in another after ResumeSession) continues
	// it. A sub-agent's turn gets what is left of its parent's budgets,
	// and stops at it. Zero caps nothing.
	Budget Budgets
	// HardBudget makes the budgets hard ceilings: a turn that reaches one
	// ends with reason budget_exceeded and an error matching
	// CodeBudgetExceeded instead of pausing.
	HardBudget bool
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
		if l.Budget.Turn.Cost != 0 {
			c.limits.Budget.Turn.Cost = l.Budget.Turn.Cost
		}
		if l.Budget.Turn.Tokens != 0 {
			c.limits.Budget.Turn.Tokens = l.Budget.Turn.Tokens
		}
		if l.Budget.Session.Cost != 0 {
			c.limits.Budget.Session.Cost = l.Budget.Session.Cost
		}
		if l.Budget.Session.Tokens != 0 {
			c.limits.Budget.Session.Tokens = l.Budget.Session.Tokens
		}
		if l.HardBudget {
			c.limits.HardBudget = true
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

// RetryPolicy bounds how a failed model call is retried (Limits.Retry). Only failures
// whose code (harness.CodeOf) is CodeRateLimit, CodeServer,
// CodeTransport, CodeEmptyResponse or CodeTruncatedStream are retried.
type RetryPolicy struct {
	// MaxRetries is how many times one model call is retried; 0 means
	// never.
	MaxRetries int
	// BaseDelay is the delay before the first retry; each further retry
	// doubles it, with jitter.
	BaseDelay time.Duration
	// MaxDelay caps one delay, a provider's Retry-After hint included.
	MaxDelay time.Duration
}

// defaultRetryPolicy retries 4 times, starting at 1 s, capped at 60 s.
func defaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 4, BaseDelay: time.Second, MaxDelay: time.Minute}
}

func (p RetryPolicy) validate() error {
	if p.MaxRetries < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
		return optionError("WithLimits: Limits.Retry is %+v; the retries and delays must not be negative", p)
	}
	return nil
}

// delay returns how long to wait before retry number attempt (1-based):
// exponential from BaseDelay with jitter in [d/2, d], at least the
// provider's Retry-After hint (hint), never more than MaxDelay.
func (p RetryPolicy) delay(attempt int, hint time.Duration) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	if d > 0 {
		d = d/2 + rand.N(d/2+1)
	}
	if hint > d {
		d = hint
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d
}
