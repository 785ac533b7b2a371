package anthropic

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/catalog"
	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/internal/streamwatch"
)

// Anthropic's endpoint and the model FromEnv picks by default.
const (
	anthropicBaseURL = "https://api.anthropic.com"
	defaultModel     = "claude-sonnet-5-5"
)

// Defaults of a Config.
const (
	// defaultMaxTokens bounds an answer when neither the Config nor the
	// catalog says more: the API needs a bound on every request.
	defaultMaxTokens = 32_000
	// unknownMaxTokens is the bound for a model the catalog does not
	// know, which may take less.
	unknownMaxTokens = 8192
	// The time bounds of a streamed answer, as in package openai.
	defaultIdleTimeout  = 2 * time.Minute
	defaultQueueTimeout = 15 * time.Minute
	defaultStallTimeout = 3 * time.Minute
)

// Config says which endpoint and model [New] talks to and how. Model is
// required; the zero value of every other field is the default. [New]
// checks every field: an invalid value is an error
// (harness.CodeInvalidOption), never clamped or ignored.
type Config struct {
	// BaseURL is the API root the client appends "v1/messages" to; empty
	// is Anthropic's own API, https://api.anthropic.com. Any endpoint
	// that speaks the Messages API works, such as DeepSeek's at
	// https://api.deepseek.com/anthropic.
	BaseURL string
	// APIKey is the key, sent as the SDK sends one (Authorization:
	// Bearer); it may be empty for endpoints that need none (Anthropic's
	// own API needs one). It never
	// appears in the model's errors or log records, and printing or
	// logging the Config shows "[redacted]" in its place.
	APIKey string
	// Model is the model id, such as "claude-sonnet-5-5".
	Model string

	// ContextWindow declares the model's context window in tokens; 0
	// keeps what the catalog knows. Negative is an error.
	ContextWindow int
	// Input declares the input modalities the model takes besides text;
	// nil keeps what the catalog knows (every Claude model takes images;
	// a model it does not know, text only).
	Input []harness.Modality

	// HTTPClient is the HTTP client; nil is a default client with dial,
	// TLS handshake and response-header timeouts and no overall timeout,
	// which would cut long answers off.
	HTTPClient *http.Client
	// Header is added to every request (an "anthropic-beta" header, a
	// gateway's attribution). Do not put credentials here. A key that is
	// not a header name is an error.
	Header http.Header
	// IdleTimeout, QueueTimeout and StallTimeout bound a streamed answer
	// as in package openai: no byte at all for IdleTimeout (2 minutes),
	// no answer begun within QueueTimeout (15 minutes; ping events count
	// as life, not as an answer), no content for StallTimeout once the
	// answer has begun (3 minutes). A call past a bound is dropped as a
	// transport failure the loop retries, with harness.CodeTimeout in its
	// chain. A negative duration disables a bound.
	IdleTimeout  time.Duration
	QueueTimeout time.Duration
	StallTimeout time.Duration
	// Logger receives diagnostics; nil discards them. Nothing logged
	// contains the API key.
	Logger *slog.Logger

	// MaxOutputTokens bounds the answer ("max_tokens", which the API
	// requires). Zero is the catalog's largest answer capped at 32,000
	// tokens, or 8,192 for a model the catalog does not know. Negative
	// is an error.
	MaxOutputTokens int
	// Thinking turns extended thinking on or off: true sends
	// {"type": "adaptive"} (the model decides how much to think), or
	// {"type": "enabled", "budget_tokens": ThinkingBudget} when a budget
	// is set; false sends {"type": "disabled"}. Nil sends nothing and the
	// model's default applies (newer models think by default; some
	// cannot stop).
	Thinking *bool
	// ThinkingBudget is the thinking budget in tokens when Thinking is
	// true: at least 1024 and less than the answer's bound.
	ThinkingBudget int
	// ThinkingDisplay is how thinking comes back: "summarized" or
	// "omitted" (empty thinking, still signed); empty is the model's
	// default.
	ThinkingDisplay string
	// Effort is the effort level ("output_config": {"effort": ...}):
	// low, medium, high, xhigh or max; empty is the model's default.
	Effort string
	// Temperature, from 0 to 1, and TopP, above 0 and at most 1, tune
	// sampling; nil sends nothing. Thinking models may refuse them.
	Temperature *float64
	TopP        *float64
	// ToolChoice is "auto" (the default), "none", "required" (sent as
	// "any": call some tool) or the name of one tool to call. Anthropic
	// refuses to force a tool while the model thinks, so a forced choice
	// needs Thinking set to false.
	ToolChoice string
	// ParallelToolCalls set to false asks for at most one tool call per
	// answer ("disable_parallel_tool_use").
	ParallelToolCalls *bool
	// CacheTTL is the lifetime of the prompt cache entries the requests
	// write: "5m" (empty: the default) or "1h", which costs twice the
	// input price to write instead of 1.25 times (price it with
	// pricing.Table.With).
	CacheTTL string
	// DisablePromptCache sends no cache_control breakpoints.
	DisablePromptCache bool
}

