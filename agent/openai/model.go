package openai

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	// deepSeekDefaultModel is the model [FromEnv] picks for DeepSeek
	// unless HARNESS_MODEL names another.
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
	chat       oai.ChatCompletionService
	httpClient *http.Client
	logger     *slog.Logger
	idle       time.Duration
	streaming  bool
	openAIHost bool
	rules      rules
	// send is what every request carries besides messages and tools.
	send sendOptions
	// strictOK remembers the tool schemas already checked for strict
	// mode.
	strictOK sync.Map
	// history caches the encoded messages of recent conversations.
	history historyCache
}

// sendOptions are the request controls of the options.
type sendOptions struct {
	thinking    *bool
	effort      string
	maxTokens   int64
	temperature *float64
	topP        *float64
	seed        *int64
	toolChoice  string
	parallel    *bool
	strict      bool
	jsonOutput  bool
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
	streaming  bool
	headers    [][2]string
	dialect    Dialect
	send       sendOptions
	errs       []error
}

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, &harness.Error{Code: harness.CodeInvalidOption, Message: "openai: " + fmt.Sprintf(format, args...)})
}

// WithContextWindow declares the model's context window in tokens. It
// must be positive.
func WithContextWindow(tokens int) Option {
	return func(c *config) {
		if tokens <= 0 {
			c.fail("WithContextWindow(%d): the context window is a positive number of tokens", tokens)
			return
		}
		c.window = tokens
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
// never an overall Timeout shorter than the longest answer. Nil keeps the
// default client.
func WithHTTPClient(c *http.Client) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.httpClient = c
		}
	}
}

// WithLogger sets the logger for diagnostics. The default, also for nil,
// discards. Nothing logged contains the API key.
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

// WithThinking turns the model's thinking mode on or off. Under
// [DialectDeepSeek] and [DialectGeneric] it is sent as the top-level
// "thinking": {"type": "enabled"|"disabled"} (DeepSeek's, Z.ai's and
// Moonshot's spelling); [DialectOpenAI] has no such switch, and giving it
// there is an error (use [WithReasoningEffort]). When the option is not
// given, nothing is sent and the provider's default applies (on, for
// DeepSeek).
func WithThinking(on bool) Option {
	return func(c *config) { c.send.thinking = &on }
}

// WithReasoningEffort sets "reasoning_effort". DeepSeek takes "low",
// "medium", "high" and "max"; other endpoints whatever they accept
// ("minimal", "low", "medium", "high" for OpenAI), which is passed on as
// given. Empty sends nothing.
func WithReasoningEffort(effort string) Option {
	return func(c *config) {
		effort = strings.TrimSpace(effort)
		if effort != "" && !validToken(effort) {
			c.fail("reasoning effort %q is not a word such as low, medium or high", effort)
			return
		}
		c.send.effort = effort
	}
}

// WithMaxOutputTokens bounds the answer's length in tokens. It is sent
// as "max_completion_tokens" under [DialectOpenAI] and as "max_tokens"
// under the others. Zero sends nothing, leaving the provider's default;
// a negative count is an error.
func WithMaxOutputTokens(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail("max output tokens %d is negative", n)
			return
		}
		c.send.maxTokens = int64(n)
	}
}

// WithTemperature sets the sampling temperature, from 0 to 2. Thinking
// models may ignore it.
func WithTemperature(t float64) Option {
	return func(c *config) {
		if t < 0 || t > 2 || t != t {
			c.fail("temperature %v is outside 0 to 2", t)
			return
		}
		c.send.temperature = &t
	}
}

// WithTopP sets nucleus sampling's probability mass, above 0 and at most
// 1.
func WithTopP(p float64) Option {
	return func(c *config) {
		if p <= 0 || p > 1 || p != p {
			c.fail("top_p %v is outside (0, 1]", p)
			return
		}
		c.send.topP = &p
	}
}

// WithSeed asks for reproducible sampling with the given seed, where the
// endpoint supports it. [DialectDeepSeek] takes no seed and sends none.
func WithSeed(seed int64) Option {
	return func(c *config) { c.send.seed = &seed }
}

