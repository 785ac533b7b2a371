package openai_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/session"
)

func TestHTTPErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		body       string
		headers    []string
		code       harness.Code
		contains   []string
		retryAfter time.Duration
	}{
		{name: "401", status: 401, body: `{"error":{"message":"Authentication Fails, Your api key is invalid","type":"authentication_error"}}`,
			code: harness.CodeAuth, contains: []string{"Authentication Fails", "API key"}},
		{name: "403", status: 403, body: `{"error":{"message":"model not allowed for this key"}}`,
			code: harness.CodeAuth, contains: []string{"model not allowed"}},
		{name: "402", status: 402, body: `{"error":{"message":"Insufficient Balance","type":"unknown_error"}}`,
			code: harness.CodeInsufficientBalance, contains: []string{"top up your balance", "Insufficient Balance"}},
		{name: "400 invalid", status: 400, body: `{"error":{"message":"Missing reasoning_content field in the assistant message at message index 2","type":"invalid_request_error"}}`,
			code: harness.CodeInvalidRequest, contains: []string{"Missing reasoning_content field in the assistant message at message index 2"}},
		{name: "400 context window", status: 400,
			body: `{"error":{"message":"This model's maximum context length is 1000000 tokens. However, you requested 1200000 tokens (1190000 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`,
			code: harness.CodeContextWindowExceeded, contains: []string{"maximum context length is 1000000"}},
		{name: "400 context code", status: 400, body: `{"error":{"message":"too big","code":"context_length_exceeded"}}`,
			code: harness.CodeContextWindowExceeded},
		{name: "422", status: 422, body: `{"error":{"message":"Invalid value for reasoning_effort: 'extreme'","type":"invalid_request_error"}}`,
			code: harness.CodeInvalidRequest, contains: []string{"Invalid value for reasoning_effort: 'extreme'"}},
		{name: "404 model", status: 404, body: `{"error":{"message":"Model Not Exist"}}`,
			code: harness.CodeInvalidRequest, contains: []string{"Model Not Exist"}},
		{name: "429 retry-after-ms", status: 429, body: `{"error":{"message":"Rate limit reached"}}`, headers: []string{"Retry-After-Ms", "1500"},
			code: harness.CodeRateLimit, contains: []string{"Rate limit reached"}, retryAfter: 1500 * time.Millisecond},
		{name: "429 retry-after seconds", status: 429, body: `{"error":{"message":"busy"}}`, headers: []string{"Retry-After-Ms", "", "Retry-After", "7"},
			code: harness.CodeRateLimit, retryAfter: 7 * time.Second},
		{name: "500", status: 500, body: `{"error":{"message":"Internal server error"}}`, code: harness.CodeServer, contains: []string{"Internal server error"}},
		{name: "503", status: 503, body: `{"error":{"message":"Server overloaded, please try again later"}}`, headers: []string{"Retry-After-Ms", "", "Retry-After", "2"},
			code: harness.CodeServer, contains: []string{"overloaded"}, retryAfter: 2 * time.Second},
		{name: "error as a string", status: 400, body: `{"error":"bad tool schema"}`, code: harness.CodeInvalidRequest, contains: []string{"bad tool schema"}},
		{name: "detail", status: 422, body: `{"detail":"messages: field required"}`, code: harness.CodeInvalidRequest, contains: []string{"messages: field required"}},
		{name: "plain text", status: 400, body: `prompt is too long for this model`, code: harness.CodeContextWindowExceeded},
		{name: "html gateway page", status: 502, body: `<html><body>502 Bad Gateway</body></html>`, code: harness.CodeServer, contains: []string{"Bad Gateway"}},
		{name: "empty body", status: 504, body: ``, code: harness.CodeServer, contains: []string{"Gateway Timeout"}},
		{name: "408", status: 408, body: `{}`, code: harness.CodeTransport},
		// OpenRouter: the useful text is the upstream body in error.metadata.raw.
		{name: "openrouter metadata.raw", status: 400,
			body: `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"tools[0].function.parameters: additionalProperties must be false\",\"type\":\"invalid_request_error\"}}","provider_name":"OpenAI"}},"user_id":"user_1"}`,
			code: harness.CodeInvalidRequest, contains: []string{"Provider returned error", "OpenAI: tools[0].function.parameters: additionalProperties must be false"}},
		{name: "openrouter raw text", status: 429,
			body:     `{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"deepseek/deepseek-r1:free is temporarily rate-limited upstream","provider_name":"Chutes"}}}`,
			code:     harness.CodeRateLimit,
			contains: []string{"Chutes: deepseek/deepseek-r1:free is temporarily rate-limited upstream"}},
		// Cerebras answers a field it does not know with a flat error body.
		{name: "cerebras wrong_api_format", status: 400,
			body: `{"message":"messages.1.assistant.reasoning_content: property is unsupported","type":"invalid_request_error","param":"messages","code":"wrong_api_format"}`,
			code: harness.CodeInvalidRequest, contains: []string{"reasoning_content: property is unsupported"}},
		// DeepSeek's answer when a tool-call turn comes back without its reasoning.
		{name: "deepseek missing reasoning", status: 400,
			body: `{"error":{"message":"The reasoning_content in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`,
			code: harness.CodeInvalidRequest, contains: []string{"must be passed back"}},
		{name: "dashscope", status: 400,
			body: `{"error":{"code":"invalid_parameter_error","param":null,"message":"<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]","type":"invalid_request_error"},"id":"chatcmpl-1","request_id":"r-1"}`,
			code: harness.CodeInvalidRequest, contains: []string{"Range of input length"}},
		{name: "groq tool_use_failed", status: 400,
			body: `{"error":{"message":"Failed to call a function. Please adjust your prompt.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=read>"}}`,
			code: harness.CodeInvalidRequest, contains: []string{"Failed to call a function"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, errorReply(tc.status, tc.body, tc.headers...), sse(text("must not be reached"), finish("stop")))
			_, err := drain(t, p.model(), context.Background(), simpleRequest())
			me := modelErr(t, err)
			assert.Equal(t, tc.code, me.Code, "%v", err)
			assert.Equal(t, tc.status, me.Status)
			for _, s := range tc.contains {
				assert.Contains(t, me.Error(), s)
			}
			assert.NotContains(t, me.Message, "OpenAI API error", "the provider's text, not the SDK's status line")
			if tc.retryAfter != 0 {
				assert.Equal(t, tc.retryAfter, me.RetryAfter)
			}
			assert.Len(t, p.Requests(), 1, "the SDK never retries on its own")
		})
	}
}

