// Package openaitest is a fake OpenAI-compatible endpoint for tests, as
// net/http/httptest is a fake server. A test can drive the openai
// adapter, or a whole agent loop, without a network, and assert on what
// was sent.
//
// [NewServer] starts an HTTP server on the loopback interface. It answers
// POST /chat/completions with scripted replies in the real wire format
// (server-sent events ending in [DONE], or JSON errors with the headers
// providers send), and records every request.
//
// A [Reply] is a struct literal:
//
//   - a streamed answer is its [Chunk] values: text, reasoning, a piece of
//     a tool call, a finish reason, usage, each a named field, written the
//     way DeepSeek and OpenAI stream them;
//   - a failure is a Status with a Body and Header;
//   - a Handler answers with anything else, such as a stream cut off or
//     one that stalls.
//
// For example:
//
//	srv := openaitest.NewServer(openaitest.Reply{Chunks: []openaitest.Chunk{
//		{Text: "Hello"},
//		{Finish: "stop"},
//		{Usage: &harness.Usage{InputTokens: 12, OutputTokens: 3}},
//	}})
//	defer srv.Close()
//
// A [PrefixCache] in front of a server emulates DeepSeek's prefix cache
// as DeepSeek documents it: 64-token units, the longest stored prefix of
// any earlier request, a token estimated as four bytes. Every answer's
// usage reports the prompt's cache hits and misses in DeepSeek's fields,
// so the real adapter and a price table turn a scripted session into
// dollars.
//
// [DeepSeek] wraps a reply in the request rules DeepSeek's API
// documents: the models it serves, thinking mode and forced tools,
// reasoning efforts, reasoning sent back, strict schemas, JSON output. It
// answers 400 as DeepSeek does when one is broken, so a test can check
// that what an adapter sends would be accepted.
//
// It imports harness and agent/model (for the usage and tool-call
// pieces) and the standard library: hosts can use it with any client,
// and the adapter's own tests use it.
package openaitest
