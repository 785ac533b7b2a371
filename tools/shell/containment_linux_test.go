package shell

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// TestContainmentInResults: the tools probe the containment once, the
// option forces the process tree, and results name the containment when
// it may have missed processes.
func TestContainmentInResults(t *testing.T) {
	c := Config{}.resolve().Containment()
	t.Logf("containment here: %s", c)
	forced := withoutNamespace("forced").Containment()
	assert.Equal(t, "process tree (no pid namespace: forced)", forced.String())
	env := shelltest.Env(t)
	res := shelltest.Run(t, context.Background(), bashOnly(withoutNamespace("forced")), env, map[string]any{"command": "true"})
	assert.Contains(t, res.Text(), "[exit code 0 · ")
	assert.Contains(t, res.Text(), "\n[containment: process tree (no pid namespace: forced)]\n", "without a namespace every result names the containment")
	res = shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "true"})
	if c.Namespace() {
		assert.NotContains(t, res.Text(), "containment", "a plain exit in a namespace needs no word on it")
	}
}
