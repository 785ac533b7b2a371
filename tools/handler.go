package tools

import (
	"context"

	"github.com/go-harness/harness"
)

// Handler runs a checked call and always returns a result: failures are
// error results, never a nil result and never a panic. It is a function,
// as grpc's UnaryHandler is: the handlers of a dispatch chain are the
// executor and the closures middleware returns, so a method set would only
// add an adapter.
type Handler func(ctx context.Context, call *Call) *harness.ToolResult

// Middleware wraps a Handler, as net/http middleware wraps an
// http.Handler: it may look at the call before it runs, change or replace
// its result, or not run it at all.
type Middleware func(next Handler) Handler
