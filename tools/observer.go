package tools

import "context"

// Reminder is advisory text the harness adds for the model after a step's
// tool results. It is logged like everything the model sees.
type Reminder struct {
	// Source names what added it ("repeat_guard", say).
	Source string `json:"source"`
	Text   string `json:"text"`
}

// Step is one step's tool calls and their results, in call order.
// Calls that failed the registry's checks are included, with a zero Spec.
type Step struct {
	Env     *Env
	Number  int
	Calls   []*Call
	Results []*Result
}

// StepObserver sees every step's calls and results once they have all
// finished, and may return reminders to append after the results. It is
// where advisory guards (repeated calls, failure streaks) plug in: unlike
// a Middleware, it sees the calls of a step in order even when they ran
// in parallel. Keep per-session state in Env.State.
type StepObserver interface {
	ObserveStep(ctx context.Context, step *Step) []Reminder
}

// StepObserverFunc adapts a function to a StepObserver.
type StepObserverFunc func(ctx context.Context, step *Step) []Reminder

// ObserveStep calls f.
func (f StepObserverFunc) ObserveStep(ctx context.Context, step *Step) []Reminder {
	return f(ctx, step)
}
