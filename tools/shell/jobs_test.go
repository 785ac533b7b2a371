package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

type jobKit struct {
	t                 *testing.T
	env               *tools.Env
	b                 *bashTool
	bash, output, kil tools.Tool
}

// newJobKit builds the tools as bashWithJobs does, keeping the tool
// value so that tests can look at the job table.
func newJobKit(t *testing.T, env *tools.Env, cfg Config) *jobKit {
	return jobKitWith(t, env, cfg.resolve())
}

func jobKitWith(t *testing.T, env *tools.Env, c *shellkit.Config) *jobKit {
	b := &bashTool{cfg: c, jobs: &jobsKey{}}
	ts := b.tools()
	_, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return &jobKit{t: t, env: env, b: b, bash: shelltest.Named(t, ts, "bash"), output: shelltest.Named(t, ts, "bash_output"), kil: shelltest.Named(t, ts, "bash_kill")}
}

// start starts a background job and returns its id and its process.
func (k *jobKit) start(command string) (string, *proctree.Proc) {
	k.t.Helper()
	res := shelltest.Run(k.t, context.Background(), k.bash, k.env, map[string]any{"command": command, "run_in_background": true})
	require.False(k.t, res.IsError, res.Text())
	m := shelltest.JobIDRE.FindStringSubmatch(res.Text())
	require.NotNil(k.t, m, res.Text())
	assert.Equal(k.t, "running", res.Render.Terminal.Status)
	assert.Contains(k.t, res.Text(), "[containment: ")
	tab, err := k.b.table(&tools.Call{Env: k.env})
	require.NoError(k.t, err)
	j, err := tab.get(m[1])
	require.NoError(k.t, err)
	shelltest.Remember(j.p.Main())
	return m[1], j.p
}

func (k *jobKit) out(id string, waitMS int) *harness.ToolResult {
	k.t.Helper()
	return shelltest.Run(k.t, context.Background(), k.output, k.env, map[string]any{"job_id": id, "wait_ms": waitMS})
}

func TestJobRunsInBackground(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	gate := filepath.Join(env.Cwd, "gate")
	id, p := k.start(`echo started; echo err >&2; while [ ! -e gate ]; do sleep 0.02; done; echo finishing; exit 4`)
	assert.Equal(t, "job1", id)

	var seen string
	shelltest.Eventually(t, func() bool {
		res := k.out(id, 0)
		require.False(t, res.IsError, res.Text())
		assert.Contains(t, res.Text(), "[job job1 is still running")
		assert.Equal(t, "[cwd "+env.Cwd+"]", shelltest.LastLine(res.Text()))
		seen += res.Render.Terminal.Output
		return strings.Contains(seen, "err")
	}, "the job's first output")
	assert.Equal(t, "started\nerr\n", seen, "stdout and stderr together, each shown once")

	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	res := k.out(id, 60000)
	assert.Equal(t, "finishing\n", res.Render.Terminal.Output)
	assert.Contains(t, res.Text(), "[job job1 exited with code 4 after ")
	require.NotNil(t, res.Render.Terminal.ExitCode)
	assert.Equal(t, 4, *res.Render.Terminal.ExitCode)
	assert.Empty(t, p.Members(true), "nothing of the job runs")

	res = k.out(id, 0)
	assert.True(t, strings.HasPrefix(res.Text(), "(no new output)\n[job job1 exited with code 4"), res.Text())
}