// WithToolChoice sets "tool_choice": "auto" (the provider's default),
// "none" (answer in text), "required" (call some tool), or the name of
// one tool to call. Empty sends nothing.
func WithToolChoice(choice string) Option {
	return func(c *config) {
		choice = strings.TrimSpace(choice)
		if choice != "" && !validToken(choice) {
			c.fail("tool choice %q is neither auto, none, required nor a tool name", choice)
			return
		}
		c.send.toolChoice = choice
	}
}

// WithParallelToolCalls allows or forbids several tool calls in one
// answer ("parallel_tool_calls"). Not given, nothing is sent.
func WithParallelToolCalls(on bool) Option {
	return func(c *config) { c.send.parallel = &on }
}

// WithStrictTools turns on strict function calling: every tool is sent
// with "strict": true, and on DeepSeek's own host the requests go to its
// beta endpoint, which strict mode needs. Strict mode takes only closed
// schemas: every object lists all its properties as required and has
// "additionalProperties": false, and strings use only the formats it
// knows. A tool whose schema breaks the rules fails the call with
// harness.CodeInvalidRequest, naming the tool and the field, before any
// request is sent.
func WithStrictTools(on bool) Option {
	return func(c *config) { c.send.strict = on }
}

// WithJSONOutput asks for answers that are one JSON object
// ("response_format": {"type": "json_object"}). The provider expects the
// prompt to ask for JSON too.
func WithJSONOutput(on bool) Option {
	return func(c *config) { c.send.jsonOutput = on }
}

// WithDialect sets the endpoint's dialect instead of the one the base
// URL implies: [DialectDeepSeek] for a gateway in front of DeepSeek or a
// Kimi thinking model, [DialectOpenAI] for an OpenAI proxy,
// [DialectGeneric] for anything else. An unknown dialect is an error.
func WithDialect(d Dialect) Option {
	return func(c *config) {
		pd, err := parseDialect(string(d))
		if err != nil {
			c.errs = append(c.errs, &harness.Error{Code: harness.CodeInvalidOption, Message: err.Error()})
			return
		}
		c.dialect = pd
	}
}

// validToken reports whether s is a plain word (letters, digits, '_',
// '-', '.'), as effort levels and tool names are.
func validToken(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return s != ""
}

// WithStreaming chooses between a streamed answer (the default) and one
// non-streamed request whose whole answer is then yielded as chunks, for
// endpoints that cannot stream.
func WithStreaming(on bool) Option {
	return func(c *config) { c.streaming = on }
}

// WithHeader adds a header to every request, such as the attribution
// headers some routers ask for. Do not put credentials here. A key that
// is not a header name is an error.
func WithHeader(key, value string) Option {
	return func(c *config) {
		if !validHeaderName(key) {
			c.fail("WithHeader(%q, ...): %q is not a header name", key, key)
			return
		}
		c.headers = append(c.headers, [2]string{key, value})
	}
}

// validHeaderName reports whether s is an HTTP header name (an RFC 9110
// token).
func validHeaderName(s string) bool {
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return s != ""
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

// New returns a model on any OpenAI-compatible Chat Completions endpoint:
// baseURL is the API root the SDK appends "chat/completions" to
// ("https://api.deepseek.com" for DeepSeek, "https://api.openai.com/v1"
// for OpenAI), apiKey may be empty for endpoints that need none, and
// model is the provider's model id, such as "deepseek-flash". The catalog
// (deepseek-flash, deepseek-v4-pro) and the options declare the context
// window and the input modalities; an unknown model accepts text only.
// The dialect follows from the host (see [Dialect]) unless [WithDialect]
// sets it. A bad base URL, an empty model id, an invalid option value and
// an empty key for DeepSeek's own API (harness.CodeAuth) are errors.
//
//	model, err := openai.New("https://api.deepseek.com", os.Getenv("DEEPSEEK_API_KEY"), "deepseek-flash")
func New(baseURL, apiKey, model string, opts ...Option) (*Model, error) {
	if strings.TrimSpace(model) == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("openai: no model id given (%q): name the provider's model, such as deepseek-flash", model)}
	}
	return newModel(baseURL, apiKey, model, "", opts)
}

