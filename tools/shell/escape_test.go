package shell

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// stopPaths are the ways a one-shot command or a background job is
// stopped; the persistent shells' are in their package.
var stopPaths = []shelltest.StopPath{
	{Name: "bash timeout", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		res := shelltest.Run(t, context.Background(), bashOnly(config()), env, map[string]any{
			"command": setup("a") + "; echo ready; sleep 1000", "timeout_ms": (1500 * time.Millisecond * scale).Milliseconds()})
		require.Equal(t, harness.CodeTimeout, res.Code, res.Text())
		return res.Text(), !strings.Contains(res.Text(), "ready\n")
	}},
	{Name: "bash cancel", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan *harness.ToolResult, 1)
		go func() {
			done <- shelltest.Run(t, ctx, bashOnly(config()), env, map[string]any{"command": setup("a") + "; touch ready; sleep 1000"})
		}()
		shelltest.WaitFile(t, filepath.Join(env.Cwd, "ready"))
		cancel()
		res := <-done
		require.Equal(t, harness.CodeAborted, res.Code, res.Text())
		return res.Text(), false
	}},
	{Name: "bash exit", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		res := shelltest.Run(t, context.Background(), bashOnly(config()), env, map[string]any{"command": setup("a")})
		require.False(t, res.IsError, res.Text())
		return res.Text(), false
	}},
	{Name: "bash_kill", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		k := jobKitWith(t, env, config())
		id := startJob(t, k, setup("a")+"; touch ready; sleep 1000")
		shelltest.WaitFile(t, filepath.Join(env.Cwd, "ready"))
		res := shelltest.Run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
		require.False(t, res.IsError, res.Text())
		return res.Text(), false
	}},
	{Name: "job exit", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		k := jobKitWith(t, env, config())
		id := startJob(t, k, setup("a"))
		res := k.out(id, 60000)
		require.NotContains(t, res.Text(), "is still running", res.Text())
		return res.Text(), false
	}},
	{Name: "state close", Run: func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (string, bool) {
		// A job runs the escapes; closing the state stops it.
		jk := jobKitWith(t, env, config())
		startJob(t, jk, setup("a")+"; touch ready; sleep 1000")
		shelltest.WaitFile(t, filepath.Join(env.Cwd, "ready"))
		if err := env.State.Close(); err != nil {
			return err.Error(), false
		}
		return "", false
	}},
}

func startJob(t *testing.T, k *jobKit, command string) string {
	t.Helper()
	res := shelltest.Run(t, context.Background(), k.bash, k.env, map[string]any{"command": command, "run_in_background": true})
	require.False(t, res.IsError, res.Text())
	m := shelltest.JobIDRE.FindStringSubmatch(res.Text())
	require.NotNil(t, m, res.Text())
	return m[1]
}

// TestEscapesDoNotOutliveStops runs every escape against every way a
// command or a job is stopped, under each containment, and checks that
// no process of any escape is left afterwards and that the text
// reporting the stop says so.
func TestEscapesDoNotOutliveStops(t *testing.T) {
	shelltest.RunEscapes(t, shelltest.Containments(t), stopPaths)
}
