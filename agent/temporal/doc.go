// Package temporal runs the turns of agent sessions as durable Temporal
// workflows, so that a turn survives the death of the machine running
// it: another worker finishes it from the session log.
//
// A [Worker] runs turns on an agent.Loop built from the same options as
// agent.New (model, tools, stores, permissions, hooks). A [Client]
// starts turns ([Client.Start]), streams their events ([Turn.Events]),
// answers approvals and ask_user questions ([Turn.Answer]), steers
// ([Turn.Steer]) and cancels ([Turn.Cancel]). The client needs only the
// Temporal server; the workers share the session store (session/postgres
// on a fleet).
//
// # How a turn runs
//
// A turn is one workflow, its id the session's (one turn of a session at
// a time). The workflow numbers the turn from the log, then runs it in
// one activity on a worker: the agent loop itself, with every tool, the
// session open on that worker. The log stays the source of truth;
// Temporal's history holds only the turn's number, which worker runs it,
// and how each run ended.
//
// The session stays open on the worker between runs (Config.KeepOpen),
// with its tool state: persistent shells, background jobs, the file
// ledger. The next turn and the answer to a pause go to that worker
// first, on a task queue of its own, and load nothing. An open session
// holds the store's lock, so no other worker can write it meanwhile.
//
// # When a worker dies
//
// The run's heartbeats stop, and within seconds the workflow, now on
// another worker, runs the turn again there. That worker resumes the
// session from the log: a tool call whose start is logged and whose end
// is not gets an outcome-unknown result and is never run again; a call
// that had not started is reported not run. The turn then goes on
// (agent.Session.Continue) from the step where it stopped, and ends as
// if nothing happened, in the log as in the workflow's result
// (TurnResult.Moves counts the moves).
//
// What lived in the dead worker's processes is gone, and the model is
// told so rather than left to find out: background jobs are reported
// lost (by the loop, on resume), and persistent shells opened earlier
// are announced gone after the first step on the new worker.
//
// # Pauses
//
// A turn that waits for an approval, an ask_user answer or a raised
// budget ends its run: the workflow waits for the [SignalAnswer] signal
// and no worker is busy meanwhile. [Turn.Status] says what it waits for.
// Budgets (agent.Limits.Budget) count what the session spent on every
// worker: a worker that takes a turn over rebuilds the spending from the
// log.
//
// # Sub-agents
//
// A sub-agent (the task tool of agent.WithSubAgents) runs as a child
// workflow, not inside its parent's run. The worker makes task an
// external tool (agent.WithExternalTools): a step's task calls pause the
// parent's turn (awaiting_tool), and its workflow starts one child
// workflow per call, with the id [TaskWorkflowID] of its own and the
// call's, so a replayed or retried parent attaches to its children
// rather than running them again. Each child is a turn workflow of the
// sub-agent's session (agent.TaskSessionID of the parent and the call,
// opened with agent.Loop.OpenTask: the type's tools and prompt, the
// parent's permissions and what is left of its budgets), durable on its
// own: a worker that dies mid-sub-agent costs the child a continuation
// from its log, and the parent's call, not yet started, is never
// outcome unknown. When the children end, their answers and what they
// spent answer the parent's calls, on the worker that paused.
//
// A sub-agent's call that needs approval pauses the child's turn: the
// parent's [Status.Tasks] lists its running children's workflow ids,
// and [Client.Task] returns the handle of one, whose Status and Answer
// work as a parent's do. The children's events are streamed in their
// own workflows, not the parent's.
//
// # Imports
//
// The package imports the harness module's public packages and the
// Temporal Go SDK. It is a module of its own, so that the core module's
// dependency graph stays free of the SDK.
package temporal
