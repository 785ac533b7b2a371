// Package catalog is the module's one list of the model ids the built-in
// providers serve, with what the adapters and the price tables need to
// know of each: context window, largest answer, image input, and the
// published prices. The adapters' catalogs (agent/openai,
// agent/anthropic) and the built-in price tables (package pricing) are
// read from it, so an id one of them knows the others know too.
//
// It imports nothing of the module.
package catalog

// Provider names who serves a model.
type Provider string

// The providers of the built-in lists.
const (
	DeepSeek  Provider = "deepseek"
	Anthropic Provider = "anthropic"
)

// Model is what the module knows of one model id a provider serves.
type Model struct {
	ID       string
	Provider Provider
	// ContextWindow is the context size in tokens.
	ContextWindow int
	// MaxOutput is the largest answer in tokens.
	MaxOutput int
	// Images reports image input.
	Images bool
	// Prices in US dollars per million tokens (the provider's peak
	// prices where it discounts hours): uncached input, input read from
	// the prompt cache, input written to it (0 where writing costs what
	// uncached input does), output.
	Input, CacheHit, CacheWrite, Output float64
	// LongPrompt, when set, are the prices of a call whose prompt is
	// longer than LongPrompt.Above tokens.
	LongPrompt *LongPrompt
}

// LongPrompt is a higher price band for long prompts.
type LongPrompt struct {
	Above                               int64
	Input, CacheHit, CacheWrite, Output float64
}

// deepSeekFlash and deepSeekPro are DeepSeek's two models: V4.1 Flash
// takes images, V4 Pro text only; 1M tokens of context and up to 384K
// of output each. Cache hits cost 1/50 of a miss.
var (
	deepSeekFlash = Model{Provider: DeepSeek, ContextWindow: 1_000_000, MaxOutput: 384_000, Images: true,
		Input: 0.30, CacheHit: 0.006, Output: 1.20}
	deepSeekPro = Model{Provider: DeepSeek, ContextWindow: 1_000_000, MaxOutput: 384_000,
		Input: 1.32, CacheHit: 0.044, Output: 3.96}
)

// DeepSeekModels returns every id DeepSeek's API serves: deepseek-flash
// and deepseek-v4-pro, and the legacy ids deepseek-v4-flash and
// deepseek-v4-flash-vision-exp, which V4.1 Flash answers at the Flash
// price. (deepseek-chat and deepseek-reasoner were retired on
// 2026-07-24.)
func DeepSeekModels() []Model {
	return []Model{
		with(deepSeekFlash, "deepseek-flash"),
		with(deepSeekPro, "deepseek-v4-pro"),
		with(deepSeekFlash, "deepseek-v4-flash"),
		with(deepSeekFlash, "deepseek-v4-flash-vision-exp"),
	}
}

// claude builds a Claude model: text and image input, a 5-minute cache
// write at 1.25 times the input price.
func claude(id string, window, maxOut int, in, hit, out float64) Model {
	return Model{ID: id, Provider: Anthropic, ContextWindow: window, MaxOutput: maxOut, Images: true,
		Input: in, CacheHit: hit, CacheWrite: in * 1.25, Output: out}
}

// AnthropicModels returns the Claude models of Anthropic's API, with
// the prices published on its pricing page (checked December 2026):
// input, cache read and output per million tokens, and a 5-minute cache
// write at 1.25 times the input price. Claude Haiku 5.5 costs five times
// as much for a prompt over 100,000 tokens.
func AnthropicModels() []Model {
	const m, k = 1_000_000, 1000
	haiku55 := claude("claude-haiku-5-5", m, 128*k, 0.10, 0.01, 0.50)
	haiku55.LongPrompt = &LongPrompt{Above: 100_000, Input: 0.50, CacheHit: 0.05, CacheWrite: 0.625, Output: 2.50}
	return []Model{
		claude("claude-fable-5-2", m, 128*k, 8, 0.20, 40),
		claude("claude-mythos-5-2", m, 128*k, 8, 0.20, 40),
		claude("claude-fable-5-1", m, 128*k, 10, 0.25, 50),
		claude("claude-mythos-5-1", m, 128*k, 10, 0.25, 50),
		claude("claude-fable-5", m, 128*k, 10, 1, 50),
		claude("claude-mythos-5", m, 128*k, 10, 1, 50),
		claude("claude-opus-5-5", m, 128*k, 4, 0.20, 20),
		claude("claude-opus-5", m, 128*k, 5, 0.50, 25),
		claude("claude-opus-4-8", m, 128*k, 5, 0.50, 25),
		claude("claude-opus-4-7", m, 128*k, 5, 0.50, 25),
		claude("claude-opus-4-6", m, 128*k, 5, 0.50, 25),
		claude("claude-opus-4-5", 200*k, 64*k, 5, 0.50, 25),
		claude("claude-opus-4-5-20251101", 200*k, 64*k, 5, 0.50, 25),
		claude("claude-sonnet-5-5", m, 128*k, 2, 0.10, 10),
		claude("claude-sonnet-5", m, 128*k, 2, 0.20, 10),
		claude("claude-sonnet-4-6", m, 128*k, 3, 0.30, 15),
		haiku55,
		claude("claude-haiku-4-5", 200*k, 64*k, 1, 0.10, 5),
		claude("claude-haiku-4-5-20251001", 200*k, 64*k, 1, 0.10, 5),
	}
}

func with(m Model, id string) Model {
	m.ID = id
	return m
}

// Lookup returns the model with id among every provider's, and whether
// there is one.
func Lookup(id string) (Model, bool) {
	for _, list := range [][]Model{DeepSeekModels(), AnthropicModels()} {
		for _, m := range list {
			if m.ID == id {
				return m, true
			}
		}
	}
	return Model{}, false
}
