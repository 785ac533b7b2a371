package agent

import "github.com/go-harness/harness"

// The codes only this package reports, besides the shared ones of the
// harness package. Their text is public API like every code's: match
// one with errors.Is(err, harness.Code("...")) or compare ToolResult.Code.
const (
	// codeNothingPending (nothing_pending): an answer was given for calls
	// awaiting approval, but none (or not that one) awaits it.
	codeNothingPending harness.Code = "nothing_pending"
	// codeCallChanged (call_changed): an answer was given for a call
	// that is no longer the one asked about (its logged name or
	// arguments changed since the question, or the answer names another
	// version of it).
	codeCallChanged harness.Code = "call_changed"
	// codeInternal (internal): the harness recovered from a panic: a bug,
	// not a problem with the model, the request or the conversation.
	codeInternal harness.Code = "internal"
)
