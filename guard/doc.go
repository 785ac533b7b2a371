// Package guard keeps an agent loop from wasting its budget: reminders
// when the model repeats itself or keeps failing, and backstop deadlines
// so that no tool call can hang a turn.
//
// # Reminders
//
// [RepeatGuard] and [FailureGuard] return tools.StepObservers. The loop
// shows them each step's calls and results in call order, and appends
// the reminders they return after the step's tool results, where the
// model reads them. The loop logs the reminders like everything else the
// model sees, so a resumed session rebuilds the same history.
//
// Both only advise. Nothing is blocked or rewritten, and a wrong guess
// costs a few dozen tokens.
//
// The repeat guard counts runs of calls with the same tool name and the
// same arguments, compared canonically (object keys sorted at every
// level, numbers in one form). It reminds the model at 3, 5 and 8 in a
// row: briefly first, then naming the tool, the count and the arguments.
//
// The failure guard watches each tool's failures in a row. When one tool
// has failed 3 times with varying arguments, it tells the model to stop
// and reconsider its approach, with the tool's latest error codes.
//
// Each guard ignores the tools its Config's Exclude field names; their
// calls neither count nor break a run. The repeat guard excludes
// bookkeeping tools (todo lists, questions to the user) by default, the
// failure guard none. A new user message resets both guards. Their counters live in the session's tools.State. Their
// reminders carry the source (harness.Reminder.Source) "repeat_guard" or
// "failure_guard".
//
// # Deadlines
//
// [Deadlines] returns dispatch middleware that puts a backstop deadline
// on every call:
//
//   - When the tool declares no deadline, by tool family: network tools
//     the longest, local tools the shortest, processes in between.
//   - When it declares one, well above it, so that the tool's more
//     specific timeout fires first.
//
// When the backstop fires, a tool that stops returns its own report
// prefixed with what happened. A tool that ignores cancellation is
// abandoned and logged as possibly still running, and the call returns a
// timeout result at once. Calls of tools with side effects say their
// side effects are unknown.
//
// # Configuration
//
// Every constructor takes its own Config struct ([RepeatConfig],
// [FailureConfig], [DeadlineConfig]), whose zero value is the default. It
// returns an error (harness.CodeInvalidOption) for an invalid value,
// which is never clamped or ignored.
//
// Wiring them into a loop, with spill outermost so that results cut off
// by a deadline are still spilled:
//
//	spilling, err := spill.Middleware(spill.Config{})
//	...
//	deadlines, err := guard.Deadlines(guard.DeadlineConfig{
//		Tools: map[string]time.Duration{"deploy": time.Hour},
//	})
//	...
//	repeats, err := guard.RepeatGuard(guard.RepeatConfig{})
//	...
//	failures, err := guard.FailureGuard(guard.FailureConfig{})
//	...
//	loop, err := agent.New(
//		agent.WithModel(model),
//		agent.WithHooks(agent.Hooks{
//			Tools: []tools.Middleware{spilling, deadlines},
//			Steps: []tools.StepObserver{repeats, failures},
//		}),
//		...
//	)
//
// The package imports harness, tools (the middleware and step observer
// contracts) and internal helpers; nothing of session, spill or agent.
package guard