func TestJobKill(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	tag := shelltest.SleepTag(t)
	id, p := k.start("sleep " + tag + " & echo up; wait")
	var seen string
	shelltest.Eventually(t, func() bool { seen += k.out(id, 0).Render.Terminal.Output; return strings.Contains(seen, "up") }, "the job to start")
	res := shelltest.Run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[job job1 stopped after ")
	assert.Contains(t, res.Text(), ": its processes were sent SIGTERM and ended]\n[containment: ")
	assert.Equal(t, "killed", res.Render.Terminal.Status)
	shelltest.RequireGone(t, p.Main())
	shelltest.RequireNoTagged(t, tag)

	res = shelltest.Run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
	assert.Contains(t, res.Text(), "The job had already finished.")
	res = shelltest.Run(t, context.Background(), k.kil, env, map[string]any{"job_id": "job7"})
	assert.Equal(t, harness.CodeNotFound, res.Code)
	assert.Contains(t, res.Text(), "Known jobs: job1.")
}

func TestJobLimitAndEviction(t *testing.T) {
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{Limits: Limits{Jobs: 2}})
	a, _ := k.start("sleep 300")
	b, pB := k.start("echo done-b")
	res := shelltest.Run(t, context.Background(), k.bash, env, map[string]any{"command": "true", "run_in_background": true})
	if !res.IsError {
		// b may have finished already, in which case it was evicted.
		assert.Contains(t, res.Text(), "job3")
		// Let job3 ("true") finish, so it no longer counts as running.
		k.out("job3", 60000)
	}
	shelltest.Eventually(t, func() bool { return pB.Exited() }, "job b to end")
	k.out(b, 60000) // everything of b shown: b goes first
	c, _ := k.start("sleep 300")
	assert.NotEqual(t, a, c)
	res = shelltest.Run(t, context.Background(), k.bash, env, map[string]any{"command": "sleep 300", "run_in_background": true})
	require.True(t, res.IsError)
	assert.Equal(t, CodeTooManyJobs, res.Code)
	assert.Contains(t, res.Text(), "bash_kill")
}

func TestJobsStoppedWhenStateCloses(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{Timeouts: Timeouts{KillGrace: 300 * time.Millisecond}})
	tag := shelltest.SleepTag(t)
	var pids []int
	for _, c := range []string{"sleep " + tag, "trap '' TERM; sleep " + tag, "yes > /dev/null"} {
		_, p := k.start(c)
		pids = append(pids, p.Main())
	}
	shelltest.RequireTagged(t, tag)
	require.NoError(t, env.State.Close())
	shelltest.RequireGone(t, pids...)
	shelltest.RequireNoTagged(t, tag)
	res := shelltest.Run(t, context.Background(), k.bash, env, map[string]any{"command": "true", "run_in_background": true})
	assert.True(t, res.IsError)
}

func TestJobLongOutputSpilled(t *testing.T) {
	env := shelltest.Env(t)
	store := env.Output.(*shelltest.DirStore)
	k := newJobKit(t, env, Config{})
	id, _ := k.start("seq 1 100000")
	res := k.out(id, 60000)
	assert.Contains(t, res.Text(), "[The whole output (575.1 KiB, 100000 lines) is saved as spill://out1")
	assert.Contains(t, res.Text(), "[job job1 exited with code 0")
	assert.Len(t, store.Read(t, "spill://out1"), 588895)
}

func TestJobForegroundStillWorks(t *testing.T) {
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	res := shelltest.Run(t, context.Background(), k.bash, env, map[string]any{"command": "sleep 300", "timeout_ms": 100})
	assert.Equal(t, harness.CodeTimeout, res.Code)
	assert.Contains(t, res.Text(), "or use run_in_background")
}

// What bash jobs save of their output counts against the session's job
// registry's cap on all jobs' output (jobs.Config.MaxOutput): past it the
// saved copy is cut, and the next job saves nothing more.
func TestJobSpillCountsAgainstTheRegistryCap(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	reg, err := jobs.FromState(env.State, jobs.Config{MaxOutput: 50000})
	require.NoError(t, err)
	k := newJobKit(t, env, Config{})
	for i, want := range []string{"only its first 48.8 KiB were saved", "only its first 0 bytes were saved"} {
		id, _ := k.start(`seq 1 40000`)
		_, err := reg.Wait(context.Background(), id)
		require.NoError(t, err)
		res := k.out(id, 0)
		require.False(t, res.IsError, res.Text())
		assert.True(t, strings.Contains(res.Text(), want), "job %d: %s", i+1, shelltest.LastLine(res.Text()))
	}
}
