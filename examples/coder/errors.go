package main

import (
	"errors"
	"fmt"

	"github.com/go-harness/harness"
)

// reportError says what failed, with the error's code and what to do.
func (a *app) reportError(err error) {
	if err == nil {
		err = errors.New("the turn failed")
	}
	code := harness.CodeOf(err)
	msg := fmt.Sprintf("error [%s]: %v", code, err)
	if hint := errorHint(code); hint != "" {
		msg += "\n" + hint
	}
	fmt.Fprintln(a.stderr, msg)
}

// errorHint says what a person can do about a model failure.
func errorHint(code harness.Code) string {
	switch code {
	case harness.CodeAuth:
		return "The provider refused the API key: check DEEPSEEK_API_KEY (DeepSeek) or HARNESS_API_KEY and HARNESS_BASE_URL."
	case harness.CodeInsufficientBalance:
		return "The account has no credit left: top it up with the provider."
	case harness.CodeRateLimit, harness.CodeServer:
		return "The provider is busy; try again in a while (the session can be resumed)."
	case harness.CodeTransport:
		return "The connection to the provider failed; check the network or the base URL."
	case harness.CodeContextWindowExceeded:
		return "The conversation no longer fits the model's context window; start a new session."
	case harness.CodeInvalidRequest:
		return "The provider rejected the request; the model id or the endpoint may be wrong."
	}
	return ""
}

// fatal reports whether a failure will recur on the next turn.
func fatal(code harness.Code) bool {
	return code == harness.CodeAuth || code == harness.CodeInsufficientBalance
}
