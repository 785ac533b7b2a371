// Package toolexec holds what runs a tool call beneath the public tools
// contract: the innermost handler of a dispatch chain, the rule that turns
// what a tool returned into a result the model can be shown, the result of
// a panic, the logger of a call, and the wrapper that makes a tool built
// with an invalid option report it through Validate. The agent loop, the
// guard middleware, the built-in tools and the test doubles use it; a
// host never needs it. It imports harness, tools and internal helpers.
package toolexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/tools"
)

// Executor returns the innermost handler: it runs the call's tool (as
// resolved by Registry.Check), turns a returned error into an error result
// with the error's code, and turns a panic into a CodeToolPanic result.
func Executor() tools.Handler { return tools.Handler(execute) }

func execute(ctx context.Context, call *tools.Call) (res *harness.ToolResult) {
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
func Normalize(call *tools.Call, res *harness.ToolResult, err error) *harness.ToolResult {
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
func PanicResult(call *tools.Call, p any) *harness.ToolResult {
	Logger(call.Env).Error("tool panicked", "tool", call.Name, "call_id", call.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	msg := fmt.Sprintf("The %s tool failed with an internal error (%v). This is a fault in the tool, not in your arguments.", call.Name, p)
	if call.Spec.SideEffects {
		msg += " Its side effects are unknown: check the state before trying again."
	} else {
		msg += " Try a different approach."
	}
	return &harness.ToolResult{IsError: true, Code: harness.CodeToolPanic, Content: []harness.Block{harness.TextBlock(msg)}}
}

// Logger returns the logger of a call's Env, or one that discards
// everything when there is none.
func Logger(env *tools.Env) *slog.Logger {
	if env == nil {
		return logs.OrDiscard(nil)
	}
	return logs.OrDiscard(env.Logger)
}

// OptionError returns the error of an invalid option value:
// harness.CodeInvalidOption, with a message that names the option and
// says what it takes.
func OptionError(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf(format, args...)}
}

// Checked returns t, or, when err is not nil, t wrapped so that its
// Validate method reports err (tools.NewRegistry calls it, so the
// misconfigured tool never reaches a model) and a call that runs anyway
// fails with err. A tool constructor given an invalid option returns
// Checked(tool, err): constructors keep returning tools.Tool.
func Checked(t tools.Tool, err error) tools.Tool {
	if err == nil {
		return t
	}
	return &checked{Tool: t, err: err}
}

type checked struct {
	tools.Tool
	err error
}

// Validate reports the option error, and the tool's own problem if it has
// one.
func (c *checked) Validate() error {
	if v, ok := c.Tool.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return errors.Join(c.err, err)
		}
	}
	return c.err
}

func (c *checked) Execute(context.Context, *tools.Call) (*harness.ToolResult, error) {
	return nil, c.err
}

// Chain wraps h in mws so that mws[0] is the outermost: it sees the call
// first and the result last (the order of agent.Hooks.Tools).
func Chain(h tools.Handler, mws ...tools.Middleware) tools.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
