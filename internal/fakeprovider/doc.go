// Package fakeprovider is an OpenAI-compatible endpoint for tests: an
// httptest server that answers /chat/completions with scripted replies in
// the real wire format (SSE chunks, then [DONE]; JSON errors) and records
// every request, plus builders for the chunks DeepSeek and OpenAI send.
//
// It is shared by the tests of the model adapter, the coder CLI and the
// image tool, so the wire format is written once.
package fakeprovider
