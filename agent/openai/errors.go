package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/retryafter"
	"github.com/go-harness/harness/internal/streamwatch"
	"github.com/go-harness/harness/internal/textcut"
)

// maxMessage bounds a provider message quoted in an error.
const maxMessage = 2000

// failure is a classified model failure before it becomes an error.
type failure struct {
	code       harness.Code
	status     int
	retryAfter time.Duration
	message    string
	err        error
}

// toError returns the failure as the loop reads it: a *harness.Error
// with the code, whose cause carries the status and the Retry-After hint
// when the provider gave them.
func (f *failure) toError() *harness.Error {
	cause := f.err
	if f.status != 0 || f.retryAfter != 0 {
		cause = &model.ProviderError{Status: f.status, RetryAfter: f.retryAfter, Err: f.err}
	}
	if f.message == "" && f.err != nil {
		f.message = f.err.Error()
	}
	return model.NewError(f.code, f.message, cause)
}

// classify turns the failure of a call into a model error. parent is
// the caller's context, callCtx the call's own (cancelled by the call's
// watch when a time bound passes).
func (m *chatModel) classify(parent, callCtx context.Context, x *exchange, err error) *harness.Error {
	var f *failure
	var done *harness.Error
	timeout, timedOut := streamwatch.Timeout(context.Cause(callCtx))
	switch {
	case parent.Err() != nil:
		f = &failure{code: harness.CodeAborted, message: "the model call was cancelled", err: parent.Err()}
	case timedOut:
		f = &failure{code: harness.CodeTransport, err: timeout, message: timeout.Message}
	case x != nil && x.status >= 400:
		// The SDK's error is left out: its request holds the
		// Authorization header, and everything it says is here.
		f = classifyHTTP(x.status, x.header, x.reply)
	case errors.As(err, &done):
		// Already classified.
		return m.redactError(done)
	default:
		var ae *oai.Error
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		var ne net.Error
		switch {
		case errors.As(err, &ae):
			f = classifyHTTP(ae.StatusCode, nil, []byte(`{"error":`+ae.RawJSON()+`}`))
		case errors.As(err, &syn), errors.As(err, &typ):
			f = &failure{code: harness.CodeServer, err: err,
				message: "the provider sent a malformed stream chunk: " + err.Error()}
		case errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
			errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			f = &failure{code: harness.CodeTransport, err: err,
				message: "the connection to the model failed: " + err.Error()}
		default:
			f = &failure{code: harness.CodeUnknown, err: err, message: err.Error()}
		}
	}
	return m.redact(f).toError()
}

// redact removes the API key from the failure's message, and replaces an
// underlying error whose text holds the key by one with the key blanked
// out, in case a provider echoed it.
func (m *chatModel) redact(f *failure) *failure {
	f.message = m.redactString(f.message)
	if f.err != nil {
		if s := f.err.Error(); s != m.redactString(s) {
			f.err = errors.New(m.redactString(s))
		}
	}
	return f
}

// redactError redacts an error classified earlier.
func (m *chatModel) redactError(e *harness.Error) *harness.Error {
	if s := e.Error(); s != m.redactString(s) {
		return &harness.Error{Code: e.Code, Message: m.redactString(s), Err: errors.New(m.redactString(fmt.Sprint(e.Err)))}
	}
	return e
}

// redactString blanks the API key out of s. Keys shorter than 8 bytes
// are not secrets worth mangling text for (local servers take "none").
func (m *chatModel) redactString(s string) string {
	if len(m.apiKey) < 8 {
		return s
	}
	return strings.ReplaceAll(s, m.apiKey, "[redacted]")
}

// classifyHTTP classifies an error reply by its status and body.
func classifyHTTP(status int, h http.Header, body []byte) *failure {
	pe := parseProviderError(body)
	msg := pe.message
	if msg == "" {
		msg = http.StatusText(status)
		if msg == "" {
			msg = "the provider gave no reason"
		}
	}
	f := &failure{status: status, retryAfter: retryafter.Parse(h)}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		f.code = harness.CodeAuth
		f.message = msg + " (check that the API key is valid and has access to this model)"
	case status == http.StatusPaymentRequired:
		f.code = harness.CodeInsufficientBalance
		f.message = "the account's balance is used up: top up your balance with the provider, then try again (provider said: " + msg + ")"
	case status == http.StatusTooManyRequests:
		f.code = harness.CodeRateLimit
		f.message = msg
	case status == http.StatusRequestTimeout:
		f.code = harness.CodeTransport
		f.message = msg
	case status >= 500 || status == http.StatusConflict:
		f.code = harness.CodeServer
		f.message = msg
	case contextOverflow(pe):
		f.code = harness.CodeContextWindowExceeded
		f.message = msg
	case status >= 400:
		f.code = harness.CodeInvalidRequest
		f.message = msg
	default:
		f.code = harness.CodeUnknown
		f.message = msg
	}
	return f
}

