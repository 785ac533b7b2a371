// Package model is the contract between the agent loop and a language
// model. It is to provider adapters what database/sql/driver is to
// database drivers: an adapter (package agent/openai, a test's scripted
// model in agent/replay, a host's own) implements [Model] and imports
// this package, never the loop.
//
// # Requests and answers
//
// A [Request] carries the system prompt, the conversation as
// harness.Message values, the tools the model may call ([Tool]: name,
// description, JSON Schema) and an [ImageSource] for the image references
// in the conversation.
//
// The answer streams back as [Chunk] values: text, reasoning, pieces of
// tool calls ([ToolCallDelta]), usage and a finish reason.
//
// A reasoning chunk may carry the signature that ends its block, and a
// redacted block is one chunk of encrypted data. Providers that sign
// their reasoning, as Anthropic does, need it back unchanged. A
// [ChunkModel] chunk names the model that answered when it is not the one
// called.
//
// # Failures
//
// A failure is a *harness.Error with a model code (harness.CodeRateLimit,
// harness.CodeAuth, ...), built with [NewError]. What the provider said
// about it (the HTTP status, when to try again) travels as its cause, a
// [*ProviderError]. [Retryable] is the one rule for which failures the
// loop tries again.
//
// [Fallback] makes one Model of several. When a call fails with a failure
// of the model rather than of the request ([FallsBack]: rate limits,
// overload, server failures, timeouts, broken connections), the next
// model answers the same request. It is a [Chain], which the agent loop
// drives itself: each model is retried before the next takes over, and
// the model that answered is logged and priced.
//
// # A host's own loop
//
// A host that runs model calls itself, outside the agent loop (the
// Temporal example runs each as an activity), uses the loop's own
// pieces. An [Assembler] joins the chunks of an answer into a
// harness.Message, and [FixCallIDs] gives its tool calls ids new to the
// session.
//
// # Tests
//
// Package modeltest is the conformance suite an adapter runs on itself
// (modeltest.TestModel). replay.NewScripted is the double for code that
// takes a Model.
//
// The package imports harness only: nothing of the loop, the tools or
// the session log.
package model
