// Package anthropic is a model.Model (package agent/model) over
// Anthropic's Messages API, for Claude and for any endpoint that speaks
// the same API (DeepSeek's, at https://api.deepseek.com/anthropic). It
// uses the official anthropic-sdk-go client for the transport; nothing
// outside this package imports it.
//
// [New] returns a model.Model on the endpoint a [Config] names, in the
// style of openai.Config: base URL, key and model id, and every other
// knob as a named field, all checked at once. [FromEnv] fills a Config
// from ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and HARNESS_MODEL.
//
// A host switches provider by swapping the model it gives
// agent.WithModel:
//
//	m, err := anthropic.New(anthropic.Config{APIKey: key, Model: "claude-sonnet-5-5"})
//	// or: m, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: key, Model: "deepseek-flash"})
//	loop, err := agent.New(agent.WithModel(m), ...)
//
// The module's catalog knows the context window, the largest answer and
// the image input of every Claude model, and of DeepSeek's models for
// its compatible endpoint. Config.ContextWindow and Config.Input declare
// them for any other model.
//
// # Requests
//
// The request body is written by hand, in one fixed key order (see the
// golden bodies under testdata): the system prompt as one text block, the
// conversation, the tools, then the controls, and "stream": true.
//
//   - Tool results go back as tool_result blocks at the start of the user
//     message after the call, images included. Images are sent in base64,
//     the newest first within 20 MiB and 100 images. Older ones become
//     text placeholders, as do all images for a model without image
//     input.
//   - Reasoning goes back exactly as it came: each thinking block with its
//     signature, each redacted_thinking block with its data. Reasoning
//     without a signature (another provider's, after a fallback) is left
//     out, since the API takes back only the thinking it signed.
//   - Consecutive user and tool messages make one user message.
//
// A structured answer (model.Request.Output) is asked for with
// output_config.format on Anthropic's own API. On other endpoints the
// schema and an example go to the model in the prompt.
//
// # Prompt caching
//
// Prompt caching is explicit on this API. The requests carry
// cache_control breakpoints, at most four, on the stable prefix:
//
//   - the last tool definition;
//   - the system prompt;
//   - the end of the history before the model's last answer (where the
//     previous request ended);
//   - the end of the request (where the next one will read).
//
// A long session thus reads all but its newest messages from the cache.
// Config.DisablePromptCache sends no breakpoints.
//
// Usage reports cache reads and writes apart. harness.Usage counts both
// in InputTokens: the reads as CacheHitTokens, the writes as
// CacheWriteTokens within CacheMissTokens. Writes are billed at 1.25
// times the input price for the default five-minute lifetime, twice for
// Config.CacheTTL "1h". Package pricing prices each.
//
// # Answers
//
// Stream events are read tolerantly: unknown events, blocks and deltas
// are skipped.
//
//   - Text and thinking deltas become chunks as they come.
//   - A thinking block's signature ends it (model.Chunk.Signature).
//   - A redacted_thinking block is one chunk.
//   - tool_use blocks become tool-call pieces, parallel calls numbered in
//     order.
//
// Stop reasons map to finish reasons: end_turn and stop_sequence to stop,
// tool_use to tool_calls, max_tokens and model_context_window_exceeded to
// length. A refusal is a harness.CodeContentFilter failure.
//
// HTTP errors and error events map to the model codes. 529 and
// overloaded_error are server failures the loop retries; 429 is a rate
// limit with its Retry-After hint; a 400 that says the prompt is too long
// is harness.CodeContextWindowExceeded.
//
// # Hygiene
//
// One Stream call is one HTTP request: the SDK's retries are off, and the
// loop retries. The SDK reads nothing from the environment (ANTHROPIC_*
// variables, profiles, credential files): the Config says everything.
//
// There is no timeout on a whole request. The default HTTP client bounds
// dialing, the TLS handshake and the wait for headers. Three bounds watch
// the stream, as in package openai: silence (IdleTimeout), an answer that
// does not begin while ping events keep the connection alive
// (QueueTimeout), and an answer that stops progressing (StallTimeout).
//
// The SDK's own OpenTelemetry spans and trace headers are off; package
// observe traces model calls. The API key never appears in an error or a
// log record.
//
// Package anthropictest is a fake endpoint that streams answers event
// for event as Anthropic does, for tests.
//
// It imports harness, agent/model and internal helpers; nothing of
// agent, tools or session.
package anthropic
