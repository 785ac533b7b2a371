package shell

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
)

type jobKit struct {
	t                 *testing.T
	env               *tools.Env
	bash, output, kil tools.Tool
}

func newJobKit(t *testing.T, env *tools.Env, opts ...Option) *jobKit {
	ts := BashWithJobs(opts...)
	_, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return &jobKit{t: t, env: env, bash: named(t, ts, "bash"), output: named(t, ts, "bash_output"), kil: named(t, ts, "bash_kill")}
}

var pgRE = regexp.MustCompile(`Started background job (job\d+) \(process group (\d+)\)`)

func (k *jobKit) start(command string) (string, int) {
	k.t.Helper()
	res := run(k.t, context.Background(), k.bash, k.env, map[string]any{"command": command, "run_in_background": true})
	require.False(k.t, res.IsError, res.Text())
	m := pgRE.FindStringSubmatch(res.Text())
	require.NotNil(k.t, m, res.Text())
	assert.Equal(k.t, "running", res.Render.Terminal.Status)
	pids := pidsIn("pid " + m[2]) // remembers its start
	return m[1], pids[0]
}

func (k *jobKit) out(id string, waitMS int) *harness.ToolResult {
	k.t.Helper()
	return run(k.t, context.Background(), k.output, k.env, map[string]any{"job_id": id, "wait_ms": waitMS})
}

func TestJobRunsInBackground(t *testing.T) {
	leakcheck.Check(t)
	env := testEnv(t)
	k := newJobKit(t, env)
	gate := filepath.Join(env.Cwd, "gate")
	id, pgid := k.start(`echo started; echo err >&2; while [ ! -e gate ]; do sleep 0.02; done; echo finishing; exit 4`)
	assert.Equal(t, "job1", id)

	var seen string
	eventually(t, func() bool {
		res := k.out(id, 0)
		require.False(t, res.IsError, res.Text())
		assert.Contains(t, res.Text(), "[job job1 is still running")
		assert.Equal(t, "[cwd "+env.Cwd+"]", lastLine(res.Text()))
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
	assert.False(t, groupAlive(pgid))

	res = k.out(id, 0)
	assert.True(t, strings.HasPrefix(res.Text(), "(no new output)\n[job job1 exited with code 4"), res.Text())
}

func TestJobKill(t *testing.T) {
	leakcheck.Check(t)
	env := testEnv(t)
	k := newJobKit(t, env)
	id, pgid := k.start(`sleep 300 & echo "pid $!"; echo up; wait`)
	var seen string
	eventually(t, func() bool { seen += k.out(id, 0).Render.Terminal.Output; return strings.Contains(seen, "up") }, "the job to start")
	pids := pidsIn(seen)
	require.Len(t, pids, 1)
	res := run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[job job1 stopped with SIGTERM after ")
	assert.Equal(t, "killed", res.Render.Terminal.Status)
	requireGone(t, pgid, pids[0])

	res = run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
	assert.Contains(t, res.Text(), "The job had already finished.")
	res = run(t, context.Background(), k.kil, env, map[string]any{"job_id": "job7"})
	assert.Equal(t, CodeUnknownJob, res.Code)
	assert.Contains(t, res.Text(), "Known jobs: job1.")
}

func TestJobLimitAndEviction(t *testing.T) {
	env := testEnv(t)
	k := newJobKit(t, env, WithMaxJobs(2))
	a, _ := k.start("sleep 300")
	b, pgB := k.start("echo done-b")
	res := run(t, context.Background(), k.bash, env, map[string]any{"command": "true", "run_in_background": true})
	if !res.IsError {
		// b may have finished already, in which case it was evicted.
		assert.Contains(t, res.Text(), "job3")
		// Let job3 ("true") finish, so it no longer counts as running.
		k.out("job3", 60000)
	}
	eventually(t, func() bool { return !groupAlive(pgB) }, "job b to end")
	k.out(b, 60000) // everything of b shown: b goes first
	c, _ := k.start("sleep 300")
	assert.NotEqual(t, a, c)
	res = run(t, context.Background(), k.bash, env, map[string]any{"command": "sleep 300", "run_in_background": true})
	require.True(t, res.IsError)
	assert.Equal(t, CodeTooManyJobs, res.Code)
	assert.Contains(t, res.Text(), "bash_kill")
}

func TestJobsStoppedWhenStateCloses(t *testing.T) {
	leakcheck.Check(t)
	env := testEnv(t)
	k := newJobKit(t, env, WithKillGrace(300*time.Millisecond))
	var pgids []int
	for _, c := range []string{"sleep 300", "trap '' TERM; sleep 300", "yes > /dev/null"} {
		_, pg := k.start(c)
		pgids = append(pgids, pg)
	}
	require.NoError(t, env.State.Close())
	requireGone(t, pgids...)
	res := run(t, context.Background(), k.bash, env, map[string]any{"command": "true", "run_in_background": true})
	assert.True(t, res.IsError)
}

func TestJobLongOutputSpilled(t *testing.T) {
	env := testEnv(t)
	store := env.Output.(*dirStore)
	k := newJobKit(t, env)
	id, _ := k.start("seq 1 100000")
	res := k.out(id, 60000)
	assert.Contains(t, res.Text(), "[The whole output (588895 bytes (575.1 KiB), 100000 lines) is saved as spill://out1")
	assert.Contains(t, res.Text(), "[job job1 exited with code 0")
	assert.Len(t, store.read(t, "spill://out1"), 588895)
}

func TestJobForegroundStillWorks(t *testing.T) {
	env := testEnv(t)
	k := newJobKit(t, env)
	res := run(t, context.Background(), k.bash, env, map[string]any{"command": "sleep 300", "timeout_ms": 100})
	assert.Equal(t, harness.CodeTimeout, res.Code)
	assert.Contains(t, res.Text(), "or use run_in_background")
}
