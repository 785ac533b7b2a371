package openai

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/logs"
)

// DeepSeek endpoint and default model.
const (
	// deepSeekBaseURL is the base URL of DeepSeek's OpenAI-format API.
	deepSeekBaseURL = "https://api.deepseek.com"
	// deepSeekDefaultModel is the model DeepSeek uses unless WithModelID
	// says otherwise.
	deepSeekDefaultModel = "deepseek-flash"
)

// defaultIdleTimeout is how long a response may stay silent (no byte
// received, keep-alives included) before the call is dropped as stalled.
const defaultIdleTimeout = 2 * time.Minute

// Model is an [model.Model] that speaks the Chat Completions API of
// OpenAI or of any OpenAI-compatible provider. It is safe for concurrent
// use.
type Model struct {
	info       model.Info
	baseURL    string
	apiKey     string
	requireKey bool
	chat       oai.ChatCompletionService
	httpClient *http.Client
	logger     *slog.Logger
	idle       time.Duration
	thinking   *bool
	effort     string
	maxTokens  int64
	streaming  bool
	openAIHost bool
	// err fails every call; set when the model could not be built.
	err error
}

// Option configures a [Model].
type Option func(*config)

type config struct {
	model      string
	window     int
	input      []harness.Modality
	inputSet   bool
	httpClient *http.Client
	logger     *slog.Logger
	idle       time.Duration
	thinking   *bool
	effort     string
	maxTokens  int64
	streaming  bool
	headers    [][2]string
}

// WithModelID sets the provider's model id, such as "deepseek-v4-pro".
// The built-in catalog (deepseek-flash, deepseek-v4-pro) supplies its context window and
// input modalities unless [WithContextWindow] or [WithInputModalities]
// declare them.
func WithModelID(id string) Option {
	return func(c *config) {
		if id != "" {
			c.model = id
		}
	}
}

// WithContextWindow declares the model's context window in tokens.
func WithContextWindow(tokens int) Option {
	return func(c *config) {
		if tokens > 0 {
			c.window = tokens
		}
	}
}

// WithInputModalities declares what the model accepts as input besides
// text, such as harness.ModalityImage. A model that declares no image input
// gets text placeholders instead of images.
func WithInputModalities(ms ...harness.Modality) Option {
	return func(c *config) {
		c.input = slices.Clone(ms)
		c.inputSet = true
	}
}

// WithHTTPClient sets the HTTP client. The default client has dial, TLS
// handshake and response-header timeouts and no overall timeout, which
// would cut long answers off; a client given here keeps whatever
// timeouts it has. The idle watchdog starts when the response headers
// arrive, so give such a client's transport a ResponseHeaderTimeout, and
// never an overall Timeout shorter than the longest answer.
func WithHTTPClient(c *http.Client) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.httpClient = c
		}
	}
}

// WithLogger sets the logger for diagnostics. The default discards.
// Nothing logged contains the API key.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithIdleTimeout sets how long a response may stay silent before the call is
// dropped with a transport error the loop retries (with an error matching
// harness.CodeTimeout in its chain). The watchdog starts when the response
// headers arrive (the wait before them is the transport's response-header
// timeout) and restarts with every read that brings data. Any byte from the
// server counts as a sign of life, SSE keep-alive comments and blank lines
// included: a provider that sends keep-alives while a request waits in its
// queue is alive, and dropping the call would only lose its place. Zero or less
// disables the watchdog. The default is 2 minutes.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idle = d }
}

// WithThinking turns the model's thinking mode on or off. It is sent as
// DeepSeek's top-level "thinking": {"type": "enabled"|"disabled"}; when
// the option is not given, nothing is sent and the provider's default
// applies (on, for DeepSeek).
func WithThinking(on bool) Option {
	return func(c *config) { c.thinking = &on }
}

