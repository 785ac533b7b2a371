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
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/internal/textcut"
)

// maxMessage bounds a provider message quoted in an error.
const maxMessage = 2000

// classify turns the failure of a call into a *agent.ModelError. parent
// is the caller's context, callCtx the call's own (cancelled by the
// watchdog with ErrIdleTimeout).
func (m *Model) classify(parent, callCtx context.Context, x *exchange, err error) *agent.ModelError {
	var me *agent.ModelError
	switch {
	case parent.Err() != nil:
		me = &agent.ModelError{Code: agent.CodeAborted, Message: "the model call was cancelled", Err: parent.Err()}
	case errors.Is(context.Cause(callCtx), ErrIdleTimeout):
		me = &agent.ModelError{Code: agent.CodeTransport, Err: ErrIdleTimeout,
			Message: fmt.Sprintf("no data from the model for %s; the stalled response was dropped", m.idle)}
	case x != nil && x.status >= 400:
		// The SDK's error is left out: its request holds the
		// Authorization header, and everything it says is here.
		me = classifyHTTP(x.status, x.header, x.body)
	case errors.As(err, &me):
		// Already classified.
	default:
		var se *ssestream.StreamError
		var ae *oai.Error
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		var ne net.Error
		switch {
		case errors.As(err, &se):
			me = classifyEvent(se.Event.Data)
			me.Err = err
		case errors.As(err, &ae):
			me = classifyHTTP(ae.StatusCode, nil, []byte(`{"error":`+ae.RawJSON()+`}`))
		case errors.As(err, &syn), errors.As(err, &typ):
			me = &agent.ModelError{Code: agent.CodeServer, Err: err,
				Message: "the provider sent a malformed stream chunk: " + err.Error()}
		case errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
			errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			me = &agent.ModelError{Code: agent.CodeTransport, Err: err,
				Message: "the connection to the model failed: " + err.Error()}
		default:
			me = &agent.ModelError{Code: agent.CodeUnknown, Err: err, Message: err.Error()}
		}
	}
	return m.redact(me)
}

// redact removes the API key from the error's message, and replaces an
// underlying error whose text holds the key by one with the key blanked
// out, in case a provider echoed it.
func (m *Model) redact(me *agent.ModelError) *agent.ModelError {
	if me == nil {
		return me
	}
	me.Message = m.redactString(me.Message)
	if me.Err != nil {
		if s := me.Err.Error(); s != m.redactString(s) {
			me.Err = errors.New(m.redactString(s))
		}
	}
	return me
}

// redactString blanks the API key out of s. Keys shorter than 8 bytes
// are not secrets worth mangling text for (local servers take "none").
func (m *Model) redactString(s string) string {
	if len(m.apiKey) < 8 {
		return s
	}
	return strings.ReplaceAll(s, m.apiKey, "[redacted]")
}

// classifyHTTP classifies an error reply by its status and body.
func classifyHTTP(status int, h http.Header, body []byte) *agent.ModelError {
	pe := parseProviderError(body)
	msg := pe.message
	if msg == "" {
		msg = http.StatusText(status)
		if msg == "" {
			msg = "the provider gave no reason"
		}
	}
	me := &agent.ModelError{Status: status, RetryAfter: retryAfter(h)}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		me.Code = agent.CodeAuth
		me.Message = msg + " (check that the API key is valid and has access to this model)"
	case status == http.StatusPaymentRequired:
		me.Code = agent.CodeInsufficientBalance
		me.Message = "the account's balance is used up: top up your balance with the provider, then try again (provider said: " + msg + ")"
	case status == http.StatusTooManyRequests:
		me.Code = agent.CodeRateLimit
		me.Message = msg
	case status == http.StatusRequestTimeout:
		me.Code = agent.CodeTransport
		me.Message = msg
	case status >= 500 || status == http.StatusConflict:
		me.Code = agent.CodeServer
		me.Message = msg
	case contextOverflow(pe):
		me.Code = agent.CodeContextWindowExceeded
		me.Message = msg
	case status >= 400:
		me.Code = agent.CodeInvalidRequest
		me.Message = msg
	default:
		me.Code = agent.CodeUnknown
		me.Message = msg
	}
	return me
}

// classifyEvent classifies an error event inside a stream. Its body is
// the same shape as an error reply's; a numeric code is read as an HTTP
// status, and anything unrecognised is a server failure, which the loop
// retries.
func classifyEvent(data []byte) *agent.ModelError {
	pe := parseProviderError(data)
	if pe.status >= 400 && pe.status < 600 {
		me := classifyHTTP(pe.status, nil, data)
		me.Status = 0
		return me
	}
	msg := pe.message
	if msg == "" {
		msg = "the provider reported an error mid-stream"
	}
	kind := strings.ToLower(pe.code + " " + pe.typ)
	me := &agent.ModelError{Code: agent.CodeServer, Message: msg}
	switch {
	case contextOverflow(pe):
		me.Code = agent.CodeContextWindowExceeded
	case strings.Contains(kind, "rate_limit") || strings.Contains(kind, "rate limit"):
		me.Code = agent.CodeRateLimit
	case strings.Contains(kind, "insufficient_quota") || strings.Contains(kind, "insufficient_balance"):
		me.Code = agent.CodeInsufficientBalance
		me.Message = "the account's balance is used up: top up your balance with the provider, then try again (provider said: " + msg + ")"
	case strings.Contains(kind, "content_filter"):
		me.Code = agent.CodeContentFilter
	case strings.Contains(kind, "invalid_request"):
		me.Code = agent.CodeInvalidRequest
	}
	return me
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

// retryAfter reads the provider's hint: Retry-After-Ms (milliseconds),
// else Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