// classifyEvent classifies an error event inside a stream. Its body is
// the same shape as an error reply's; a numeric code is read as an HTTP
// status, and anything unrecognised is a server failure, which the loop
// retries.
func classifyEvent(data []byte) *failure {
	pe := parseProviderError(data)
	if pe.status >= 400 && pe.status < 600 {
		f := classifyHTTP(pe.status, nil, data)
		f.status = 0
		return f
	}
	msg := pe.message
	if msg == "" {
		msg = "the provider reported an error mid-stream"
	}
	kind := strings.ToLower(pe.code + " " + pe.typ)
	f := &failure{code: harness.CodeServer, message: msg}
	switch {
	case contextOverflow(pe):
		f.code = harness.CodeContextWindowExceeded
	case strings.Contains(kind, "rate_limit") || strings.Contains(kind, "rate limit"):
		f.code = harness.CodeRateLimit
	case strings.Contains(kind, "insufficient_quota") || strings.Contains(kind, "insufficient_balance"):
		f.code = harness.CodeInsufficientBalance
		f.message = "the account's balance is used up: top up your balance with the provider, then try again (provider said: " + msg + ")"
	case strings.Contains(kind, "content_filter"):
		f.code = harness.CodeContentFilter
	case strings.Contains(kind, "invalid_request"):
		f.code = harness.CodeInvalidRequest
	}
	return f
}

// providerError is what an error body says.
type providerError struct {
	message string
	code    string
	typ     string
	// status is a numeric code, which some providers use for the HTTP
	// status.
	status int
}

// parseProviderError reads the error bodies providers send:
// {"error":{"message","type","code","param"}} (OpenAI, DeepSeek),
// {"error":"text"}, {"message":"text"}, {"detail":"text"}, or plain text.
func parseProviderError(body []byte) providerError {
	var pe providerError
	text := strings.TrimSpace(string(body))
	if text == "" {
		return pe
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		if !strings.HasPrefix(text, "<") { // not an HTML error page
			pe.message = textcut.Prefix(text, maxMessage)
		}
		return pe
	}
	obj := top
	if raw, ok := top["error"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			obj = inner
		} else {
			pe.message = jsonText(raw)
		}
	}
	if pe.message == "" {
		for _, k := range []string{"message", "detail", "error_msg", "msg"} {
			if s := jsonText(obj[k]); s != "" {
				pe.message = s
				break
			}
		}
	}
	if raw := openRouterRaw(obj); raw != "" {
		// OpenRouter's "Provider returned error" says nothing; what the
		// upstream provider said is in error.metadata.raw.
		if pe.message == "" {
			pe.message = raw
		} else {
			pe.message += ": " + raw
		}
	}
	pe.code = jsonText(obj["code"])
	pe.typ = jsonText(obj["type"])
	if n, err := strconv.Atoi(pe.code); err == nil {
		pe.status = n
	}
	pe.message = textcut.Prefix(pe.message, maxMessage)
	return pe
}

// jsonText returns a JSON string's text or a JSON number's digits.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// contextOverflow reports whether an error says the request is larger
// than the model's context window.
func contextOverflow(pe providerError) bool {
	if pe.code == "context_length_exceeded" || pe.typ == "context_length_exceeded" {
		return true
	}
	msg := strings.ToLower(pe.message)
	for _, p := range []string{
		"maximum context length", "context length", "context_length_exceeded", "context window",
		"prompt is too long", "input is too long", "too many input tokens", "reduce the length of the messages",
	} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// openRouterRaw returns the upstream provider's message from OpenRouter's
// error.metadata.raw (a string that is often a JSON error body itself),
// with the provider's name when given.
func openRouterRaw(obj map[string]json.RawMessage) string {
	var meta struct {
		Raw          json.RawMessage `json:"raw"`
		ProviderName string          `json:"provider_name"`
	}
	if len(obj["metadata"]) == 0 || json.Unmarshal(obj["metadata"], &meta) != nil {
		return ""
	}
	raw := jsonText(meta.Raw)
	if raw == "" && len(meta.Raw) > 0 && meta.Raw[0] == '{' {
		raw = string(meta.Raw)
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if strings.HasPrefix(raw, "{") {
		if inner := parseProviderError([]byte(raw)); inner.message != "" {
			raw = inner.message
		}
	}
	if meta.ProviderName != "" {
		raw = meta.ProviderName + ": " + raw
	}
	return textcut.Prefix(raw, maxMessage)
}
