package agent

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/go-harness/harness"
)

// InternalError reports a panic the loop recovered from: a bug in the
// harness or in code it runs (a model adapter, a session store, a step
// observer). A turn it ends ends with reason error; the session stays
// usable. Its code (harness.CodeOf) is harness.CodeInternal.
type InternalError struct {
	// Op is what was running: "turn", "new_session", "resume_session",
	// "close" or "tool_dispatch".
	Op string
	// Value is what was passed to panic.
	Value any
	// Stack is the stack of the panic; it is logged too.
	Stack []byte
}

// Error says what panicked and that it is a bug.
func (e *InternalError) Error() string {
	return fmt.Sprintf("agent: internal error during %s: panic: %v (this is a bug in the harness or in code it called, not in the conversation; the stack is in the log)", e.Op, e.Value)
}

// ErrorCode returns "internal" (harness.CodeInternal), for harness.CodeOf.
func (e *InternalError) ErrorCode() string { return string(harness.CodeInternal) }

// Is makes the error match harness.CodeInternal.
func (e *InternalError) Is(target error) bool { return target == harness.CodeInternal }

// Unwrap returns the panic value when it is an error.
func (e *InternalError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// internalError builds the error for a recovered panic and logs it with
// its stack.
func internalError(logger *slog.Logger, op string, p any) *InternalError {
	e := &InternalError{Op: op, Value: p, Stack: debug.Stack()}
	logger.Error("recovered from a panic; this is a bug", "op", op, "panic", fmt.Sprint(p), "stack", string(e.Stack))
	return e
}
