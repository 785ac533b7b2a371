package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-harness/harness"
)

// ProviderError is what a provider said about a failed call: its HTTP
// status and its hint for when to try again. It is the cause of the
// *harness.Error a Model yields; find it with errors.As.
type ProviderError struct {
	// Status is the HTTP status; 0 when the failure came without one
	// (an error event inside a stream, say).
	Status int
	// RetryAfter is the provider's hint for when to try again; 0 when it
	// gave none.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

// Error names the status and the underlying error.
func (e *ProviderError) Error() string {
	s := "the provider failed"
	if e.Status != 0 {
		s = fmt.Sprintf("HTTP %d", e.Status)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// NewError returns a model failure: a *harness.Error with code whose
// message reads "model: <code>: <message>", or "model: <code> (HTTP
// <status>): <message>" when cause holds a *ProviderError with a status.
// An empty message is the text of the underlying error. message never
// contains credentials: redact it first.
func NewError(code harness.Code, message string, cause error) *harness.Error {
	var pe *ProviderError
	errors.As(cause, &pe)
	if message == "" {
		switch {
		case pe != nil && pe.Err != nil:
			message = pe.Err.Error()
		case pe == nil && cause != nil:
			message = cause.Error()
		}
	}
	s := "model: " + string(code)
	if pe != nil && pe.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", pe.Status)
	}
	if message != "" {
		s += ": " + message
	}
	return &harness.Error{Code: code, Message: s, Err: cause}
}

// Retryable reports whether trying the same request again may succeed:
// the failure's code (harness.CodeOf) is a rate limit, a server or
// transport failure, or an empty or truncated answer.
func Retryable(err error) bool {
	switch harness.CodeOf(err) {
	case harness.CodeRateLimit, harness.CodeServer, harness.CodeTransport,
		harness.CodeEmptyResponse, harness.CodeTruncatedStream:
		return true
	}
	return false
}
