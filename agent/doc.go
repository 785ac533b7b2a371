// Package agent runs a coding agent: a loop that calls a language model,
// dispatches the tools it asks for, and logs everything the model sees.
// A logged session can be resumed, replayed and searched.
//
// Build a [Loop] with [New] and functional options, start or resume a
// [Session], and run turns:
//
//	loop, err := agent.New(
//		agent.WithModel(model),
//		agent.WithTools(tools...),
//		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}),
//	)
//	if err != nil { ... } // no model, an invalid option value, refused tools
//	defer loop.Close()
//	sess, err := loop.NewSession(ctx, session.Header{Cwd: workspace})
//	for ev, err := range sess.Run(ctx, "make the tests pass") { ... }
//
// # Turns and steps
//
// A turn is a sequence of steps. Each step is one model call, then the
// tool calls the answer asked for. The model is a model.Model (package
// agent/model): it yields model.Chunk values, which carry text,
// reasoning, tool-call pieces, usage and a finish reason. Steps repeat
// while the model asks for tools, up to a step limit.
//
// Tools that declare themselves concurrency-safe run in parallel,
// bounded. Any other call is a barrier that runs alone, in order.
// Results go back to the model in call order.
//
// Malformed arguments, schema violations, unknown tools and tool panics
// become error results the model can act on. The turn goes on.
//
// # Events
//
// The host sees a turn as an iterator of [Event] values. Each is a
// pointer to one of these types; [MarshalEvent] writes any of them as one
// JSON line, its type name in "type".
//
//   - [TextDelta]: a piece of the model's answer.
//   - [ReasoningDelta]: a piece of the model's reasoning.
//   - [ToolCallStart]: a tool call is about to run, with its render intent.
//   - [ToolCallRefused]: a tool call will not run (denied, or refused by the registry); its result follows.
//   - [ToolCallProgress]: output or progress a running call reported; shown to the host only, never logged or sent to the model.
//   - [ToolCallEnd]: a call's result, render data included, and how long it took.
//   - [ModelUsage]: the token usage of one model call.
//   - [Retry]: a model call failed and is tried again; the step's text starts over.
//   - [ModelFallback]: a model failed for good; the next model of its fallback chain answers.
//   - [ReminderAdded]: advisory text added for the model after a step's results.
//   - [ContextPruned]: earlier tool results were replaced by placeholders.
//   - [ContextCompacted]: older history was replaced by a summary.
//   - [ContextLoaded]: the project context changed (a new set at a turn's start, or nested files announced).
//   - [PermissionDecision]: a call was denied, answered, or allowed by a rule.
//   - [ApprovalRequest]: the turn pauses; its calls wait for Session.Resolve.
//   - [BudgetReached]: a budget of money or tokens is reached; the turn pauses (or stops, for a hard ceiling).
//   - [InputRequested]: the turn pauses; the model's questions wait for Session.Answer.
//   - [TodoUpdated]: the model replaced its plan (the todo tool).
//   - [SteerDelivered]: a message sent with Session.Steer reached the turn (or was queued as the next).
//   - [StepEnd]: one model call and its tool calls are done.
//   - [SubAgentEvent]: an event of a sub-agent's session, tagged with its id.
//   - [TurnEnd]: always last, with the turn's reason, steps, usage and error.
//
// # Context economy
//
// A long session outgrows the model's context window, and every token of
// history is paid for again on every request. Before each model call the
// loop may make room ([WithContextPolicy]). The log keeps the originals.
//
//   - Pruning replaces earlier file reads by one-line placeholders, where
//     a later read covers them or a later change made them stale.
//   - Compaction has the model summarize the older history and keeps the
//     recent part verbatim.
//
// Both change the early history. A provider's prefix cache then misses
// everything after the change, once; DeepSeek bills a hit at 1/50 of a
// miss.
//
// The default policy, [ContextCost], optimizes dollars with the model's
// prices ([WithPrices], or ContextPolicy.Price). It cuts only when the
// saving over the requests to come beats the cache the cut breaks, or
// when the window forces a cut. It then compacts deep enough that the
// next forced cut is far away. Without prices it decides by thresholds.
//
// A host that prefers fixed shares sets Strategy to [ContextThresholds]
// (and PruneAt, CompactAt, KeepRecent). [ContextOff] turns both off.
//
// The prefix stays stable by construction. The system prompt and tool
// schemas come first and change only when the host changes them.
// Reminders are appended after the step's results. A compaction's summary
// is asked for after the very prefix the cache holds. Images past the
// budget leave in steps.
//
// # Durability
//
// Each promise the log makes needs some records on disk at some moment,
// and the loop writes no more often than they require. A step with one
// tool call writes twice, as a loop written by hand would:
//
//   - The user's message is written through before the first model call:
//     a resumed session has the question.
//   - A call's start (session.ToolStarted) is written through before the
//     call runs: after a crash, a started call's outcome is unknown and
//     one that never started was not run. The step's request fingerprint
//     (session.ModelRequest) and the model's answer go to disk in the same
//     write, held back until then (session.Deferrer): a crash before it
//     loses an answer none of whose calls had run, as a crash during the
//     model call would, and a repaired turn then counts the steps whose
//     answers were written.
//   - Each result (session.ToolFinished) is written through as it
//     arrives: a resumed session never runs a finished call again.
//   - Pauses, retries, fallbacks, reminders and the turn's end are
//     written through, with whatever was held back before them.
//   - The end of a turn syncs the log (Log.Sync): a finished turn
//     survives a power loss. The workspace checkpoints the turn took
//     (WithCheckpoints) are synced just before, all at once, so a
//     finished turn can be rewound after a power loss.
//
// A strict replay reads a finished log, which holds every record.
//
// # Many sessions
//
// Sessions are cheap to keep: one that runs no turn holds its history
// and runs no goroutine. With session.StoreConfig.ReleaseIdle, its JSONL
// log lets go of its file (and of the lock that keeps other processes
// from appending) when a turn ends, and takes it again at the next, so
// thousands of sessions can wait in one process without a file each. A
// closed session holds nothing; ResumeSession brings it back from its
// log. A session in a turn holds its log's file and, while the model
// answers, the host's goroutine that runs the turn and the model's
// connection; no goroutine of its own. An idle session resumed with a
// history of three short turns holds about 17 KB.
//
// # Retries and fallback
//
// Retryable model failures are retried a bounded number of times, with
// exponential backoff, jitter and the provider's Retry-After hint. They
// are known by their code: rate limit, server, transport, an empty or
// truncated answer.
//
// A model made with model.Fallback is a chain the loop drives. A call
// that fails with a failure of the model (rate limit, overload, server
// failure, timeout, broken connection) is retried on the same model
// first. Once those retries are spent, the next model of the chain
// answers the same request, with retries of its own. Failures of the
// request (invalid, refused key, context window exceeded) never fall
// back.
//
// The switch is logged (session.ModelFallback) and shown to the host
// ([ModelFallback]). The turn's later steps call the new model too; the
// next turn starts again with the first. Each answer is logged and
// priced as the model that gave it, so a replay and a resumed session's
// costs agree.
//
// # Cancellation, deadlines and panics
//
// Cancelling the context, or stopping the iteration, ends the turn
// cleanly and logs it.
//
// No tool can hang a turn or Close. Every call runs under a backstop
// deadline kept by the dispatcher itself ([Limits]). A call that ignores
// its cancelled context is abandoned with an error result saying it may
// still be running. Close returns within a bounded time and names the
// calls it left behind (harness.CodeNotStopped).
//
// A panic in the harness, the model adapter or the session store ends
// the turn with reason error and a *harness.Error with [CodeInternal]; it
// never reaches the host.
//
// # Questions, plans, budgets and steering
//
// [WithAskUser] gives the model the ask_user tool: questions answered by
// an [Answerer] while the turn waits or, without one, a durable pause
// (awaiting_input) that [Session.Answer] ends, as Resolve ends an
// approval's. [WithTodo] gives it the todo tool: a plan the host sees
// ([TodoUpdated]) and the model sees again after compaction.
//
// Limits.Budget caps money and tokens per turn and per session. A turn
// that reaches one pauses before its next model call (awaiting_budget,
// [BudgetReached]) until Session.Answer raises it, or stops at a hard
// ceiling. [Session.Paused] says what a paused turn waits for.
//
// [Session.Steer] delivers a user message into the running turn before
// its next model call, logged with its step, so a resumed session and a
// strict replay see it; [Session.Queue] keeps one for the next turn.
//
// # Permissions and approval
//
// Every call can be decided before it runs ([WithPermissions], with the
// rules and modes of package tools/permission):
//
//   - An allowed call runs.
//   - A denied call gets a result the model reads (code "denied"): what
//     was denied, by which rule or by the user, and not to retry it.
//   - A call that needs an answer goes to a synchronous approver
//     ([WithApprover]), or pauses the turn.
//
// A paused turn ends with reason awaiting_approval after an
// [ApprovalRequest], and the questions are in the log. [Session.Resolve]
// answers them and continues the same turn, in this process or in
// another after ResumeSession. A new user message instead answers them
// as not run. Every decision, and every rule an answer remembers, is
// logged.
//
// The same rules hold below the calls. With a file system, the tools of
// a session work through it restricted (fs.Restrict) by the policy's
// Read and Edit rules, anchored at the session's working directory
// (permission.Policy.Paths). A file a rule denies is invisible to every
// tool however it is reached: a link, a listing, a search.
//
// # Sub-agents
//
// [WithSubAgents] gives the model a task tool. It starts a declared
// [AgentType] as a child session of the same store (its header names the
// parent session and the call), runs it to the end of its turn and
// returns its final answer. Exploration then costs the parent a few lines
// of context instead of every file it read.
//
// Children run in parallel when their tools change nothing. They get no
// more tools or permissions than the parent, spend a per-turn budget of
// steps, add their usage to the parent's turn, stop with it, and reach
// the host as [SubAgentEvent] values.
//
// A child's call that needs approval goes to the [WithApprover] approver,
// told the child's origin (permission.Request.Origin). Without one, a
// child in the foreground of its call is denied, with a reason that says
// so: it cannot pause its parent's turn.
//
// # External tools
//
// [WithExternalTools] names tools whose calls the host runs, outside the
// loop: the step's other calls run, and the turn pauses durably
// (awaiting_tool) with the calls in the log and in [Pause].Tools.
// [Session.Answer] with Answers.Tools gives each call's result, and the
// model calls it spent, which the session's budgets then count. A
// durable workflow engine runs sub-agents this way, each as a job of its
// own: [Loop.OpenTask] opens a task call's child session on the loop the
// plain task tool would give it, and [Task.Answer] turns its end into
// the parent's answer.
//
// # Background jobs
//
// Each session has a job registry (package jobs) in its tool state: bash
// with run_in_background, and any host tool that runs work in the
// background, register their jobs there. When a job ends, the model is
// told at its next step, after the results of the step during which it
// ended (or after the user's message, when it ended between turns), by a
// reminder line such as `job job3 (bash) completed, exit 0; read it with
// bash_output {"job_id":"job3"}`, so it need not poll. The notice is
// logged and reported as [ReminderAdded] (Source "jobs"); [WithJobs] sets
// the registry's limits and a callback that hears of each end at once.
// A strict replay given [ReplayJobNotices] sends the recording's notices
// where the recording sent them.
//
// Jobs do not outlive the process. At the same places as the notices,
// the log records each job that started, printed more or changed status
// (a session.ToolRecord with its status and the last 4 KiB of output). A
// resumed session puts the recorded jobs back in its registry: those not
// recorded as ended are lost, the model is told so at its next step, and
// job_output still reads the output recorded last.
//
// A task call with background true starts the child as a job (kind
// "agent") and returns at once; the child's text is the job's output and
// its final answer the job's, which job_output shows. Its session and its
// model calls are recorded as a foreground child's are. While it runs:
//
//   - Its events reach the host as SubAgentEvent values whose Job names
//     the job: among the events of the parent's running turn, or, between
//     turns, through [WithJobEvents].
//   - Its steps count against the budget of sub-agent steps of the turn
//     that started it (SubAgents.TurnSteps), with that turn's other
//     children; past it, the child stops after its step.
//   - Each of its model calls is the parent session's spend at once (and
//     the running parent turn's), so Limits.Budget sees it; the child
//     stops when the parent session's budget is reached, and at what was
//     left of the parent's budgets when it started.
//   - A call that needs approval goes to the parent's approver. Without
//     one the child's turn pauses durably in its own log, and so does the
//     parent: its running turn ends awaiting_approval at its next step
//     (or instead of ending), and [Session.Pending] lists the question
//     with the child's origin, its id qualified by the job ("job3/" and
//     the child's call id). [Session.Resolve] hands the answers to the
//     child, which goes on, and continues the parent's turn. Between
//     turns, Pending and Paused list the question too, and Resolve
//     answers it without a turn.
//
// A resumed parent re-attaches to its children's logs: a child whose
// session waits for an approval is taken up again as the same job
// (its question listed by Pending, answered by Resolve in the new
// process); a child that was in the middle of a step is lost, as a bash
// job is.
//
// # Checkpoints and rewind
//
// [WithCheckpoints] records the workspace files before each turn and each
// batch of calls with side effects (package checkpoint: manifests and
// contents in the attachment store, a session.Checkpoint event in the
// log). [Session.Rewind] takes them back, with the conversation: an undo
// of any turn, bash and MCP changes included, without a model call.
//
// The files the agent's turns changed are restored; those changed only
// outside the agent are left alone; one changed by both is a conflict the
// rewind refuses unless forced. The conversation is never rewritten: it
// goes on in a fork of the session (Store.Fork), the original staying as
// a branch. A dry run returns what the rewind would do.
//
// # Project context and lifecycle
//
// [WithContext] gives the turns project context: AGENTS.md files and the
// list of skills (packages instructions and skills). The model reads it
// after the system prompt, in the stable prefix. It is logged whole, with
// its digests, when it changes between turns, so resumed and replayed
// sessions send what they logged. Files found later below the working
// directory are announced once, after a step's results.
//
// [WithLifecycle] is called at a session's start and end, before a user's
// message is logged (it may refuse it or add context), when the model is
// about to end the turn (it may keep the turn going) and before a
// compaction. Package hooks runs Claude Code's command hooks on it and
// on tool middleware; [Recheck] checks a call whose input a middleware
// changed and [Confirm] asks the approver about it.
//
// A tool may narrow the rest of its turn (permission.Narrowing; the skill
// tool records one for a skill's allowed-tools). The narrowing applies on
// top of the permission policy and is rebuilt on resume.
//
// # Deferred tools
//
// Every tool's schema is sent, and paid for, on every request.
// [WithDeferredTools] marks tools that are rarely used: the model sees
// them by name and one line in the description of a load_tools tool,
// and loads the ones it needs; from its next step on they are sent whole.
// Loaded tools follow the others in the order they were loaded, so the
// prefix the provider caches only grows. The loads are logged: a resumed
// session, a rewind's fork and a strict replay send the same tools, and
// compaction keeps them. A call of a tool that is not loaded does not run
// ([CodeNotLoaded]); its result tells the model to load it.
//
// # Extending the loop
//
// Dispatch and the model call are extended by [WithHooks], without
// touching the loop:
//
//   - Hooks.Tools is middleware that wraps every tool call (spill,
//     deadlines).
//   - Hooks.Steps see each step's calls and results in order, and may add
//     advisory reminders.
//   - Hooks.Model wraps every model call: a model.Middleware sees each
//     request before it is sent and each answer after (redaction, audit,
//     added context).
//   - Hooks.Turns see each turn begin and each of its events. Package
//     observe builds OpenTelemetry tracing on them.
//
// [WithStores] says where the loop keeps logs, files, spilled output and
// images. [WithLimits] bounds a turn's steps, its model retries and its
// tool calls. [WithPrices] costs every model call by a price table
// (package pricing), reported on [ModelUsage], [TurnEnd] and
// [Session.Cost].
//
// # Imports
//
// The loop sits on top of the module's one-way import graph; a package
// never imports one above it:
//
//	examples/...                          programs
//	observe                               OpenTelemetry on the loop's hooks
//	agent/openai  agent/replay            adapters: import agent/model, never agent
//	agent                                 the loop
//	tools/files tools/images tools/shell
//	tools/sessiontools spill guard        built-in tools and middleware
//	checkpoint                            workspace checkpoints and rewinds
//	tools/permission                      permission rules and decisions
//	jobs                                  the registry of background jobs
//	tools                                 the tool contract
//	fslocal  fs/fstest                    file systems
//	fs                                    the file system contract
//	session  session/sessiontest          the log
//	agent/model  pricing                  the model contract, prices
//	harness                               the vocabulary and the one error type
//
// Package agent imports harness, agent/model, checkpoint, fs, jobs,
// pricing, session, tools, tools/permission and internal helpers. Nothing imports
// it but programs, observe, and tests.
package agent
