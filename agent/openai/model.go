package openai

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
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
	"github.com/go-harness/harness/internal/catalog"
	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/internal/streamwatch"
)

// DeepSeek endpoint and default model.
const (
	// deepSeekBaseURL is the base URL of DeepSeek's OpenAI-format API.
	deepSeekBaseURL = "https://api.deepseek.com"
	// deepSeekDefaultModel is the model [FromEnv] picks for DeepSeek
	// unless HARNESS_MODEL names another.
	deepSeekDefaultModel = "deepseek-flash"
)

// The default time bounds of a streamed answer (see Config.IdleTimeout,
// Config.QueueTimeout and Config.StallTimeout).
const (
	// defaultIdleTimeout is how long a response may stay silent (no
	// byte received, keep-alives included).
	defaultIdleTimeout = 2 * time.Minute
	// defaultQueueTimeout is how long a response may wait for its answer
	// to begin, keep-alives and all: DeepSeek closes a request it has not
	// started after 10 minutes.
	defaultQueueTimeout = 15 * time.Minute
	// defaultStallTimeout is how long an answer that has begun may go
	// without content. Thinking models stream their reasoning, so
	// minutes of nothing but keep-alives mean the answer stalled.
	defaultStallTimeout = 3 * time.Minute
)

// chatModel is the model.Model [New] returns: the Chat Completions API
// of OpenAI or of any OpenAI-compatible provider. It is safe for
// concurrent use.
type chatModel struct {
	info       model.Info
	baseURL    string
	apiKey     string
	chat       oai.ChatCompletionService
	httpClient *http.Client
	logger     *slog.Logger
	bounds     streamwatch.Config
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

// sendOptions are the request controls of a [Config].
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

// Config says which endpoint and model [New] talks to and how. BaseURL
// and Model are required; the zero value of every other field is the
// default, and a field left nil or zero among the request controls sends
// nothing, leaving the provider's default. [New] checks every field: an
// invalid value is an error (harness.CodeInvalidOption), never clamped or
// ignored.
type Config struct {
	// BaseURL is the API root the client appends "chat/completions" to:
	// "https://api.deepseek.com" for DeepSeek, "https://api.openai.com/v1"
	// for OpenAI.
	BaseURL string
	// APIKey is sent as the bearer token; it may be empty for endpoints
	// that need none (DeepSeek's own API needs one). It never appears in
	// the model's errors or log records, and printing or logging the
	// Config (fmt, slog) shows "[redacted]" in its place.
	APIKey string
	// Model is the provider's model id, such as "deepseek-flash".
	Model string
	// Dialect is the endpoint's dialect; empty means the one the base
	// URL's host implies (see [Dialect]). Set it for a gateway in front
	// of DeepSeek or a Kimi thinking model ([DialectDeepSeek]), an
	// OpenAI proxy ([DialectOpenAI]) or anything else ([DialectGeneric]).
	Dialect Dialect

	// ContextWindow declares the model's context window in tokens; 0
	// keeps what the catalog knows (unknown for a model it does not
	// know). Negative is an error.
	ContextWindow int
	// Input declares the input modalities the model accepts besides
	// text, such as harness.ModalityImage; nil keeps what the catalog
	// knows (text only for a model it does not know). A model that
	// declares no image input is sent text placeholders instead of
	// images.
	Input []harness.Modality

	// HTTPClient is the HTTP client; nil is a default client with dial,
	// TLS handshake and response-header timeouts and no overall timeout,
	// which would cut long answers off. A client given here keeps
	// whatever timeouts it has: the idle watchdog starts when the
	// response headers arrive, so give its transport a
	// ResponseHeaderTimeout, and never an overall Timeout shorter than
	// the longest answer.
	HTTPClient *http.Client
	// Header is added to every request, such as the attribution headers
	// some routers ask for. Do not put credentials here. A key that is
	// not a header name is an error.
	Header http.Header
	// IdleTimeout is how long a response may stay silent before the call
	// is dropped with a transport error the loop retries (with an error
	// matching harness.CodeTimeout in its chain). The bound starts when
	// the response headers arrive (the wait before them is the
	// transport's response-header timeout) and restarts with every read
	// that brings data. Any byte from the server counts as a sign of
	// life here, SSE keep-alive comments and blank lines included. Zero
	// is 2 minutes; a negative duration disables the bound.
	IdleTimeout time.Duration
	// QueueTimeout bounds the wait for the answer to begin, from the
	// response headers to its first piece (reasoning, text, a tool
	// call): a provider under load keeps a request in its queue and
	// sends keep-alives meanwhile, which count as life but not as an
	// answer. DeepSeek closes a request it has not started after 10
	// minutes. A call past the bound is dropped as IdleTimeout says.
	// Zero is 15 minutes; a negative duration disables the bound.
	QueueTimeout time.Duration
	// StallTimeout bounds the time between pieces of an answer that has
	// begun: keep-alives prove the connection lives, not that the answer
	// progresses, and a stream that sends nothing but keep-alives after
	// its content would otherwise hold the turn for as long as the
	// server keeps it open. A call past the bound is dropped as
	// IdleTimeout says. Zero is 3 minutes; a negative duration disables
	// the bound. Neither bound applies with DisableStreaming.
	StallTimeout time.Duration
	// DisableStreaming sends one non-streamed request per call, whose
	// whole answer is then yielded as chunks, for endpoints that cannot
	// stream.
	DisableStreaming bool
	// Logger receives diagnostics; nil discards them. Nothing logged
	// contains the API key.
	Logger *slog.Logger

	// Thinking turns the model's thinking mode on or off. Under
	// [DialectDeepSeek] and [DialectGeneric] it is sent as the top-level
	// "thinking": {"type": "enabled"|"disabled"} (DeepSeek's, Z.ai's and
	// Moonshot's spelling); [DialectOpenAI] has no such switch, and
	// setting it there is an error (set ReasoningEffort). Nil sends
	// nothing and the provider's default applies (on, for DeepSeek).
	Thinking *bool
	// ReasoningEffort is sent as "reasoning_effort". Under
	// [DialectDeepSeek] it is one of "minimal", "low", "medium", "high",
	// "xhigh", "max" and "ultra" (DeepSeek maps them onto its own
	// levels); other endpoints take whatever they accept ("minimal",
	// "low", "medium", "high" for OpenAI), which is passed on as given.
	// It must be a plain word.
	ReasoningEffort string
	// MaxOutputTokens bounds the answer's length in tokens. It is sent as
	// "max_completion_tokens" under [DialectOpenAI] and as "max_tokens"
	// under the others. Negative is an error.
	MaxOutputTokens int
	// Temperature is the sampling temperature, from 0 to 2. Thinking
	// models may ignore it.
	Temperature *float64
	// TopP is nucleus sampling's probability mass, above 0 and at most 1.
	TopP *float64
	// Seed asks for reproducible sampling where the endpoint supports it.
	// [DialectDeepSeek] takes no seed and sends none.
	Seed *int64
	// ToolChoice is sent as "tool_choice": "auto" (the provider's
	// default), "none" (answer in text), "required" (call some tool), or
	// the name of one tool to call. DeepSeek refuses to force a tool
	// ("required" or a name) in thinking mode, which is on unless turned
	// off: under [DialectDeepSeek], New refuses a forced choice unless
	// Thinking is false, and the requests then say "thinking":
	// {"type": "disabled"}.
	ToolChoice string
	// ParallelToolCalls allows or forbids several tool calls in one
	// answer ("parallel_tool_calls").
	ParallelToolCalls *bool
	// StrictTools turns on strict function calling: every tool is sent
	// with "strict": true, and on DeepSeek's own host the requests go to
	// its beta endpoint, which strict mode needs. Strict mode takes only
	// closed schemas: every object lists all its properties as required
	// and has "additionalProperties": false, strings use only the
	// formats the dialect's strict mode knows and no length bounds
	// (OpenAI's: date, date-time, duration, email, hostname, ipv4, ipv6,
	// time, uuid; DeepSeek's: email, hostname, ipv4, ipv6, uuid, and no
	// minItems or maxItems either). A tool whose schema breaks the rules
	// fails the call with harness.CodeInvalidRequest, naming the tool
	// and the field, before any request is sent.
	StrictTools bool
	// JSONOutput asks for answers that are one JSON object
	// ("response_format": {"type": "json_object"}). The provider expects
	// the prompt to ask for JSON too. (A structured answer,
	// model.Request.Output, needs no JSONOutput: see [New].)
	JSONOutput bool
}

// check validates c, returning every problem found, and the request
// controls.
func (c *Config) check() (sendOptions, []error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, &harness.Error{Code: harness.CodeInvalidOption, Message: "openai: " + fmt.Sprintf(format, args...)})
	}
	// The model keeps copies: a caller changing its Config later changes
	// nothing.
	s := sendOptions{
		thinking: clone(c.Thinking), temperature: clone(c.Temperature), topP: clone(c.TopP), seed: clone(c.Seed),
		parallel: clone(c.ParallelToolCalls), strict: c.StrictTools, jsonOutput: c.JSONOutput,
	}
	if c.ContextWindow < 0 {
		fail("ContextWindow %d: the context window is a positive number of tokens", c.ContextWindow)
	}
	if e := strings.TrimSpace(c.ReasoningEffort); e != "" {
		if !validToken(e) {
			fail("reasoning effort %q is not a word such as low, medium or high", e)
		}
		s.effort = e
	}
	if c.MaxOutputTokens < 0 {
		fail("max output tokens %d is negative", c.MaxOutputTokens)
	}
	s.maxTokens = int64(max(c.MaxOutputTokens, 0))
	if t := c.Temperature; t != nil && (*t < 0 || *t > 2 || *t != *t) {
		fail("temperature %v is outside 0 to 2", *t)
	}
	if p := c.TopP; p != nil && (*p <= 0 || *p > 1 || *p != *p) {
		fail("top_p %v is outside (0, 1]", *p)
	}
	if ch := strings.TrimSpace(c.ToolChoice); ch != "" {
		if !validToken(ch) {
			fail("tool choice %q is neither auto, none, required nor a tool name", ch)
		}
		s.toolChoice = ch
	}
	for _, k := range slices.Sorted(maps.Keys(c.Header)) {
		if !validHeaderName(k) {
			fail("Header %q: %q is not a header name", k, k)
		}
	}
	return s, errs
}

