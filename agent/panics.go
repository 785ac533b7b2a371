package agent

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/go-harness/harness"
)

// internalError builds the error for a recovered panic and logs it with
// its stack: a *harness.Error with codeInternal whose message
// names what was running (op: "turn", "new_session", "resume_session",
// "close", "tool_dispatch", ...) and the panic value, and whose cause is
// the panic value when that is an error. A turn it ends ends with reason
// error; the session stays usable.
func internalError(logger *slog.Logger, op string, p any) *harness.Error {
	stack := debug.Stack()
	logger.Error("recovered from a panic; this is a bug", "op", op, "panic", fmt.Sprint(p), "stack", string(stack))
	e := &harness.Error{Code: codeInternal, Message: fmt.Sprintf("agent: internal error during %s: panic: %v (this is a bug in the harness or in code it called, not in the conversation; the stack is in the log)", op, p)}
	if err, ok := p.(error); ok {
		e.Err = err
	}
	return e
}