func newModel(baseURL, apiKey, model string, dialect Dialect, opts []Option) (*Model, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", baseURL)
	}
	if apiKey == "" && isDeepSeekHost(u.Hostname()) {
		return nil, &harness.Error{Code: harness.CodeAuth, Message: "openai: no API key given for DeepSeek's API: pass the key (for example from " + envDeepSeekKey + ")"}
	}
	if dialect == "" {
		dialect = dialectForHost(u)
	}
	cfg := config{model: model, idle: defaultIdleTimeout, streaming: true, dialect: dialect}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	r := rulesFor(cfg.dialect)
	if cfg.send.thinking != nil && !r.thinkingObject {
		cfg.fail("the %s dialect has no thinking switch: leave WithThinking out and set WithReasoningEffort", r.dialect)
	}
	if r.dialect == DialectDeepSeek && cfg.send.effort != "" {
		switch cfg.send.effort {
		case "low", "medium", "high", "max":
		default:
			cfg.fail("DeepSeek takes reasoning effort low, medium, high or max, not %q", cfg.send.effort)
		}
	}
	if len(cfg.errs) > 0 {
		return nil, errors.Join(cfg.errs...)
	}
	if cfg.send.strict && strings.EqualFold(u.Hostname(), "api.deepseek.com") && !strings.Contains(u.Path, "/beta") {
		// Strict function calling is a beta feature of DeepSeek's API.
		baseURL = strings.TrimRight(baseURL, "/") + "/beta"
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
		streaming:  cfg.streaming,
		openAIHost: isOpenAIHost(u.Hostname()),
		rules:      r,
		send:       cfg.send,
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

// isDeepSeekHost reports whether host belongs to DeepSeek's API, which
// refuses every request without a key.
func isDeepSeekHost(host string) bool {
	host = strings.ToLower(host)
	return host == "deepseek.com" || strings.HasSuffix(host, ".deepseek.com")
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
	envBaseURL         = "HARNESS_BASE_URL"
	envAPIKey          = "HARNESS_API_KEY"
	envModel           = "HARNESS_MODEL"
	envDialect         = "HARNESS_DIALECT"
	envDeepSeekKey     = "DEEPSEEK_API_KEY"
	envDeepSeekBaseURL = "DEEPSEEK_BASE_URL"
)

// errNoKey is the error of [FromEnv] when the environment names no
// model: it matches harness.CodeAuth.
func errNoKey() error {
	return &harness.Error{Code: harness.CodeAuth, Message: "openai: no key configured: set " + envDeepSeekKey + " for DeepSeek, or " +
		envBaseURL + ", " + envAPIKey + " and " + envModel + " for another OpenAI-compatible endpoint"}
}

// FromEnv picks a model from the environment, read through getenv (pass
// os.Getenv):
//
//   - HARNESS_BASE_URL set: that OpenAI-compatible endpoint, with
//     HARNESS_API_KEY (may be empty for local servers) and HARNESS_MODEL
//     (required), in the dialect the host implies;
//   - else DEEPSEEK_API_KEY set: DeepSeek, at DEEPSEEK_BASE_URL when set
//     (a gateway or proxy) else at DeepSeek's own API
//     (https://api.deepseek.com), with HARNESS_MODEL as the model id
//     (deepseek-flash when unset), in the deepseek dialect;
//   - else an error matching harness.CodeAuth that says which variables
//     to set.
//
// HARNESS_DIALECT (deepseek, openai or generic, any case) overrides the
// dialect in either case; an unknown name is an error. opts apply after
// the environment's choices. These six variables are all FromEnv reads;
// [New] reads none.
func FromEnv(getenv func(string) string, opts ...Option) (*Model, error) {
	if getenv == nil {
		return nil, errNoKey()
	}
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var pre []Option
	if d := get(envDialect); d != "" {
		pd, err := parseDialect(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envDialect, err)
		}
		pre = append(pre, WithDialect(pd))
	}
	opts = append(pre, opts...)
	model := get(envModel)
	if base := get(envBaseURL); base != "" {
		if model == "" {
			return nil, fmt.Errorf("openai: %s is set but %s is not: name the model to use", envBaseURL, envModel)
		}
		return New(base, get(envAPIKey), model, opts...)
	}
	if key := get(envDeepSeekKey); key != "" {
		base := deepSeekBaseURL
		if b := get(envDeepSeekBaseURL); b != "" {
			base = b
		}
		if model == "" {
			model = deepSeekDefaultModel
		}
		return newModel(base, key, model, DialectDeepSeek, opts)
	}
	return nil, errNoKey()
}
