package tools

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

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

// Chain wraps h in mws so that mws[0] is the outermost: it sees the call
// first and the result last.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}

// Executor returns the innermost handler: it runs the call's tool (as
// resolved by Registry.Check), turns a returned error into an error result
// with the error's code, and turns a panic into a CodeToolPanic result.
func Executor() Handler { return HandlerFunc(execute) }

func execute(ctx context.Context, call *Call) (res *harness.ToolResult) {
	t := call.Tool()
	if t == nil {
		return harness.ErrorResult(harness.CodeUnknownTool, "There is no tool named %q.", call.Name)
	}
	defer func() {
		if p := recover(); p != nil {
			res = PanicResult(call, p)
		}
	}()
	res, err := t.Execute(ctx, call)
	return Normalize(call, res, err)
}

// Normalize turns what a tool returned into a result the model can be
// shown: an error becomes an error result with the error's code
// (harness.CodeOf; harness.CodeToolFailed when it has none) and text,
// a nil result becomes an empty one, and an error result without a code
// gets CodeToolFailed.
func Normalize(call *Call, res *harness.ToolResult, err error) *harness.ToolResult {
	if err != nil {
		code := harness.CodeOf(err)
		if code == harness.CodeUnknown {
			code = harness.CodeToolFailed
		}
		msg := err.Error()
		switch code {
		case harness.CodeAborted:
			msg = fmt.Sprintf("The %s call was cancelled before it finished (%v).", call.Name, err)
			if call.Spec.SideEffects {
				msg += " Its side effects are unknown: check the state before retrying."
			}
		case harness.CodeTimeout:
			msg = fmt.Sprintf("The %s call ran out of time (%v).", call.Name, err)
			if call.Spec.SideEffects {
				msg += " Its side effects are unknown: check the state before retrying."
			}
		}
		out := &harness.ToolResult{IsError: true, Code: code, Content: []harness.Block{harness.TextBlock(msg)}}
		if res != nil {
			out.Render, out.Files = res.Render, res.Files
		}
		return out
	}
	if res == nil {
		return &harness.ToolResult{Content: []harness.Block{harness.TextBlock("(no output)")}}
	}
	if res.IsError && res.Code == "" {
		res.Code = harness.CodeToolFailed
	}
	if len(res.Content) == 0 {
		res.Content = []harness.Block{harness.TextBlock("(no output)")}
	}
	return res
}

// PanicResult turns a recovered panic into an error result and logs the
// stack, so a broken tool never takes the loop down with it.
func PanicResult(call *Call, p any) *harness.ToolResult {
	logger := slog.New(slog.DiscardHandler)
	if call.Env != nil && call.Env.Logger != nil {
		logger = call.Env.Logger
	}
	logger.Error("tool panicked", "tool", call.Name, "call_id", call.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	msg := fmt.Sprintf("The %s tool failed with an internal error (%v). This is a fault in the tool, not in your arguments.", call.Name, p)
	if call.Spec.SideEffects {
		msg += " Its side effects are unknown: check the state before trying again."
	} else {
		msg += " Try a different approach."
	}
	return &harness.ToolResult{IsError: true, Code: harness.CodeToolPanic, Content: []harness.Block{harness.TextBlock(msg)}}
}