// sendOptions are the request controls of a Config, checked.
type sendOptions struct {
	maxTokens   int64
	thinking    *bool
	budget      int64
	display     string
	effort      string
	temperature *float64
	topP        *float64
	toolChoice  string
	parallel    *bool
	cacheTTL    string
	noCache     bool
}

var (
	efforts  = []string{"low", "medium", "high", "xhigh", "max"}
	displays = []string{"summarized", "omitted"}
)

// check validates c, returning every problem found, and the request
// controls.
func (c *Config) check(known catalog.Model, isKnown bool) (sendOptions, []error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, &harness.Error{Code: harness.CodeInvalidOption, Message: "anthropic: " + fmt.Sprintf(format, args...)})
	}
	s := sendOptions{
		thinking: clone(c.Thinking), temperature: clone(c.Temperature), topP: clone(c.TopP), parallel: clone(c.ParallelToolCalls),
		display: strings.TrimSpace(c.ThinkingDisplay), effort: strings.TrimSpace(c.Effort), cacheTTL: strings.TrimSpace(c.CacheTTL),
		noCache: c.DisablePromptCache, toolChoice: strings.TrimSpace(c.ToolChoice),
	}
	if c.ContextWindow < 0 {
		fail("ContextWindow %d: the context window is a positive number of tokens", c.ContextWindow)
	}
	switch {
	case c.MaxOutputTokens < 0:
		fail("MaxOutputTokens %d is negative", c.MaxOutputTokens)
	case c.MaxOutputTokens > 0:
		s.maxTokens = int64(c.MaxOutputTokens)
	case isKnown:
		s.maxTokens = int64(min(known.MaxOutput, defaultMaxTokens))
	default:
		s.maxTokens = unknownMaxTokens
	}
	if c.ThinkingBudget != 0 {
		switch {
		case s.thinking == nil || !*s.thinking:
			fail("ThinkingBudget %d is set but Thinking is not true", c.ThinkingBudget)
		case c.ThinkingBudget < 1024 || int64(c.ThinkingBudget) >= s.maxTokens:
			fail("ThinkingBudget %d must be at least 1024 and less than the answer's bound (%d tokens)", c.ThinkingBudget, s.maxTokens)
		}
		s.budget = int64(c.ThinkingBudget)
	}
	if s.display != "" && !slices.Contains(displays, s.display) {
		fail("ThinkingDisplay %q is neither summarized nor omitted", s.display)
	} else if s.display != "" && (s.thinking == nil || !*s.thinking) {
		fail("ThinkingDisplay %q is set but Thinking is not true", s.display)
	}
	if s.effort != "" && !slices.Contains(efforts, s.effort) {
		fail("Effort %q is not one of low, medium, high, xhigh or max", s.effort)
	}
	if t := c.Temperature; t != nil && (*t < 0 || *t > 1 || *t != *t) {
		fail("temperature %v is outside 0 to 1", *t)
	}
	if p := c.TopP; p != nil && (*p <= 0 || *p > 1 || *p != *p) {
		fail("top_p %v is outside (0, 1]", *p)
	}
	switch s.cacheTTL {
	case "", "5m", "1h":
	default:
		fail("CacheTTL %q is neither 5m nor 1h", s.cacheTTL)
	}
	if ch := s.toolChoice; ch != "" {
		if !validToken(ch) {
			fail("tool choice %q is neither auto, none, required nor a tool name", ch)
		} else if ch != "auto" && ch != "none" && (s.thinking == nil || *s.thinking) {
			fail("tool choice %q forces a tool, which Anthropic refuses while the model thinks (and newer models think unless told not to): set Thinking to false to force a tool, or set ToolChoice to \"auto\"", ch)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Header)) {
		if !validHeaderName(k) {
			fail("Header %q: %q is not a header name", k, k)
		}
	}
	return s, errs
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// validToken reports whether s is a plain word (letters, digits, '_',
// '-', '.'), as tool names are.
func validToken(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return s != ""
}