// The loop, not the SDK, retries a 429, honouring Retry-After-Ms.
func TestRateLimitRetriedOnlyByTheLoop(t *testing.T) {
	p := newProvider(t,
		errorReply(429, `{"error":{"message":"Rate limit reached"}}`),
		errorReply(503, `{"error":{"message":"overloaded"}}`),
		sse(text("ok"), finish("stop")),
	)
	loop, err := agent.New(agent.WithModel(p.model()), agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}}))
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	var retries []harness.Code
	for ev := range s.Run(context.Background(), "go") {
		if r, ok := ev.(*agent.Retry); ok {
			retries = append(retries, harness.CodeOf(r.Err))
		}
		if te, ok := ev.(*agent.TurnEnd); ok {
			assert.Equal(t, "completed", te.Reason)
		}
	}
	assert.Equal(t, []harness.Code{harness.CodeRateLimit, harness.CodeServer}, retries)
	assert.Len(t, p.Requests(), 3, "one request per loop attempt")
}

func TestFatalErrorsAreNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 402, 422} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			p := newProvider(t, errorReply(status, `{"error":{"message":"no"}}`), sse(text("x"), finish("stop")))
			loop, err := agent.New(agent.WithModel(p.model()), agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 3, BaseDelay: time.Millisecond}}))
			require.NoError(t, err)
			t.Cleanup(func() { loop.Close() })
			s, err := loop.NewSession(context.Background(), session.Header{})
			require.NoError(t, err)
			var endErr error
			for ev, err := range s.Run(context.Background(), "go") {
				if _, ok := ev.(*agent.TurnEnd); ok {
					endErr = err
				}
			}
			require.Error(t, endErr)
			assert.Len(t, p.Requests(), 1)
		})
	}
}

