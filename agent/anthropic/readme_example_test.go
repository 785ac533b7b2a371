package anthropic_test

import (
	"os"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/pricing"
)

// providers is the README's "Providers and fallback" code, compiled with
// the tests so the README cannot drift from the API.
func providers(key string) (*agent.Loop, *agent.Loop, error) {
	claude, err := anthropic.New(anthropic.Config{APIKey: os.Getenv("ANTHROPIC_API_KEY"), Model: "claude-sonnet-5-5"})
	if err != nil {
		return nil, nil, err
	}
	deepseek, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: key, Model: "deepseek-flash"})
	if err != nil {
		return nil, nil, err
	}
	one, err := agent.New(agent.WithModel(claude), agent.WithPrices(pricing.Builtin()))
	if err != nil {
		return nil, nil, err
	}
	m := model.Fallback(claude, deepseek) // Claude first; DeepSeek when Claude is overloaded
	both, err := agent.New(agent.WithModel(m), agent.WithPrices(pricing.Builtin()))
	return one, both, err
}

var _ = providers