// validHeaderName reports whether s is an HTTP header name.
func validHeaderName(s string) bool {
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return s != ""
}

// lookupModel returns what the module's catalog knows of a model id:
// Anthropic's Claude models (context window, images in), and the models
// DeepSeek serves, which its Anthropic-format endpoint answers too.
func lookupModel(id string) (model.Info, catalog.Model, bool) {
	c, ok := catalog.Lookup(id)
	if !ok {
		return model.Info{Name: id}, c, false
	}
	info := model.Info{Name: id, ContextWindow: c.ContextWindow, Input: []harness.Modality{harness.ModalityText}}
	if c.Images {
		info.Input = append(info.Input, harness.ModalityImage)
	}
	return info, c, true
}

// messagesModel is the model.Model [New] returns. It is safe for
// concurrent use.
type messagesModel struct {
	info       model.Info
	baseURL    string
	apiKey     string
	client     sdk.Client
	httpClient *http.Client
	logger     *slog.Logger
	bounds     streamwatch.Config
	send       sendOptions
	// nativeOutput sends a structured answer's schema as
	// output_config.format; elsewhere the schema goes in the prompt.
	nativeOutput bool
}

// New returns a model on the Messages API endpoint cfg names. The
// catalog, cfg.ContextWindow and cfg.Input declare the context window
// and the input modalities. A bad base URL, an empty model id, an
// invalid field (harness.CodeInvalidOption) and an empty key for
// Anthropic's own API (harness.CodeAuth) are errors.
//
// The client reads nothing from the environment (the SDK's own
// ANTHROPIC_* variables, profiles and credential files are ignored: use
// [FromEnv] to read the environment), retries nothing (retries are the
// loop's), sets no timeout on a whole request, and sends no
// OpenTelemetry spans or trace headers of its own.
//
//	m, err := anthropic.New(anthropic.Config{APIKey: os.Getenv("ANTHROPIC_API_KEY"), Model: "claude-sonnet-5-5"})
//
// The model has a CloseIdleConnections method, as http.Client does;
// reach it with a type assertion to interface{ CloseIdleConnections() }.
func New(cfg Config) (model.Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("anthropic: no model id given (%q): name the model, such as %s", cfg.Model, defaultModel)}
	}
	baseURL := cfg.BaseURL
	if baseURL == "" {
		baseURL = anthropicBaseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("anthropic: base URL %q is not an http(s) URL", baseURL)}
	}
	if cfg.APIKey == "" && isAnthropicHost(u.Hostname()) {
		return nil, &harness.Error{Code: harness.CodeAuth, Message: "anthropic: no API key given for Anthropic's API: pass the key (for example from " + envAPIKey + ")"}
	}
	info, known, isKnown := lookupModel(cfg.Model)
	send, errs := cfg.check(known, isKnown)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.ContextWindow > 0 {
		info.ContextWindow = cfg.ContextWindow
	}
	if cfg.Input != nil {
		info.Input = slices.Clone(cfg.Input)
	}
	if len(info.Input) == 0 {
		info.Input = []harness.Modality{harness.ModalityText}
	}
	m := &messagesModel{
		info:       info,
		baseURL:    baseURL,
		apiKey:     cfg.APIKey,
		httpClient: cfg.HTTPClient,
		logger:     logs.OrDiscard(cfg.Logger),
		bounds: streamwatch.Config{
			Idle:  orDefault(cfg.IdleTimeout, defaultIdleTimeout),
			Queue: orDefault(cfg.QueueTimeout, defaultQueueTimeout),
			Stall: orDefault(cfg.StallTimeout, defaultStallTimeout),
		},
		send:         send,
		nativeOutput: isAnthropicHost(u.Hostname()),
	}
	if m.httpClient == nil {
		m.httpClient = streamwatch.HTTPClient()
	}
	opts := []option.RequestOption{
		// Nothing from the environment: no ANTHROPIC_* variable, profile
		// or credential file; the Config says everything.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(baseURL),
		option.WithHTTPClient(m.httpClient),
		// One Stream call is one attempt: retries are the loop's.
		option.WithMaxRetries(0),
		// Tracing is the host's (package observe), not the SDK's.
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	if cfg.APIKey != "" {
		// The SDK sends the key as a bearer token; Anthropic-compatible
		// endpoints of other hosts document the x-api-key header, so the
		// key goes in both (one value, never another credential).
		opts = append(opts, option.WithAPIKey(cfg.APIKey), option.WithHeader("X-Api-Key", cfg.APIKey))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Header)) {
		for i, v := range cfg.Header[k] {
			if i == 0 {
				opts = append(opts, option.WithHeader(k, v))
			} else {
				opts = append(opts, option.WithHeaderAdd(k, v))
			}
		}
	}
	m.client = sdk.NewClient(opts...)
	return m, nil
}

