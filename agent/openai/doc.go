// Package openai is a model.Model (package agent/model) over the Chat
// Completions API, for OpenAI and for any OpenAI-compatible provider,
// DeepSeek first. It uses the official openai-go client; nothing outside
// this package imports it.
//
// [New] returns a model.Model on the endpoint a [Config] names: its base
// URL, key and model id. Every other knob is a named field (the dialect,
// the HTTP client, headers, the idle timeout, the request controls), and
// all are checked at once.
//
// [FromEnv] fills a Config from the environment; [New] reads none of it.
// FromEnv reads exactly these variables:
//
//   - HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL, for any
//     OpenAI-compatible endpoint;
//   - or DEEPSEEK_API_KEY, for DeepSeek, with DEEPSEEK_BASE_URL for a
//     gateway or proxy and HARNESS_MODEL (deepseek-flash by default);
//   - HARNESS_DIALECT, to override the dialect.
//
// Building a loop on it:
//
//	cfg, err := openai.FromEnv(os.Getenv)
//	// or: cfg := openai.Config{BaseURL: "https://api.deepseek.com", APIKey: key, Model: "deepseek-flash"}
//	...
//	model, err := openai.New(cfg)
//	...
//	loop, err := agent.New(agent.WithModel(model), agent.WithTools(...))
//
// A built-in catalog knows the context window and input modalities of
// every id DeepSeek serves: deepseek-flash, deepseek-v4-pro, and the
// legacy deepseek-v4-flash and deepseek-v4-flash-vision-exp, which V4.1
// Flash answers. It is read from the same list as the price table
// pricing.DeepSeek. Config.ContextWindow and Config.Input declare them
// for any other model.
//
// A model that declares no image input is sent a short text placeholder
// naming each image (name, type, size) instead of the image.
//
// # Dialects
//
// Endpoints that speak the OpenAI format differ in what a request may
// carry. A [Dialect] holds those rules:
//
//   - [DialectDeepSeek] sends a thinking model's reasoning back as
//     "reasoning_content" on every assistant message that made tool calls
//     ("" when it had none, which DeepSeek requires).
//   - [DialectOpenAI] sends no reasoning and spells the output bound
//     "max_completion_tokens".
//   - [DialectGeneric] sends no reasoning, which every other endpoint
//     accepts.
//
// The dialect follows from the host. Config.Dialect overrides it
// (HARNESS_DIALECT in [FromEnv]), for a gateway in front of DeepSeek, or
// a Kimi thinking model that wants its reasoning back too.
//
// Answers are read the same way under every dialect, liberally:
//
//   - reasoning under "reasoning_content", "reasoning" or
//     "reasoning_details", or in typed "thinking" content parts (Mistral);
//   - content as a string or as typed parts;
//   - usage at the top level, inside the choice (Moonshot) or under
//     "x_groq" (Groq), with reasoning tokens counted into the output when
//     a provider leaves them out (xAI);
//   - an "error" member that is null as no error;
//   - OpenRouter's upstream error text from error.metadata.raw.
//
// # Requests
//
// The request body is a set of wire structs, encoded with encoding/json
// in one fixed key order. The SDK's helpers are not used: they drop what
// DeepSeek needs, such as an assistant turn's content, which is always a
// string ("" on a turn that only called tools).
//
//   - Tool results are tool messages, which carry text only. Images a
//     tool produced are sent in one user message right after the step's
//     tool results, each named by its call, and the tool message says so.
//   - Consecutive user messages are merged into one.
//   - Tool schemas are sent in the order given, each as its own bytes
//     (compacted), so the request prefix stays byte-stable for prefix
//     caching.
//   - Streams ask for usage (stream_options.include_usage).
//
// Each history message is encoded once. Later requests of the
// conversation reuse its bytes, so a step costs about the same with five
// thousand messages of history as with ten, apart from writing the bytes
// to the connection.
//
// # Controls
//
// The controls are fields of [Config]: Thinking and ReasoningEffort
// (DeepSeek's thinking mode and effort), MaxOutputTokens, Temperature,
// TopP, Seed, ToolChoice, ParallelToolCalls, StrictTools and JSONOutput.
// A field left nil or zero sends nothing. StrictTools turns on strict
// function calling (on DeepSeek, its beta endpoint); every schema is
// checked to be closed before anything is sent.
//
// model.Request.Output asks for a structured final answer. Where the
// dialect takes it, that is "json_schema". Elsewhere (DeepSeek) it is
// "json_object", with the schema and an example derived from it in a
// user message at the end of the request: DeepSeek's guide asks for the
// word "json" and an example of the shape in the prompt. The loop
// validates the answer either way.
//
// Invalid values are errors from [New], every one of them reported. So
// are combinations the dialect's endpoint would refuse on every request.
// Under [DialectDeepSeek]:
//
//   - A forced tool (ToolChoice "required" or a tool name) needs Thinking
//     set to false: DeepSeek refuses to force a tool in thinking mode,
//     its default.
//   - The reasoning efforts are minimal, low, medium, high, xhigh, max and
//     ultra.
//   - Strict mode checks DeepSeek's own rules.
//   - A request declares at most 128 tools.
//
// # Limits
//
// DeepSeek limits the requests an account runs at once, per model. It
// answers a request past the limit with 429, which the loop retries with
// backoff (honouring Retry-After when given). A request that waits in
// DeepSeek's queue receives keep-alives meanwhile, and DeepSeek closes
// one it has not started after 10 minutes.
//
// Sessions that run many turns
// or sub-agents at once share the account's limit: bound them on the
// host's side (a semaphore around Session.Run) rather than let every
// call wait out its retries.
//
// # Hygiene
//
// One Stream call is one HTTP request: the SDK's retries are off.
//
// There is no timeout on a whole request, which would cut long answers
// off. The default HTTP client bounds dialing, the TLS handshake and the
// wait for response headers. Three bounds then watch a streamed answer.
// Each drops the call as a transport failure the loop retries (with
// harness.CodeTimeout in its chain):
//
//   - Config.IdleTimeout (2 minutes) drops a response that sends nothing
//     at all.
//   - Config.QueueTimeout (15 minutes) drops one whose answer does not
//     begin, keep-alives and all: providers send them while a request
//     waits in their queue.
//   - Config.StallTimeout (3 minutes) drops one whose answer has begun and
//     then sends nothing but keep-alives. Keep-alives prove that the
//     connection lives, not that the answer progresses.
//
// Requests to hosts other than OpenAI's read nothing from the SDK's
// OPENAI_* environment variables, and never carry OpenAI-Organization or
// OpenAI-Project headers. The API key never appears in an error message
// or a log record, even when a provider echoes it back.
//
// The model has a CloseIdleConnections method, as http.Client does,
// reached by a type assertion to interface{ CloseIdleConnections() }.
//
// It imports harness and agent/model (the contract it implements) and
// internal helpers; nothing of agent, tools or session.
package openai