// The key never shows in an error or a log record, even when the
// provider echoes it or the connection fails.
func TestAPIKeyNeverInErrorsOrLogs(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	echo := fmt.Sprintf(`{"error":{"message":"Incorrect API key provided: %s. You can find your API key in the console.","type":"authentication_error"}}`, testKey)
	p := newProvider(t,
		errorReply(401, echo),
		sseRaw(streamBody(raw(fmt.Sprintf(`{"error":{"message":"key %s is suspended"}}`, testKey)))),
		errorReply(400, fmt.Sprintf(`plain text mentioning %s`, testKey)),
		sse(text("fine"), finish("stop")),
	)
	m := p.model(openai.Config{Logger: logger})
	var texts []string
	for range 3 {
		_, err := drain(t, m, context.Background(), simpleRequest())
		require.Error(t, err)
		texts = append(texts, err.Error(), fmt.Sprintf("%v|%+v|%s", err, err, err))
		for e := err; e != nil; e = unwrap(e) {
			texts = append(texts, e.Error())
		}
	}
	// A failed connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	dead, err := openai.New(openai.Config{BaseURL: "http://" + addr + "/v1?key=" + testKey, APIKey: testKey, Model: "m", Logger: logger})
	require.NoError(t, err)
	_, err = drain(t, dead, context.Background(), simpleRequest())
	assert.Equal(t, harness.CodeTransport, modelErr(t, err).Code)
	texts = append(texts, err.Error())
	for e := err; e != nil; e = unwrap(e) {
		texts = append(texts, e.Error())
	}

	_, err = drain(t, m, context.Background(), simpleRequest())
	require.NoError(t, err)

	assert.Contains(t, texts[0], "Incorrect API key provided: [redacted]")
	for _, s := range texts {
		assert.NotContains(t, s, testKey)
	}
	require.NotEmpty(t, logs.String())
	assert.NotContains(t, logs.String(), testKey)
	assert.Equal(t, "Bearer "+testKey, p.Requests()[0].Header.Get("Authorization"), "the key is sent where it belongs")
}

func unwrap(err error) error {
	u, ok := err.(interface{ Unwrap() error })
	if !ok {
		return nil
	}
	return u.Unwrap()
}

// OPENAI_* variables meant for OpenAI never reach another provider.
func TestNoOpenAIHeadersToOtherHosts(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-secret")
	t.Setenv("OPENAI_PROJECT_ID", "proj-secret")
	t.Setenv("OPENAI_API_KEY", "sk-openai-not-for-deepseek")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Openai-Only: yes")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/wrong")
	p := newProvider(t, sse(text("x"), finish("stop")))
	_, err := drain(t, p.model(), context.Background(), simpleRequest())
	require.NoError(t, err)
	h := p.Requests()[0].Header
	assert.Empty(t, h.Get("OpenAI-Organization"))
	assert.Empty(t, h.Get("OpenAI-Project"))
	assert.Empty(t, h.Get("X-Openai-Only"))
	assert.Empty(t, h.Get("X-Stainless-Timeout"), "no per-request timeout bounds the stream")
	assert.Equal(t, "0", h.Get("X-Stainless-Retry-Count"))
	assert.Equal(t, "Bearer "+testKey, h.Get("Authorization"))
	for k, vs := range h {
		for _, v := range vs {
			assert.NotContains(t, v, "secret", k)
			assert.NotContains(t, v, "sk-openai", k)
		}
	}
}

// On OpenAI's own host the SDK's environment applies (organization,
// project), while the caller's key still wins.
func TestOpenAIHostKeepsOrganization(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-mine")
	t.Setenv("OPENAI_PROJECT_ID", "proj-mine")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	var seen *http.Request
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r
		body := streamBody(text("hi"), finish("stop")) + "data: [DONE]\n\n"
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	m, err := openai.New(openai.Config{BaseURL: "https://api.openai.com/v1", APIKey: testKey, Model: "gpt-5", HTTPClient: &http.Client{Transport: rt}, MaxOutputTokens: 100})
	require.NoError(t, err)
	_, err = drain(t, m, context.Background(), simpleRequest())
	require.NoError(t, err)
	require.NotNil(t, seen)
	assert.Equal(t, "api.openai.com", seen.URL.Host)
	assert.Equal(t, "org-mine", seen.Header.Get("OpenAI-Organization"))
	assert.Equal(t, "proj-mine", seen.Header.Get("OpenAI-Project"))
	assert.Equal(t, "Bearer "+testKey, seen.Header.Get("Authorization"))
	body, err := io.ReadAll(seen.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `"max_completion_tokens":100`)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
