package shell

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// Background bash jobs are jobs of the session's registry: it lists
// them, knows how they ended, and queues a notice naming bash_output.
func TestJobIsInTheRegistry(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	reg, err := jobs.FromState(env.State, jobs.Config{})
	require.NoError(t, err)
	id, _ := k.start("echo hi; exit 3")

	info, err := reg.Wait(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, jobs.Bash, info.Kind)
	assert.Equal(t, "echo hi; exit 3", info.Title)
	assert.Equal(t, jobs.Completed, info.Status)
	require.NotNil(t, info.ExitCode)
	assert.Equal(t, 3, *info.ExitCode)
	j, err := reg.Get(id)
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(j.Read(0, 0).Data))

	notes := reg.TakeEnded()
	require.Len(t, notes, 1)
	assert.Equal(t, `job job1 (bash) completed, exit 3; read it with bash_output {"job_id":"job1"}`, notes[0].Notice())

	// bash_output still reads the job, since its last look.
	res := k.out(id, 0)
	assert.Equal(t, "hi\n", res.Render.Terminal.Output)
	assert.Contains(t, res.Text(), "[job job1 exited with code 3 after ")
}

// A job whose end bash_output already showed gets no notice.
func TestJobShownGetsNoNotice(t *testing.T) {
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	id, _ := k.start("echo hi")
	res := k.out(id, 60000)
	assert.Contains(t, res.Text(), "[job job1 exited with code 0")
	reg, err := jobs.FromState(env.State, jobs.Config{})
	require.NoError(t, err)
	assert.Empty(t, reg.TakeEnded())
}

// Stopping a bash job through the registry (as job_stop does) stops
// every process of it, and bash_output reports the stop.
func TestRegistryStopsBashJob(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	reg, err := jobs.FromState(env.State, jobs.Config{})
	require.NoError(t, err)
	tag := shelltest.SleepTag(t)
	id, p := k.start("sleep " + tag + " & sleep " + tag + "; wait")
	shelltest.RequireTagged(t, tag)

	info, err := reg.Stop(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, jobs.Killed, info.Status)
	shelltest.RequireGone(t, p.Main())
	shelltest.RequireNoTagged(t, tag)
	res := k.out(id, 0)
	assert.Contains(t, res.Text(), "[job job1 stopped after ")
	assert.Equal(t, "killed", res.Render.Terminal.Status)

	assert.Empty(t, reg.TakeEnded(), "bash_output showed the stop")
}

// bash_kill goes through the registry too.
func TestBashKillEndsRegistryJob(t *testing.T) {
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	reg, err := jobs.FromState(env.State, jobs.Config{})
	require.NoError(t, err)
	id, _ := k.start("sleep 300")
	res := shelltest.Run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
	require.False(t, res.IsError, res.Text())
	j, err := reg.Get(id)
	require.NoError(t, err)
	assert.Equal(t, jobs.Killed, j.Info().Status)
	assert.Empty(t, reg.TakeEnded(), "bash_kill showed how it ended")
}

// The generic job tools work on bash jobs: job_output reads what it
// printed, job_stop stops every process of it.
func TestJobToolsOnBashJob(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	jt := jobs.Tools()
	tag := shelltest.SleepTag(t)
	id, p := k.start("echo ready; sleep " + tag + " & sleep " + tag + "; wait")
	shelltest.RequireTagged(t, tag)
	shelltest.Eventually(t, func() bool {
		res := shelltest.Run(t, context.Background(), shelltest.Named(t, jt, "job_output"), env, map[string]any{"job_id": id})
		return strings.HasPrefix(res.Text(), "ready\n[bytes 0 to 6 of 6; read on from offset 6]\n[job1  bash  running")
	}, "job_output to show the job's first line")

	res := shelltest.Run(t, context.Background(), shelltest.Named(t, jt, "job_stop"), env, map[string]any{"job_id": id})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[job1  bash  killed  ")
	shelltest.RequireGone(t, p.Main())
	shelltest.RequireNoTagged(t, tag)
}

// A bash job restored from the log after a restart is not one bash_output
// can read: it says so and points to job_output.
func TestBashOutputOnLostJob(t *testing.T) {
	env := shelltest.Env(t)
	k := newJobKit(t, env, Config{})
	reg, err := jobs.FromState(env.State, jobs.Config{})
	require.NoError(t, err)
	_, err = reg.Lose(jobs.Info{ID: "job4", Kind: jobs.Bash, Status: jobs.Running}, []byte("half"))
	require.NoError(t, err)
	res := k.out("job4", 0)
	assert.Equal(t, harness.CodeNotFound, res.Code)
	assert.Contains(t, res.Text(), `Background job job4 is lost: its processes are gone. Read what it printed with job_output (job_id "job4").`)
	id, _ := k.start("true")
	assert.Equal(t, "job5", id)
}