// orDefault returns d, def when d is zero, and 0 (no bound) when d is
// negative.
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// isAnthropicHost reports whether host is Anthropic's API.
func isAnthropicHost(host string) bool {
	host = strings.ToLower(host)
	return host == "anthropic.com" || strings.HasSuffix(host, ".anthropic.com")
}

// Info describes the model: its id, declared context window and input
// modalities.
func (m *messagesModel) Info() model.Info {
	info := m.info
	info.Input = slices.Clone(info.Input)
	return info
}

// CloseIdleConnections closes the idle connections of the model's HTTP
// client. The model stays usable.
func (m *messagesModel) CloseIdleConnections() { m.httpClient.CloseIdleConnections() }

// Environment variables [FromEnv] reads.
const (
	envAPIKey  = "ANTHROPIC_API_KEY"
	envBaseURL = "ANTHROPIC_BASE_URL"
	envModel   = "HARNESS_MODEL"
)

// FromEnv returns the Config the environment names, read through getenv
// (pass os.Getenv): the key from ANTHROPIC_API_KEY, the endpoint from
// ANTHROPIC_BASE_URL (Anthropic's API when unset), the model from
// HARNESS_MODEL (claude-sonnet-5-5 when unset). These three variables
// are all it reads; [New] reads none. Without a key or a base URL it
// fails with an error matching harness.CodeAuth that says what to set.
func FromEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string {
		if getenv == nil {
			return ""
		}
		return strings.TrimSpace(getenv(k))
	}
	cfg := Config{APIKey: get(envAPIKey), BaseURL: get(envBaseURL), Model: get(envModel)}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return Config{}, &harness.Error{Code: harness.CodeAuth, Message: "anthropic: no key configured: set " + envAPIKey + " (and " + envBaseURL + " for another Anthropic-compatible endpoint)"}
	}
	if cfg.Model == "" {
		cfg.Model = defaultModel
	}
	return cfg, nil
}

// Format prints the Config with its API key replaced by "[redacted]",
// for every verb and flag fmt knows.
func (c Config) Format(f fmt.State, verb rune) {
	type plain Config
	p := plain(c)
	if p.APIKey != "" {
		p.APIKey = "[redacted]"
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), p)
}

// LogValue logs the Config's endpoint and model, and whether it has an
// API key, never the key itself.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.Bool("api_key_set", c.APIKey != ""),
	)
}
