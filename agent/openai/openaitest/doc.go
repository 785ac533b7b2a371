// Package openaitest is a fake OpenAI-compatible endpoint for tests, as
// net/http/httptest is a fake server: [NewServer] starts an HTTP server on
// the loopback interface that answers POST /chat/completions with
// scripted replies in the real wire format (server-sent events ending in
// [DONE], or JSON errors with the headers providers send) and records
// every request, so a test can drive the openai adapter, or a whole
// agent loop, without a network and assert on what was sent.
//
// The chunk builders ([Text], [Reasoning], [ToolCall], [Usage], ...)
// write the chunks DeepSeek and OpenAI stream; [Error] injects a failure
// (a status with a body and headers). A [Reply] is an http.HandlerFunc's
// signature, so a test writes its own for anything else, such as a
// stream cut off or malformed.
//
// It imports only the standard library: hosts can use it with any
// client, and the adapter's own tests use it.
package openaitest
