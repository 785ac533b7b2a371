package openai

import (
	"fmt"
	"net/url"
	"strings"
)

// Dialect names the rules of one family of OpenAI-compatible endpoints:
// what a request may carry and how it is spelled. Answers are read the
// same way under every dialect, tolerantly (reasoning under
// "reasoning_content", "reasoning" or typed content parts; usage at the
// top level or under "x_groq"; errors inside a stream), so the dialect
// matters only for what is sent.
type Dialect string

// The dialects. [New] picks one from the base URL (DeepSeek's and
// Moonshot's hosts speak [DialectDeepSeek], OpenAI's and Azure's
// [DialectOpenAI], every other host [DialectGeneric]); [FromEnv] uses
// [DialectDeepSeek] for DEEPSEEK_API_KEY; [Config.Dialect] overrides either.
const (
	// DialectGeneric is for any OpenAI-compatible endpoint (OpenRouter,
	// Groq, Mistral, vLLM, llama.cpp, Ollama, ...): no reasoning is sent
	// back, the output bound is "max_tokens", and the thinking switch is
	// DeepSeek's "thinking" object when it is asked for.
	DialectGeneric Dialect = "generic"
	// DialectDeepSeek is DeepSeek's API and every endpoint that wants a
	// thinking model's reasoning back, as Moonshot's Kimi thinking models
	// do: every assistant message that made tool calls carries
	// "reasoning_content" ("" when it had none), and an assistant
	// message with reasoning carries it too. It also holds DeepSeek's
	// documented request rules: a forced tool only with thinking off,
	// its seven reasoning efforts, its strict-mode schema rules, at most
	// 128 tools, and the schema of a structured answer in the prompt.
	DialectDeepSeek Dialect = "deepseek"
	// DialectOpenAI is OpenAI's own API (and Azure's): no
	// "reasoning_content", "max_completion_tokens" instead of
	// "max_tokens", no "thinking" object.
	DialectOpenAI Dialect = "openai"
)

// parseDialect reads a dialect's name ("deepseek", "openai" or
// "generic", any case) as HARNESS_DIALECT gives it.
func parseDialect(s string) (Dialect, error) {
	switch d := Dialect(strings.ToLower(strings.TrimSpace(s))); d {
	case DialectGeneric, DialectDeepSeek, DialectOpenAI:
		return d, nil
	}
	return "", fmt.Errorf("openai: unknown dialect %q: use deepseek, openai or generic", s)
}

// rules is what a dialect allows in a request.
type rules struct {
	dialect Dialect
	// sendReasoning sends an assistant message's reasoning back, in
	// "reasoning_content".
	sendReasoning bool
	// echoOnToolCalls sends "reasoning_content" on every assistant
	// message with tool calls, "" when the turn had no reasoning.
	echoOnToolCalls bool
	// maxCompletionTokens spells the output bound
	// "max_completion_tokens" instead of "max_tokens".
	maxCompletionTokens bool
	// thinkingObject sends the thinking switch as
	// "thinking": {"type": "enabled"|"disabled"}.
	thinkingObject bool
	// seed sends "seed" (DeepSeek takes none).
	seed bool
	// jsonSchema sends a structured answer's schema as the
	// "json_schema" response format; without it, "json_object", and the
	// schema goes in the prompt.
	jsonSchema bool
	// strict is what strict mode takes.
	strict strictRules
	// maxTools bounds the functions of one request; 0 is no bound.
	maxTools int
	// forcedToolNeedsThinkingOff refuses a forced tool choice unless
	// thinking is switched off: DeepSeek answers 400 to one in thinking
	// mode, its default.
	forcedToolNeedsThinkingOff bool
	// efforts are the reasoning efforts the endpoint takes; nil passes
	// any word on.
	efforts []string
}

// deepSeekEfforts are the reasoning efforts DeepSeek's API takes (it
// maps minimal, xhigh and ultra onto its own levels).
var deepSeekEfforts = []string{"minimal", "low", "medium", "high", "xhigh", "max", "ultra"}

func rulesFor(d Dialect) rules {
	switch d {
	case DialectDeepSeek:
		return rules{dialect: d, sendReasoning: true, echoOnToolCalls: true, thinkingObject: true,
			strict: deepSeekStrict, maxTools: 128, forcedToolNeedsThinkingOff: true, efforts: deepSeekEfforts}
	case DialectOpenAI:
		return rules{dialect: d, maxCompletionTokens: true, seed: true, jsonSchema: true, strict: openAIStrict}
	}
	return rules{dialect: DialectGeneric, thinkingObject: true, seed: true, jsonSchema: true, strict: openAIStrict}
}

// dialectForHost picks the dialect of a base URL's host.
func dialectForHost(u *url.URL) Dialect {
	host := strings.ToLower(u.Hostname())
	switch {
	case isDeepSeekHost(host):
		return DialectDeepSeek
	case host == "api.moonshot.ai" || host == "api.moonshot.cn":
		return DialectDeepSeek
	case isOpenAIHost(host) || strings.HasSuffix(host, ".openai.azure.com"):
		return DialectOpenAI
	}
	return DialectGeneric
}
