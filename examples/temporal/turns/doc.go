// Package turns runs agent turns as durable Temporal workflows: a turn
// is a workflow ([Turn]), and each model call and each tool call is an
// activity ([Activities]), so that a worker that dies in the middle of a
// turn loses nothing: the turn goes on in another worker.
//
// The session log (any session.Store; session/postgres on a fleet) stays
// the source of truth. Temporal's history holds only what the workflow
// needs to go on (the turn's number, the calls the model asked for, how
// each ended); every activity opens the session for appending (one
// writer per session, by the store's lock), reads what the log holds for
// the turn and does only what is missing:
//
//   - AppendUser logs the prompt unless the log already holds the turn's
//     user message (turns are numbered, so a retry finds it);
//   - ModelStep returns the step's answer when it is logged, and calls
//     the model otherwise; the answer is logged before it is returned;
//   - ToolCall returns the logged result of a call whose end is logged;
//     logs and returns an outcome-unknown result (harness.CodeOutcomeUnknown,
//     the text session.History gives such a call) for a call whose start
//     is logged but not its end, without running it again; and otherwise
//     logs the start, runs the tool and logs the result;
//   - EndTurn logs the turn's end once.
//
// A tool call is therefore run at most once whatever happens to the
// workers: its start is written through before it runs, and a call with a
// logged start is never run again. A call cut off by a dying worker is
// reported to the model as outcome unknown, as the agent loop reports a
// call cut off by a crash when it resumes a session.
//
// The calls of a step run one after another, each holding the session's
// lock while it runs. Per-session state of tools (the file ledger that
// makes read-before-edit safe, persistent shells) does not outlive an
// activity, so tools that rely on it across calls (edit, shell sessions)
// do not belong on such a worker as they are.
package turns
