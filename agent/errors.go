package agent

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/go-harness/harness"
)

// The codes only this package reports, besides the shared ones of the
// harness package. Match one with errors.Is(err, agent.CodeNothingPending)
// or compare harness.CodeOf(err).
const (
	// CodeNothingPending (nothing_pending): an answer was given for calls
	// awaiting approval, but none (or not that one) awaits it.
	CodeNothingPending harness.Code = "nothing_pending"
	// CodeCallChanged (call_changed): an answer was given for a call
	// that is no longer the one asked about (its logged name or
	// arguments changed since the question, or the answer names another
	// version of it).
	CodeCallChanged harness.Code = "call_changed"
	// CodeInternal (internal): the harness recovered from a panic: a bug,
	// not a problem with the model, the request or the conversation.
	CodeInternal harness.Code = "internal"
	// CodeBudgetExceeded (budget_exceeded): a turn reached a budget set
	// as a hard ceiling (Limits.HardBudget), or a sub-agent reached what
	// was left of its parent's, and stopped.
	CodeBudgetExceeded harness.Code = "budget_exceeded"
	// CodeNotLoaded (not_loaded): the model called a deferred tool
	// (WithDeferredTools) it has not loaded with load_tools; the call
	// did not run.
	CodeNotLoaded harness.Code = "not_loaded"
)

// errBusy is the error of a turn started while one runs: it matches
// harness.CodeBusy.
func errBusy() error {
	return &harness.Error{Code: harness.CodeBusy, Message: "agent: a turn is already running in this session; wait for its TurnEnd"}
}

// errClosed is the error of using a closed session or loop: it matches
// harness.CodeClosed.
func errClosed() error { return &harness.Error{Code: harness.CodeClosed, Message: "agent: closed"} }

// errAbandoned is returned by Close when tool calls the loop abandoned
// are still running: they ignored their cancelled context, so whatever
// they hold (processes, files, connections) may outlive the session. It
// matches harness.CodeNotStopped and names the calls.
func errAbandoned(calls []abandonedCall) error {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = fmt.Sprintf("%s (call %s)", c.Tool, c.CallID)
	}
	n := "call"
	if len(calls) != 1 {
		n = "calls"
	}
	return &harness.Error{Code: harness.CodeNotStopped, Message: fmt.Sprintf("agent: closed with %d abandoned tool %s still running, which did not stop when cancelled: %s",
		len(calls), n, strings.Join(names, ", "))}
}

// errTurnDidNotStop is returned by Close when the running turn did not
// end within the close wait (Limits.CloseWait) after it was
// cancelled: a model stream or a session store that ignores
// cancellation. It matches harness.CodeNotStopped. The session's log is
// closed when the turn ends.
func errTurnDidNotStop() error {
	return &harness.Error{Code: harness.CodeNotStopped, Message: "agent: the running turn did not stop within the close wait; the session log is closed when it ends"}
}

// internalError builds the error for a recovered panic and logs it with
// its stack: a *harness.Error with CodeInternal whose message
// names what was running (op: "turn", "new_session", "resume_session",
// "close", "tool_dispatch", ...) and the panic value, and whose cause is
// the panic value when that is an error. A turn it ends ends with reason
// error; the session stays usable.
func internalError(logger *slog.Logger, op string, p any) *harness.Error {
	stack := debug.Stack()
	logger.Error("recovered from a panic; this is a bug", "op", op, "panic", fmt.Sprint(p), "stack", string(stack))
	e := &harness.Error{Code: CodeInternal, Message: fmt.Sprintf("agent: internal error during %s: panic: %v (this is a bug in the harness or in code it called, not in the conversation; the stack is in the log)", op, p)}
	if err, ok := p.(error); ok {
		e.Err = err
	}
	return e
}

func optionError(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "agent: " + fmt.Sprintf(format, args...)}
}
