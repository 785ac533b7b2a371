// Package session keeps the append-only log of an agent session and
// derives from it everything the model saw.
//
// A log is a header ([Header]: format version, id, working directory,
// creation time, parent) followed by [Event] values, numbered 1, 2, 3, ...
// without gaps. Each event has a typed [Payload]: the user's input, the
// model's answer for one step, the start and the result of each tool
// call, reminders the harness added, the request fingerprint sent before
// each model call, the end of each turn.
//
// Everything the model saw is logged ("model-visible means logged"). A
// [History] rebuilds the exact conversation from the events alone; that
// is how a session is resumed, replayed and searched.
//
// # Loading
//
// Loading is forgiving where that loses nothing:
//
//   - A torn last line (a crash mid-write) is dropped with a [Warning].
//   - An event type this build does not know is kept as [Unknown] and
//     skipped with a warning, never a reason to refuse the session.
//   - A call left without a result gets a synthetic result in the derived
//     history, saying it was not run or that its outcome is unknown.
//   - Sequence numbers that jump or do not increase are reported, and
//     appending continues after the highest.
//
// What would break a reader of the history is left out, with a warning
// that says what and where: a block or content item without the payload
// its type promises (a tool_call block without its call, an image without
// its reference), a tool event that names no call.
//
// A header from a newer format version is refused with an error matching
// harness.CodeUnsupportedFormat.
//
// # Line size
//
// A log line has a maximum size: 16 MiB, or what [StoreConfig] sets.
// Append refuses a larger event with an error matching
// harness.CodeTooLarge (an [*EventTooLargeError]) and writes nothing of
// its batch. Create refuses a longer header the same way. Loading streams
// past a longer line with a warning, never holding it in memory.
//
// # Call ids
//
// Call ids name calls in results and prunings. A provider may reuse them
// across steps, and the agent renames such calls as they arrive. The
// history matches a result to the call of its own step and a pruning to
// the result event it names, so logs written with repeated ids still
// derive correctly.
//
// # Stores
//
// A [Store] keeps logs. [NewJSONL] returns the default, one file per
// session in a directory. [NewMemory] keeps them in memory, encoded the
// same way, for tests and short-lived programs. Package
// session/sessiontest holds the conformance suite any Store must pass.
//
// Store.List describes the sessions of a workspace (a working directory
// and the directories below it), newest first. It reads only each log's
// header and the start of its first user message.
//
// Store.Fork starts a session from another's events up to one of them,
// copied byte for byte, its header naming the parent and the fork point:
// how a conversation goes back without its log being rewritten. A
// session's title and tags ([Meta]: Store.Rename, Store.Tag) are kept
// beside its log, never in it, and shown by List. A [Checkpoint] event
// records the state of the session's workspace files (package
// checkpoint takes them and rewinds to them).
//
// A [Retention] deletes sessions together with what other stores keep for
// them (spilled output, attachment references, checkpoint contents), one
// by one or by age.
//
// A log may hold events back and write them with the next ones, in one
// write ([Deferrer]), and let go of its file while its session is idle
// ([Releaser], with StoreConfig.ReleaseIdle); the JSONL store's logs do
// both. The JSONL store's new logs share the sync of their directory
// that makes their creation durable: logs whose first Syncs come
// together (many sessions ending their first turns at once) wait for one
// sync that started after they were linked, not one each.
//
// Stores fail with harness errors: errors.Is(err, harness.CodeNotFound),
// harness.CodeExists, harness.CodeLocked (open for appending elsewhere),
// harness.CodeClosed, harness.CodeInvalidID.
//
// A [Retention] deletes sessions together with what other stores keep for
// them (spilled output, attachment references), one by one or by age.
//
// Search lives in session/search, and attachments (the bytes of images a
// log names by digest) in session/attachments. Both build on this
// package, which knows neither.
//
// # Imports
//
// The log's format is the JSON of this package's payloads and of the
// harness vocabulary they carry (messages, blocks, tool results, usage,
// reminders). So the package imports harness and internal helpers that
// import nothing of the module. It imports nothing of tools, spill, agent
// or its own sub-packages, and no JSON Schema library; a test checks this
// with go list -deps. Whatever a tool, an adapter or the loop changes,
// the bytes on disk change only when this package or harness does.
package session
