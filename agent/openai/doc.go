// Package openai is a model.Model (package agent/model) over the Chat
// Completions API, for
// OpenAI and for any OpenAI-compatible provider, DeepSeek first. It uses
// the official openai-go client; nothing outside this package imports it.
//
// [DeepSeek] returns a model on DeepSeek's API (default model
// deepseek-flash); [New] one on any endpoint given its base URL, key and
// model id; [FromEnv] picks one from HARNESS_BASE_URL, HARNESS_API_KEY
// and HARNESS_MODEL, or DEEPSEEK_API_KEY:
//
//	model := openai.DeepSeek(os.Getenv("DEEPSEEK_API_KEY"))
//	loop := agent.New(agent.WithModel(model), agent.WithTools(...))
//
// A small built-in catalog knows the context window and input
// modalities of DeepSeek's models; [WithContextWindow] and
// [WithInputModalities] declare them for any other. A model that declares
// no image input is sent a short text placeholder naming each image
// (name, type, size) instead of the image.
//
// # Requests
//
// The history is built by hand rather than with the SDK's helpers, which
// drop what DeepSeek needs: an assistant turn's content is always a
// string ("" on a turn that only called tools), and its reasoning goes
// back as "reasoning_content" on every later request. Tool results are
// tool messages, which carry text only; images a tool produced are sent
// in one user message right after the step's tool results, each named by
// its call, and the tool message says so. Consecutive user messages are
// merged into one. Tool schemas are sent in the order given, each as its
// own bytes (compacted), so the request prefix stays byte-stable for
// prefix caching. Streams ask for usage (stream_options.include_usage).
// [WithThinking] and [WithReasoningEffort] set DeepSeek's thinking mode
// and the reasoning effort.
//
// # Answers
//
// Reasoning and text pieces are yielded as they arrive; tool calls as
// pieces that agent.Assembler joins, across chunks and across parallel
// calls; then the usage, with DeepSeek's prompt-cache hit and miss
// counts and the reasoning tokens apart; then the finish reason, last. A
// stream that ends without a finish reason is a failure
// (harness.CodeTruncatedStream), as are the finish reasons content_filter
// and insufficient_system_resource. Every failure is a *harness.Error
// with a stable model code (built with model.NewError; the HTTP status
// and Retry-After hint in its model.ProviderError cause) that the loop's
// retry policy acts on; see [Model.Stream].
//
// # Hygiene
//
// One Stream call is one HTTP request: the SDK's retries are off. There
// is no timeout on a whole request, which would cut long answers off.
// The default HTTP client bounds dialing, the TLS handshake and the wait
// for response headers; an idle watchdog ([WithIdleTimeout]) drops a
// response that sends nothing at all for too long. Any byte counts as
// life, SSE keep-alive comments and blank lines included, because
// providers send them while a request waits in their queue. Requests to
// hosts other than OpenAI's read nothing from the SDK's OPENAI_*
// environment variables and never carry OpenAI-Organization or
// OpenAI-Project headers. The API key never appears in an error message
// or a log record, even when a provider echoes it back.
//
// It imports harness and agent/model (the contract it implements) and
// internal helpers; nothing of agent, tools or session.
package openai
