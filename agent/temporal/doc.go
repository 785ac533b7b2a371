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
//
// # Imports
//
// The package imports the harness module's public packages and the
// Temporal Go SDK. It is a module of its own, so that the core module's
// dependency graph stays free of the SDK.
package temporal
