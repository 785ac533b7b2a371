// Package harness is the vocabulary every other package of the module
// speaks: the values a conversation is made of, and the one error type
// with its one set of codes.
//
// What lives here:
//
//   - A conversation: [Message], a [Role] and [Block] values (text,
//     reasoning, an [Image] reference, a [ToolCall] or a [ToolResult]).
//   - What a tool returns: one [ToolResult]. The session log keeps it and
//     the model is shown it. Its [Render] intent is for host UIs; its
//     [FileAccess] records let history pruning prove a read superseded.
//   - Token [Usage], advisory [Reminder] text, and the [Modality] values
//     a model accepts (text always; anything else when listed).
//   - Failures: [Error], a [Code] from one list ([CodeNotFound],
//     [CodeRateLimit], ...), and [CodeOf].
//
// # Imports and the log format
//
// The package imports nothing of this module and nothing outside the
// standard library. Any package can depend on it without pulling in
// anything else.
//
// The session log depends on this package and nothing above it. The
// log's format is the JSON of these types (and of the session package's
// own event payloads), so a change in a tool, a provider adapter or the
// loop cannot change what is written to disk by accident. The JSON tags
// of these types are the log's format: changing one is a format version
// decision.
//
// # Errors
//
// A [Code] is a stable, snake_case string that never changes meaning once
// shipped. It is also an immutable sentinel error:
// errors.Is(err, harness.CodeNotFound) asks "did this fail because
// something was not found?", whatever package reported it.
//
// An [*Error] carries a code, a message and an optional cause. The
// message is written for whoever reads it; for a tool failure that is
// the model, so it says what went wrong and what to do. The cause is
// where package-specific detail travels: the file system's operation and
// path, a provider's HTTP status.
package harness
