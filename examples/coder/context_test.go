package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/internal/leakcheck"
)

func TestContextFlag(t *testing.T) {
	for name, want := range map[string]agent.ContextStrategy{"cost": agent.ContextCost, "thresholds": agent.ContextThresholds, "off": agent.ContextOff} {
		p, err := contextPolicy(name)
		require.NoError(t, err)
		assert.Equal(t, want, p.Strategy)
	}
	r := runCLI(t, newProvider(t).env(), "", "-context", "cheap", "x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `-context is "cheap"; use cost, thresholds or off`)

	r = runCLI(t, newProvider(t).env(), "", "-h")
	assert.Contains(t, r.stderr, "-context cost")
	assert.Contains(t, r.stderr, "saves money at the model's prices")
}

// -context off keeps every read whole where the default (which decides
// by thresholds for a model without prices) prunes the superseded one.
func TestContextOff(t *testing.T) {
	leakcheck.Check(t)
	readA := func(id string) reply {
		return sized(toolCall(0, id, "read", map[string]any{"file_path": "a.txt"}), finish("tool_calls"))
	}
	p := newProvider(t, readA("r1"), readA("r2"), sized(text("done"), finish("stop")))
	ws := workspace(t, map[string]string{"a.txt": strings.Repeat("the quick brown fox jumps over the dog\n", 200)})
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-context-window", "12000", "-context", "off", "look twice")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "⌁ context")
	assert.Equal(t, 2, strings.Count(p.Requests()[2].Text(t), "200: the quick brown fox"), "both reads are sent whole")
}