// clone returns a copy of *p, or nil.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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

// lookupModel returns what the module's catalog knows of a model id:
// every id DeepSeek serves (deepseek-flash, its legacy ids
// deepseek-v4-flash and deepseek-v4-flash-vision-exp, all 1,000,000
// tokens with text and image input, and deepseek-v4-pro, 1,000,000
// tokens of text), and Anthropic's Claude models for endpoints that
// serve them in this format. Unknown ids report false.
func lookupModel(id string) (model.Info, bool) {
	c, ok := catalog.Lookup(id)
	if !ok {
		return model.Info{Name: id}, false
	}
	info := model.Info{Name: id, ContextWindow: c.ContextWindow, Input: []harness.Modality{harness.ModalityText}}
	if c.Images {
		info.Input = append(info.Input, harness.ModalityImage)
	}
	return info, true
}

// New returns a model on the OpenAI-compatible Chat Completions endpoint
// cfg names. The catalog (deepseek-flash, deepseek-v4-pro) and
// cfg.ContextWindow and cfg.Input declare the context window and the
// input modalities; an unknown model accepts text only. A bad base URL,
// an empty model id, an invalid field (harness.CodeInvalidOption) and an
// empty key for DeepSeek's own API (harness.CodeAuth) are errors.
//
//	m, err := openai.New(openai.Config{
//		BaseURL: "https://api.deepseek.com",
//		APIKey:  os.Getenv("DEEPSEEK_API_KEY"),
//		Model:   "deepseek-flash",
//	})
//
// The model also has a CloseIdleConnections method, as http.Client
// does, which closes the idle connections of its HTTP client and leaves
// it usable; reach it with a type assertion to
// interface{ CloseIdleConnections() }.
func New(cfg Config) (model.Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("openai: no model id given (%q): name the provider's model, such as deepseek-flash", cfg.Model)}
	}
	baseURL := cfg.BaseURL
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", baseURL)
	}
	if cfg.APIKey == "" && isDeepSeekHost(u.Hostname()) {
		return nil, &harness.Error{Code: harness.CodeAuth, Message: "openai: no API key given for DeepSeek's API: pass the key (for example from " + envDeepSeekKey + ")"}
	}
	send, errs := cfg.check()
	dialect := dialectForHost(u)
	if cfg.Dialect != "" {
		d, err := parseDialect(string(cfg.Dialect))
		if err != nil {
			errs = append(errs, &harness.Error{Code: harness.CodeInvalidOption, Message: err.Error()})
		}
		dialect = d
	}
	r := rulesFor(dialect)
	fail := func(format string, args ...any) {
		errs = append(errs, &harness.Error{Code: harness.CodeInvalidOption, Message: "openai: " + fmt.Sprintf(format, args...)})
	}
	if send.thinking != nil && !r.thinkingObject {
		fail("the %s dialect has no thinking switch: leave Thinking nil and set ReasoningEffort", r.dialect)
	}
	if r.efforts != nil && send.effort != "" && !slices.Contains(r.efforts, send.effort) {
		fail("the %s dialect takes reasoning effort %s or %s, not %q", r.dialect,
			strings.Join(r.efforts[:len(r.efforts)-1], ", "), r.efforts[len(r.efforts)-1], send.effort)
	}
	if forced := send.toolChoice != "" && send.toolChoice != "auto" && send.toolChoice != "none"; forced &&
		r.forcedToolNeedsThinkingOff && (send.thinking == nil || *send.thinking) {
		fail("tool choice %q forces a tool, which the %s API refuses in thinking mode (on unless turned off): set Thinking to false to force a tool, or set ToolChoice to \"auto\"", send.toolChoice, r.dialect)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if send.strict && strings.EqualFold(u.Hostname(), "api.deepseek.com") && !strings.Contains(u.Path, "/beta") {
		// Strict function calling is a beta feature of DeepSeek's API.
		baseURL = strings.TrimRight(baseURL, "/") + "/beta"
	}
	info, _ := lookupModel(cfg.Model)
	if cfg.ContextWindow > 0 {
		info.ContextWindow = cfg.ContextWindow
	}
	if cfg.Input != nil {
		info.Input = slices.Clone(cfg.Input)
	}
	if len(info.Input) == 0 {
		info.Input = []harness.Modality{harness.ModalityText}
	}
	bounds := streamwatch.Config{
		Idle:  orDefault(cfg.IdleTimeout, defaultIdleTimeout),
		Queue: orDefault(cfg.QueueTimeout, defaultQueueTimeout),
		Stall: orDefault(cfg.StallTimeout, defaultStallTimeout),
	}
	m := &chatModel{
		info:       info,
		baseURL:    baseURL,
		apiKey:     cfg.APIKey,
		httpClient: cfg.HTTPClient,
		logger:     logs.OrDiscard(cfg.Logger),
		bounds:     bounds,
		streaming:  !cfg.DisableStreaming,
		openAIHost: isOpenAIHost(u.Hostname()),
		rules:      r,
		send:       send,
	}
	if m.httpClient == nil {
		m.httpClient = streamwatch.HTTPClient()
	}
	ropts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(m.httpClient),
		// One Stream call is one attempt: retries are the loop's.
		option.WithMaxRetries(0),
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Header)) {
		for i, v := range cfg.Header[k] {
			if i == 0 {
				ropts = append(ropts, option.WithHeader(k, v))
			} else {
				ropts = append(ropts, option.WithHeaderAdd(k, v))
			}
		}
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
func (m *chatModel) Info() model.Info {
	info := m.info
	info.Input = slices.Clone(info.Input)
	return info
}

// CloseIdleConnections closes the idle connections of the model's HTTP
// client, as [http.Client.CloseIdleConnections] does. The model stays
// usable.
func (m *chatModel) CloseIdleConnections() {
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

// FromEnv returns the Config the environment names, read through getenv
// (pass os.Getenv), for [New]:
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
// dialect in either case; an unknown name is an error. These six
// variables are all FromEnv reads; [New] reads none. Set the Config's
// other fields before passing it to New:
//
//	cfg, err := openai.FromEnv(os.Getenv)
//	...
//	cfg.Logger = logger
//	m, err := openai.New(cfg)
func FromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		return Config{}, errNoKey()
	}
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var dialect Dialect
	if d := get(envDialect); d != "" {
		pd, err := parseDialect(d)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", envDialect, err)
		}
		dialect = pd
	}
	model := get(envModel)
	if base := get(envBaseURL); base != "" {
		if model == "" {
			return Config{}, fmt.Errorf("openai: %s is set but %s is not: name the model to use", envBaseURL, envModel)
		}
		return Config{BaseURL: base, APIKey: get(envAPIKey), Model: model, Dialect: dialect}, nil
	}
	if key := get(envDeepSeekKey); key != "" {
		base := deepSeekBaseURL
		if b := get(envDeepSeekBaseURL); b != "" {
			base = b
		}
		if model == "" {
			model = deepSeekDefaultModel
		}
		if dialect == "" {
			dialect = DialectDeepSeek
		}
		return Config{BaseURL: base, APIKey: key, Model: model, Dialect: dialect}, nil
	}
	return Config{}, errNoKey()
}

// Format prints the Config with its API key replaced by "[redacted]"
// (or left empty when there is none), for every verb and flag fmt
// knows, so a Config printed by mistake does not leak its key.
func (c Config) Format(f fmt.State, verb rune) {
	type plain Config // the same fields, without this method
	p := plain(c)
	if p.APIKey != "" {
		p.APIKey = "[redacted]"
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), p)
}

// LogValue logs the Config's endpoint, model and dialect, and whether it
// has an API key, never the key itself.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("dialect", string(c.Dialect)),
		slog.Bool("api_key_set", c.APIKey != ""),
	)
}
