// Package harness is the vocabulary every other package of the module
// speaks: the values a conversation is made of, and the one error type
// with its one set of codes.
//
// What lives here:
//
//   - a conversation: [Message] (a [Role] and [Block] values: text,
//     reasoning, an [Image] reference, a [ToolCall] or a [ToolResult]);
//   - what a tool returns, what the session log keeps of it and what the
//     model is shown of it: one [ToolResult], with the [Render] intent for
//     host UIs and the [FileAccess] records that let history pruning prove
//     a read superseded;
//   - token [Usage], advisory [Reminder] text, and the [Modality] values a
//     model accepts (text always; anything else when listed);
//   - failures: [Error], a [Code] from one list ([CodeNotFound],
//     [CodeRateLimit], ...), and [CodeOf].
//
// It imports nothing of this module and nothing outside the standard
// library, so any package can depend on it without pulling in anything
// else. That is why the session log depends on this package and nothing
// above it: the log's format is the JSON of these types (and of the
// session package's own event payloads), so a change in a tool, a
// provider adapter or the loop cannot change what is written to disk by
// accident. The JSON tags of these types are the log's format: changing
// one is a format version decision.
//
// Errors: a [Code] is a stable, snake_case string that never changes
// meaning once shipped, and is itself an immutable sentinel error, so
// errors.Is(err, harness.CodeNotFound) asks "did this fail because
// something was not found?" whatever package reported it. An [*Error]
// carries a code, a message written for whoever reads it (the model, for
// a tool failure: what went wrong and what to do) and an optional cause,
// which is where package-specific detail travels (the file system's
// operation and path, a provider's HTTP status).
package harness
