package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
)

// The footer shows what the turn cost when the loop priced it, and
// nothing about money when it did not.
func TestFooterCost(t *testing.T) {
	for _, tc := range []struct {
		cost float64
		want string
	}{{0.001234, "· $0.0012"}, {0, ""}} {
		var out lockedBuffer
		h := newHuman(&out, HumanOptions{Root: "/ws"})
		h.BeginTurn("go", true)
		h.Event(&agent.TurnEnd{Reason: session.ReasonCompleted, Steps: 1, Usage: harness.Usage{InputTokens: 10, OutputTokens: 2}, Cost: tc.cost})
		h.Close()
		if tc.want == "" {
			assert.NotContains(t, out.String(), "$")
		} else {
			assert.Contains(t, out.String(), tc.want)
		}
	}
}
