package tools

import (
	"context"

	"github.com/go-harness/harness"
)

// Handler runs a checked call and always returns a result: failures are
// error results, never a nil result and never a panic.
type Handler interface {
	Handle(ctx context.Context, call *Call) *harness.ToolResult
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, call *Call) *harness.ToolResult

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, call *Call) *harness.ToolResult { return f(ctx, call) }

// Middleware wraps a Handler, as net/http middleware wraps an
// http.Handler: it may look at the call before it runs, change or replace
// its result, or not run it at all.
type Middleware func(next Handler) Handler
