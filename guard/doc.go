// Package guard keeps an agent loop from wasting its budget: reminders
// when the model repeats itself or keeps failing, and backstop deadlines
// so no tool call can hang a turn.
//
// [RepeatGuard] and [FailureGuard] return tools.StepObservers: the loop shows
// them each step's calls and results in call order and appends the
// reminders they return after the step's tool results, where the model
// reads them; the loop logs them like everything else the model sees, so
// a resumed session rebuilds the same history. Both only advise: nothing
// is blocked or rewritten, and a wrong guess costs a few dozen tokens.
//
// The repeat guard counts runs of calls with the same tool name and the
// same arguments, compared canonically (object keys sorted at every
// level, numbers in one form), and reminds the model at
// 3, 5 and 8 in a row: briefly first, then naming the tool, the count and
// the arguments. Bookkeeping tools (todo lists, questions to the user) are
// excluded by default (the options' Exclude sets the list of either
// guard); their calls neither count nor break a run. The
// failure guard watches each tool's failures in a row and, when one tool
// has failed 3 times with varying arguments, tells the model to stop and
// reconsider its approach, with the tool's latest error codes. A new user
// message resets both. Their counters live in the session's tools.State.
// Their reminders carry the source (harness.Reminder.Source)
// "repeat_guard" or "failure_guard".
//
// [Deadlines] returns dispatch middleware that puts a backstop deadline on
// every call: by tool family when the tool declares no deadline (network
// tools the longest, local tools the shortest, processes in between), and
// well above a tool's own declared deadline when it has one, so the tool's
// more specific timeout fires first. When the backstop fires, a tool that
// stops returns its own report prefixed with what happened; a tool that
// ignores cancellation is abandoned, logged as possibly still running, and
// the call returns a timeout result at once. Calls of tools with side
// effects say their side effects are unknown.
//
// Every constructor takes its own Config struct ([RepeatConfig],
// [FailureConfig], [DeadlineConfig]), whose zero value is the default,
// and returns an error (harness.CodeInvalidOption) for an invalid value,
// which is never clamped or ignored. Wiring them into a
// loop, with spill outermost so that results cut off by a deadline are
// still spilled:
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
// It imports harness, tools (the middleware and step observer contracts)
// and internal helpers; nothing of session, spill or agent.
package guard