// WithReasoningEffort sets "reasoning_effort" ("low", "medium", "high",
// or whatever the provider accepts). Empty sends nothing.
func WithReasoningEffort(effort string) Option {
	return func(c *config) { c.effort = effort }
}

// WithMaxOutputTokens bounds the answer's length in tokens. It is sent
// as "max_completion_tokens" to OpenAI and as "max_tokens" to every
// other provider. Zero sends nothing, leaving the provider's default.
func WithMaxOutputTokens(n int) Option {
	return func(c *config) {
		if n >= 0 {
			c.maxTokens = int64(n)
		}
	}
}

// WithStreaming chooses between a streamed answer (the default) and one
// non-streamed request whose whole answer is then yielded as chunks, for
// endpoints that cannot stream.
func WithStreaming(on bool) Option {
	return func(c *config) { c.streaming = on }
}

// WithHeader adds a header to every request, such as the attribution
// headers some routers ask for. Do not put credentials here.
func WithHeader(key, value string) Option {
	return func(c *config) { c.headers = append(c.headers, [2]string{key, value}) }
}

// lookupModel returns what the built-in catalog knows of a model id:
//
//	deepseek-flash   1,000,000 tokens, text and image input
//	deepseek-v4-pro  1,000,000 tokens, text input
//
// Unknown ids report false.
func lookupModel(id string) (model.Info, bool) {
	switch id {
	case "deepseek-flash":
		return model.Info{Name: id, ContextWindow: 1_000_000, Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}}, true
	case "deepseek-v4-pro":
		return model.Info{Name: id, ContextWindow: 1_000_000, Input: []harness.Modality{harness.ModalityText}}, true
	}
	return model.Info{Name: id}, false
}

// DeepSeek returns a model on DeepSeek's API (https://api.deepseek.com)
// with the caller's API key, using deepseek-flash unless [WithModelID]
// says otherwise. An empty key fails every call with harness.CodeAuth
// without a request.
func DeepSeek(apiKey string, opts ...Option) *Model {
	m, err := newModel(deepSeekBaseURL, apiKey, deepSeekDefaultModel, opts)
	if err != nil {
		// Unreachable: the base URL is a valid constant and newModel
		// fails on nothing else. Keep the failure for Stream anyway.
		return &Model{info: model.Info{Name: deepSeekDefaultModel}, err: err}
	}
	m.requireKey = true
	return m
}

// New returns a model on any OpenAI-compatible Chat Completions endpoint:
// baseURL is the API root the SDK appends "chat/completions" to (for
// OpenAI, "https://api.openai.com/v1"), apiKey may be empty for
// endpoints that need none, and model is the provider's model id. The
// catalog (deepseek-flash, deepseek-v4-pro) and the options declare the context window and
// the input modalities; an unknown model accepts text only.
func New(baseURL, apiKey, model string, opts ...Option) (*Model, error) {
	if model == "" {
		return nil, errors.New("openai: no model id given")
	}
	return newModel(baseURL, apiKey, model, opts)
}

