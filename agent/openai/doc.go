// Package openai is a model.Model (package agent/model) over the Chat
// Completions API, for
// OpenAI and for any OpenAI-compatible provider, DeepSeek first. It uses
// the official openai-go client; nothing outside this package imports it.
//
// [New] returns a model.Model on the endpoint a [Config] names: its base
// URL, key and model id, and every other knob as a named field (the
// dialect, the HTTP client, headers, the idle timeout, the request
// controls), checked all at once. [FromEnv] fills a Config from the
// environment, reading exactly these variables: HARNESS_BASE_URL,
// HARNESS_API_KEY and HARNESS_MODEL for any OpenAI-compatible endpoint,
// or DEEPSEEK_API_KEY (with DEEPSEEK_BASE_URL for a gateway or proxy, and
// HARNESS_MODEL, deepseek-flash by default) for DeepSeek, and
// HARNESS_DIALECT to override the dialect. [New] reads none of them.
//
//	cfg, err := openai.FromEnv(os.Getenv)
//	// or: cfg := openai.Config{BaseURL: "https://api.deepseek.com", APIKey: key, Model: "deepseek-flash"}
//	...
//	model, err := openai.New(cfg)
//	...
//	loop, err := agent.New(agent.WithModel(model), agent.WithTools(...))
//
// A small built-in catalog knows the context window and input
// modalities of DeepSeek's models; Config.ContextWindow and Config.Input
// declare them for any other. A model that declares
// no image input is sent a short text placeholder naming each image
// (name, type, size) instead of the image.
//
// # Dialects
//
// Endpoints that speak the OpenAI format differ in what a request may
// carry. A [Dialect] holds those rules: [DialectDeepSeek] sends a
// thinking model's reasoning back as "reasoning_content" on every
// assistant message that made tool calls ("" when it had none, which
// DeepSeek requires), [DialectOpenAI] sends no reasoning and spells the
// output bound "max_completion_tokens", and [DialectGeneric] sends no
// reasoning, which every other endpoint accepts. The dialect follows
// from the host and Config.Dialect overrides it (HARNESS_DIALECT in
// [FromEnv]), for a gateway in front of DeepSeek or a Kimi thinking
// model that wants its reasoning back too.
//
// Answers are read the same way under every dialect, liberally: the
// reasoning under "reasoning_content", "reasoning" or
// "reasoning_details", or in typed "thinking" content parts (Mistral);
// content as a string or as typed parts; usage at the top level, inside
// the choice (Moonshot) or under "x_groq" (Groq), with reasoning tokens
// counted into the output when a provider leaves them out (xAI); an
// "error" member that is null as no error; OpenRouter's upstream error
// text from error.metadata.raw.
//
// # Requests
//
// The request body is written by hand, in one fixed key order, rather
// than with the SDK's helpers, which drop what DeepSeek needs: an
// assistant turn's content is always a string ("" on a turn that only
// called tools). Tool results are tool messages, which carry text only;
// images a tool produced are sent in one user message right after the
// step's tool results, each named by its call, and the tool message says
// so. Consecutive user messages are merged into one. Tool schemas are
// sent in the order given, each as its own bytes (compacted), so the
// request prefix stays byte-stable for prefix caching. Streams ask for
// usage (stream_options.include_usage). Each history message is encoded
// once: later requests of the conversation reuse its bytes, so a step
// costs about the same with five thousand messages of history as with
// ten, apart from writing the bytes to the connection.
//
// The controls are fields of [Config]: Thinking and ReasoningEffort
// (DeepSeek's thinking mode and effort), MaxOutputTokens, Temperature,
// TopP, Seed, ToolChoice, ParallelToolCalls, StrictTools (strict function
// calling; DeepSeek's beta endpoint; every schema checked to be closed
// before anything is sent), JSONOutput; and model.Request.Output asks for
// a structured final answer ("json_schema" where the dialect takes it,
// "json_object" elsewhere). A field left nil or zero sends nothing.
// Invalid values are errors from [New], every one of them reported.
//
// # Hygiene
//
// One Stream call is one HTTP request: the SDK's retries are off. There
// is no timeout on a whole request, which would cut long answers off.
// The default HTTP client bounds dialing, the TLS handshake and the wait
// for response headers; an idle watchdog (Config.IdleTimeout) drops a
// response that sends nothing at all for too long. Any byte counts as
// life, SSE keep-alive comments and blank lines included, because
// providers send them while a request waits in their queue. Requests to
// hosts other than OpenAI's read nothing from the SDK's OPENAI_*
// environment variables and never carry OpenAI-Organization or
// OpenAI-Project headers. The API key never appears in an error message
// or a log record, even when a provider echoes it back. The model has a
// CloseIdleConnections method, as http.Client does, reached by a type
// assertion to interface{ CloseIdleConnections() }.
//
// It imports harness and agent/model (the contract it implements) and
// internal helpers; nothing of agent, tools or session.
package openai
