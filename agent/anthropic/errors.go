package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/retryafter"
	"github.com/go-harness/harness/internal/streamwatch"
	"github.com/go-harness/harness/internal/textcut"
)

// maxMessage bounds a provider message quoted in an error.
const maxMessage = 2000

// statusOverloaded is the status Anthropic answers with when its API is
// overloaded.
const statusOverloaded = 529

// failure is a classified model failure before it becomes an error.
type failure struct {
	code       harness.Code
	status     int
	retryAfter time.Duration
	message    string
	err        error
}

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

// fail classifies err, redacts the key out of it and logs it.
func (m *messagesModel) fail(parent, callCtx context.Context, x *exchange, err error) error {
	me := m.classify(parent, callCtx, x, err)
	m.logger.Debug("model call failed", "model", m.info.Name, "code", me.Code, "status", x.status, "error", me.Error())
	return me
}

// classify turns the failure of a call into a model error. parent is
// the caller's context, callCtx the call's own (cancelled by its watch
// when a time bound passes).
func (m *messagesModel) classify(parent, callCtx context.Context, x *exchange, err error) *harness.Error {
	var f *failure
	var done *harness.Error
	timeout, timedOut := streamwatch.Timeout(context.Cause(callCtx))
	switch {
	case parent.Err() != nil:
		f = &failure{code: harness.CodeAborted, message: "the model call was cancelled", err: parent.Err()}
	case timedOut:
		f = &failure{code: harness.CodeTransport, err: timeout, message: timeout.Message}
	case x != nil && x.status >= 400:
		// The SDK's error is left out: everything it says is in the
		// reply, and its request holds the credentials.
		f = classifyHTTP(x.status, x.header, x.reply)
	case errors.As(err, &done):
		return m.redactError(done)
	default:
		var syn *json.SyntaxError
		var ne net.Error
		switch {
		case errors.As(err, &syn):
			f = &failure{code: harness.CodeServer, err: err, message: "the provider sent a malformed stream event: " + err.Error()}
		case errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
			errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			f = &failure{code: harness.CodeTransport, err: err, message: "the connection to the model failed: " + err.Error()}
		default:
			f = &failure{code: harness.CodeUnknown, err: err, message: err.Error()}
		}
	}
	f.message = m.redactString(f.message)
	if f.err != nil {
		if s := f.err.Error(); s != m.redactString(s) {
			f.err = errors.New(m.redactString(s))
		}
	}
	return f.toError()
}

// redactError redacts an error classified earlier.
func (m *messagesModel) redactError(e *harness.Error) *harness.Error {
	if s := e.Error(); s != m.redactString(s) {
		return &harness.Error{Code: e.Code, Message: m.redactString(s), Err: errors.New(m.redactString(fmt.Sprint(e.Err)))}
	}
	return e
}

// redactString blanks the API key out of s.
func (m *messagesModel) redactString(s string) string {
	if len(m.apiKey) < 8 {
		return s
	}
	return strings.ReplaceAll(s, m.apiKey, "[redacted]")
}

// providerError is what an error body says: Anthropic's
// {"type":"error","error":{"type","message"},"request_id"}, or another
// endpoint's {"error":{"message","type"}} or plain text.
type providerError struct {
	typ       string
	message   string
	requestID string
}

func parseProviderError(body []byte) providerError {
	var pe providerError
	text := strings.TrimSpace(string(body))
	if text == "" {
		return pe
	}
	var doc struct {
		Error     json.RawMessage `json:"error"`
		Message   string          `json:"message"`
		RequestID string          `json:"request_id"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		if !strings.HasPrefix(text, "<") {
			pe.message = textcut.Prefix(text, maxMessage)
		}
		return pe
	}
	pe.requestID, pe.message = doc.RequestID, doc.Message
	var inner struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(doc.Error, &inner) == nil {
		pe.typ = inner.Type
		if inner.Message != "" {
			pe.message = inner.Message
		}
	} else {
		var s string
		if json.Unmarshal(doc.Error, &s) == nil && s != "" {
			pe.message = s
		}
	}
	pe.message = textcut.Prefix(pe.message, maxMessage)
	return pe
}

// text is the provider's message with its request id.
func (pe providerError) text(fallback string) string {
	msg := pe.message
	if msg == "" {
		msg = fallback
	}
	if pe.requestID != "" {
		msg += " (request " + pe.requestID + ")"
	}
	return msg
}

// classifyHTTP classifies an error reply by its status and body.
func classifyHTTP(status int, h http.Header, body []byte) *failure {
	pe := parseProviderError(body)
	fallback := http.StatusText(status)
	switch status {
	case statusOverloaded:
		fallback = "the API is overloaded"
	case 0:
		fallback = "the provider gave no reason"
	}
	msg := pe.text(fallback)
	f := &failure{status: status, retryAfter: retryafter.Parse(h), message: msg}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		f.code = harness.CodeAuth
		f.message = msg + " (check that the API key is valid and has access to this model)"
	case status == http.StatusPaymentRequired || pe.typ == "billing_error":
		f.code = harness.CodeInsufficientBalance
		f.message = "the account cannot be billed: check its credit and billing with the provider, then try again (provider said: " + msg + ")"
	case status == http.StatusTooManyRequests:
		f.code = harness.CodeRateLimit
	case status == http.StatusRequestTimeout:
		f.code = harness.CodeTransport
	case status >= 500 || status == http.StatusConflict:
		f.code = harness.CodeServer
	case contextOverflow(pe):
		f.code = harness.CodeContextWindowExceeded
	case status >= 400:
		f.code = harness.CodeInvalidRequest
	default:
		f.code = harness.CodeUnknown
	}
	return f
}

// classifyEvent classifies an error event inside a stream (or an error
// document sent with status 200) by its error type.
func classifyEvent(data []byte) *failure {
	pe := parseProviderError(data)
	msg := pe.text("the provider reported an error mid-stream")
	f := &failure{code: harness.CodeServer, message: msg}
	switch pe.typ {
	case "rate_limit_error":
		f.code = harness.CodeRateLimit
	case "authentication_error", "permission_error":
		f.code = harness.CodeAuth
	case "billing_error":
		f.code = harness.CodeInsufficientBalance
	case "invalid_request_error", "not_found_error", "request_too_large":
		f.code = harness.CodeInvalidRequest
		if contextOverflow(pe) {
			f.code = harness.CodeContextWindowExceeded
		}
	case "timeout_error":
		f.code = harness.CodeTransport
	}
	// overloaded_error, api_error and types yet to come: a server
	// failure, which the loop retries.
	return f
}

// contextOverflow reports whether an error says the request is larger
// than the model's context window.
func contextOverflow(pe providerError) bool {
	msg := strings.ToLower(pe.message)
	for _, p := range []string{"prompt is too long", "exceed context limit", "context window", "context length", "too many input tokens"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
