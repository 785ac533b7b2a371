package tools

import (
	"context"

	"github.com/go-harness/harness"
)

// Step is one step's tool calls and their results, in call order.
// Calls that failed the registry's checks are included, with a zero Spec
// (Args decodes their arguments again, when it can).
type Step struct {
	Env     *Env
	Number  int
	Calls   []*Call
	Results []*harness.ToolResult
}

// StepObserver sees every step's calls and results once they have all
// finished, and may return reminders to append after the results. It is
// where advisory guards (repeated calls, failure streaks) plug in: unlike
// a Middleware, it sees the calls of a step in order even when they ran
// in parallel. Keep per-session state in Env.State.
type StepObserver func(ctx context.Context, step *Step) []harness.Reminder
