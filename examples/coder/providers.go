package main

import (
	"errors"
	"flag"
	"log/slog"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
)

// Providers the coder talks to. HARNESS_PROVIDER names one; without it,
// ANTHROPIC_API_KEY picks Anthropic and anything else the
// OpenAI-compatible adapter (DeepSeek, or the endpoint HARNESS_BASE_URL
// names).
const (
	providerAnthropic = "anthropic"
	providerOpenAI    = "openai"
	providerDeepSeek  = "deepseek"
)

const providerUsage = `
The provider: ANTHROPIC_API_KEY picks Anthropic's Messages API
(ANTHROPIC_BASE_URL for another Anthropic-compatible endpoint,
HARNESS_MODEL for the model, claude-sonnet-5-5 by default);
HARNESS_PROVIDER=anthropic, openai or deepseek picks one explicitly (with
anthropic, HARNESS_BASE_URL and HARNESS_API_KEY stand in for the
ANTHROPIC_ variables when those are unset). -fallback-model names a model
that answers when the first is overloaded or down after its retries: an
id of the same provider, or provider:id (anthropic:claude-haiku-5-5,
deepseek:deepseek-flash).
`

// providerFlags are the flags of provider selection.
type providerFlags struct {
	fallback string
}

func (p *providerFlags) register(fset *flag.FlagSet) {
	fset.StringVar(&p.fallback, "fallback-model", "", "model `id` (or provider:id) that answers when the model fails for good with an overload, a rate limit or an outage")
}

// model picks the model from the environment and the flags, and returns
// it with the endpoint's base URL: with -fallback-model, a fallback chain
// (model.Fallback) of the two.
func (a *app) model(logger *slog.Logger) (model.Model, string, error) {
	provider, err := a.provider()
	if err != nil {
		return nil, "", err
	}
	primary, shown, err := a.newModel(provider, a.o.model, true, logger)
	if err != nil {
		return nil, "", err
	}
	if a.o.prov.fallback == "" {
		return primary, shown, nil
	}
	fbProvider, id := provider, a.o.prov.fallback
	if p, rest, ok := strings.Cut(id, ":"); ok && knownProvider(p) {
		fbProvider, id = p, rest
	}
	if strings.TrimSpace(id) == "" {
		return nil, "", usagef("-fallback-model %q names no model id", a.o.prov.fallback)
	}
	fallback, fbShown, err := a.newModel(fbProvider, id, false, logger)
	if err != nil {
		return nil, "", err
	}
	if fbShown != shown {
		shown += ", falling back to " + fbShown
	}
	return model.Fallback(primary, fallback), shown, nil
}

func knownProvider(p string) bool {
	switch p {
	case providerAnthropic, providerOpenAI, providerDeepSeek:
		return true
	}
	return false
}

// provider is the provider of the first model.
func (a *app) provider() (string, error) {
	switch p := strings.ToLower(strings.TrimSpace(a.env("HARNESS_PROVIDER"))); {
	case p == "" && strings.TrimSpace(a.env("ANTHROPIC_API_KEY")) != "":
		return providerAnthropic, nil
	case p == "":
		return providerOpenAI, nil
	case knownProvider(p):
		return p, nil
	default:
		return "", usagef("HARNESS_PROVIDER=%s: use anthropic, openai or deepseek", p)
	}
}

// newModel builds the model id (empty: the environment's) of provider;
// primary models take the -image and -context-window flags.
func (a *app) newModel(provider, id string, primary bool, logger *slog.Logger) (model.Model, string, error) {
	getenv := func(k string) string {
		if k == "HARNESS_MODEL" && id != "" {
			return id
		}
		return a.env(k)
	}
	var input []harness.Modality
	if primary && a.o.image {
		input = []harness.Modality{harness.ModalityText, harness.ModalityImage}
	}
	window := 0
	if primary {
		window = a.o.window
	}
	if provider == providerAnthropic {
		return a.anthropicModel(getenv, input, window, logger)
	}
	if provider == providerDeepSeek {
		// DeepSeek's own variables, whatever HARNESS_BASE_URL says.
		base := getenv
		getenv = func(k string) string {
			if k == "HARNESS_BASE_URL" {
				return ""
			}
			return base(k)
		}
	}
	cfg, err := openai.FromEnv(getenv)
	if errors.Is(err, harness.CodeAuth) {
		return nil, "", usagef(`no model configured. Set an API key in the environment, either
  for DeepSeek:
    export DEEPSEEK_API_KEY=sk-...
  or for Anthropic:
    export ANTHROPIC_API_KEY=sk-ant-...
  or for any OpenAI-compatible endpoint:
    export HARNESS_BASE_URL=https://api.example.com/v1 HARNESS_API_KEY=... HARNESS_MODEL=model-id
and run coder again.`)
	}
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	cfg.Input, cfg.ContextWindow, cfg.Logger = input, window, logger
	m, err := openai.New(cfg)
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	return m, redactURL(cfg.BaseURL, cfg.APIKey), nil
}

// anthropicModel builds a model on a Messages API endpoint.
func (a *app) anthropicModel(getenv func(string) string, input []harness.Modality, window int, logger *slog.Logger) (model.Model, string, error) {
	env := func(k string) string {
		v := getenv(k)
		if v == "" {
			// HARNESS_BASE_URL and HARNESS_API_KEY stand in for the
			// ANTHROPIC_ ones, for other hosts.
			switch k {
			case "ANTHROPIC_BASE_URL":
				v = getenv("HARNESS_BASE_URL")
			case "ANTHROPIC_API_KEY":
				v = getenv("HARNESS_API_KEY")
			}
		}
		return v
	}
	cfg, err := anthropic.FromEnv(env)
	if errors.Is(err, harness.CodeAuth) {
		return nil, "", usagef(`no Anthropic key configured: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another Anthropic-compatible endpoint), and run coder again.`)
	}
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	cfg.Input, cfg.ContextWindow, cfg.Logger = input, window, logger
	m, err := anthropic.New(cfg)
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	shown := cfg.BaseURL
	if shown == "" {
		shown = "https://api.anthropic.com"
	}
	return m, redactURL(shown, cfg.APIKey), nil
}

// redactURL is a base URL for the banner, never with a key it carries.
func redactURL(u, key string) string {
	if len(key) >= 8 {
		return strings.ReplaceAll(u, key, "[redacted]")
	}
	return u
}
