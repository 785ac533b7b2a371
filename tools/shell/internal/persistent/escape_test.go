package persistent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// kitWith builds the tools with the kill grace and containment of
// config's configuration, changed by configure.
func kitWith(t *testing.T, env *tools.Env, config func() *shellkit.Config, configure ...func(*shellkit.Config)) *kit {
	d := config()
	return newKit(t, env, append([]func(*shellkit.Config){func(c *shellkit.Config) {
		c.Grace, c.NoNamespace, c.NoCgroup = d.Grace, d.NoNamespace, d.NoCgroup
	}}, configure...)...)
}

// stopPaths are the ways a persistent shell's processes are stopped.
var stopPaths = []shelltest.StopPath{
	{Name: "shell_close", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		k := kitWith(t, env, config)
		id, _ := k.OpenShell(nil)
		res := k.Do(id, setup("a"), 60000)
		require.Contains(t, res.Text(), "[exit code 0", res.Text())
		res = shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
		require.False(t, res.IsError, res.Text())
		return res.Text(), false
	}},
	{Name: "shell exit", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		k := kitWith(t, env, config)
		id, _ := k.OpenShell(nil)
		res := k.Do(id, setup("a")+"; exit 3", 60000)
		require.Contains(t, res.Text(), "exited with code 3", res.Text())
		return res.Text(), false
	}},
	{Name: "idle reaper", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		k := kitWith(t, env, config, func(c *shellkit.Config) { c.Idle = 1500 * time.Millisecond * scale })
		id, _ := k.OpenShell(nil)
		res := k.Do(id, setup("a"), 60000)
		if !strings.Contains(res.Text(), "[exit code 0") {
			// Reaped before the escape was up: try again with more time.
			return res.Text(), true
		}
		// Poll the table, not the shell: a call would count as a use.
		m := k.table()
		var text string
		shelltest.Eventually(t, func() bool {
			_, err := m.get(id)
			if err != nil {
				text = err.Error()
			}
			return err != nil
		}, "the idle shell to be closed")
		return text, false
	}},
	{Name: "state close", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		// A shell runs the escapes; closing the state stops it.
		k := kitWith(t, env, config)
		id, _ := k.OpenShell(nil)
		res := k.Do(id, setup("a"), 60000)
		require.Contains(t, res.Text(), "[exit code 0", res.Text())
		if err := env.State.Close(); err != nil {
			return err.Error(), false
		}
		return "", false
	}},
}

// TestEscapesDoNotOutliveStops runs every escape against every way a
// persistent shell is stopped, under each containment, and checks that
// no process of any escape is left afterwards and that the text
// reporting the stop says so.
func TestEscapesDoNotOutliveStops(t *testing.T) {
	shelltest.RunEscapes(t, shelltest.Containments(t), stopPaths)
}