func newModel(baseURL, apiKey, model string, opts []Option) (*Model, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", baseURL)
	}
	cfg := config{model: model, idle: defaultIdleTimeout, streaming: true}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	info, _ := lookupModel(cfg.model)
	if cfg.window > 0 {
		info.ContextWindow = cfg.window
	}
	if cfg.inputSet {
		info.Input = cfg.input
	}
	if len(info.Input) == 0 {
		info.Input = []harness.Modality{harness.ModalityText}
	}
	m := &Model{
		info:       info,
		baseURL:    baseURL,
		apiKey:     apiKey,
		httpClient: cfg.httpClient,
		logger:     cfg.logger,
		idle:       cfg.idle,
		thinking:   cfg.thinking,
		effort:     cfg.effort,
		maxTokens:  cfg.maxTokens,
		streaming:  cfg.streaming,
		openAIHost: isOpenAIHost(u.Hostname()),
	}
	if m.httpClient == nil {
		m.httpClient = defaultHTTPClient()
	}
	m.logger = logs.OrDiscard(m.logger)
	ropts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		option.WithAPIKey(apiKey),
		option.WithHTTPClient(m.httpClient),
		// One Stream call is one attempt: retries are the loop's.
		option.WithMaxRetries(0),
	}
	for _, h := range cfg.headers {
		ropts = append(ropts, option.WithHeader(h[0], h[1]))
	}
	if m.openAIHost {
		// OpenAI itself: honour the SDK's OPENAI_* environment
		// (organization, project); our key and base URL override it.
		m.chat = oai.NewClient(ropts...).Chat.Completions
	} else {
		// Another provider: read nothing from the OPENAI_* environment,
		// so no OpenAI key, organization, project or custom header
		// travels to it, and drop the two OpenAI headers in any case.
		ropts = append(ropts, option.WithHeaderDel("OpenAI-Organization"), option.WithHeaderDel("OpenAI-Project"))
		m.chat = oai.NewChatCompletionService(ropts...)
	}
	return m, nil
}

// isOpenAIHost reports whether host belongs to OpenAI's API.
func isOpenAIHost(host string) bool {
	host = strings.ToLower(host)
	return host == "openai.com" || strings.HasSuffix(host, ".openai.com")
}

// Info describes the model: its id, declared context window and input
// modalities.
func (m *Model) Info() model.Info {
	info := m.info
	info.Input = slices.Clone(info.Input)
	return info
}

// BaseURL returns the endpoint the model talks to, for display, with the
// API key blanked out should the URL hold it.
func (m *Model) BaseURL() string { return m.redactString(m.baseURL) }

// CloseIdleConnections closes the idle connections of the model's HTTP
// client, as [http.Client.CloseIdleConnections] does. The model stays
// usable.
func (m *Model) CloseIdleConnections() {
	if m.httpClient != nil {
		m.httpClient.CloseIdleConnections()
	}
}

// Environment variables [FromEnv] reads.
const (
	EnvBaseURL     = "HARNESS_BASE_URL"
	EnvAPIKey      = "HARNESS_API_KEY"
	EnvModel       = "HARNESS_MODEL"
	EnvDeepSeekKey = "DEEPSEEK_API_KEY"
)

// errNoKey is the error of [FromEnv] when the environment names no
// model: it matches harness.CodeAuth.
func errNoKey() error {
	return &harness.Error{Code: harness.CodeAuth, Message: "openai: no key configured: set " + EnvDeepSeekKey + " for DeepSeek, or " +
		EnvBaseURL + ", " + EnvAPIKey + " and " + EnvModel + " for another OpenAI-compatible endpoint"}
}

// FromEnv picks a model from the environment, read through getenv (pass
// os.Getenv):
//
//   - HARNESS_BASE_URL set: that OpenAI-compatible endpoint, with
//     HARNESS_API_KEY (may be empty for local servers) and HARNESS_MODEL
//     (required);
//   - else DEEPSEEK_API_KEY set: DeepSeek, with HARNESS_MODEL as the model
//     id when set;
//   - else an error matching harness.CodeAuth that says which variables
//     to set.
//
// opts apply after the environment's choices.
func FromEnv(getenv func(string) string, opts ...Option) (*Model, error) {
	if getenv == nil {
		return nil, errNoKey()
	}
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if base := get(EnvBaseURL); base != "" {
		model := get(EnvModel)
		if model == "" {
			return nil, fmt.Errorf("openai: %s is set but %s is not: name the model to use", EnvBaseURL, EnvModel)
		}
		return New(base, get(EnvAPIKey), model, opts...)
	}
	if key := get(EnvDeepSeekKey); key != "" {
		if model := get(EnvModel); model != "" {
			opts = append([]Option{WithModelID(model)}, opts...)
		}
		return DeepSeek(key, opts...), nil
	}
	return nil, errNoKey()
}
