package shell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestCgroupOneShotIsOneProcess: in a cgroup of its own, a one-shot
// command is the tools' own child (under a PID namespace its parent is
// the namespace's holder), and nothing is left of its cgroup afterwards.
func TestCgroupOneShotIsOneProcess(t *testing.T) {
	if c := (Config{}).resolve().Containment(); !c.Cgroup() {
		t.Skipf("no cgroup containment here (%s)", c)
	}
	env := shelltest.Env(t)
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{
		"command": `echo "parent $PPID"; sed -n 's/^0::/cgroup /p' /proc/self/cgroup`})
	text := res.Text()
	assert.Contains(t, text, fmt.Sprintf("parent %d\n", os.Getpid()), "bash is the host's own child")
	m := regexp.MustCompile(`cgroup (/\S*harness-\d+-\d+)\n`).FindStringSubmatch(text)
	require.NotNil(t, m, "the command ran in a cgroup of its own: %s", text)
	assert.NotContains(t, text, "containment", "a plain exit needs no word on the containment")
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	for line := range strings.Lines(string(mounts)) {
		if strings.Contains(line, " - cgroup2 ") {
			mp := strings.Fields(line)[4]
			_, err := os.Stat(filepath.Join(mp, m[1]))
			assert.ErrorIs(t, err, os.ErrNotExist, "the command's cgroup is removed when it is over")
			break
		}
	}
}
