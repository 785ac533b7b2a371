package jobs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/toolstest"
)

func named(ts []tools.Tool, name string) tools.Tool {
	for _, t := range ts {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func call(t *testing.T, env *toolstest.Env, name string, args any) *harness.ToolResult {
	t.Helper()
	res, err := env.Call(context.Background(), named(jobs.Tools(), name), args)
	require.NoError(t, err)
	return res
}

func TestJobTools(t *testing.T) {
	leakcheck.Check(t)
	env := toolstest.NewEnv()
	defer env.Close()
	_, err := tools.NewRegistry(jobs.Tools()...)
	require.NoError(t, err, "the tools' specs and schemas are valid")

	r, err := jobs.FromState(env.Env.State, jobs.Config{Window: 16})
	require.NoError(t, err)
	res := call(t, env, "job_list", map[string]any{})
	assert.Equal(t, "There are no background jobs.", res.Text())

	build := startWorker(t, r, jobs.Bash)
	helper := startWorker(t, r, jobs.Agent)
	_, _ = build.job.Write([]byte("line one\nline two\nline three\n"))

	res = call(t, env, "job_list", map[string]any{})
	lines := strings.Split(res.Text(), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^job1  bash  running  \S+  29 bytes of output  work$`, lines[0])
	assert.Regexp(t, `^job2  agent  running  `, lines[1])

	// The last bytes by default; the window holds the last 16.
	res = call(t, env, "job_output", map[string]any{"job_id": "job1"})
	assert.Equal(t, "[13 bytes before offset 13 are no longer kept here]\n"+
		" two\nline three\n", strings.SplitAfter(res.Text(), "three\n")[0])
	assert.Contains(t, res.Text(), "[bytes 13 to 29 of 29; read on from offset 29]\n[job1  bash  running")
	res = call(t, env, "job_output", map[string]any{"job_id": "job1", "offset": 20, "limit": 5})
	assert.True(t, strings.HasPrefix(res.Text(), "ne th\n[bytes 20 to 25 of 29; read on from offset 25]\n"), res.Text())
	res = call(t, env, "job_output", map[string]any{"job_id": "job1", "offset": 29})
	assert.True(t, strings.HasPrefix(res.Text(), "(nothing at offset 29; the output has 29 bytes)\n"), res.Text())
	res = call(t, env, "job_output", map[string]any{"job_id": "job1", "limit": 0})
	assert.True(t, res.IsError)
	assert.Equal(t, harness.CodeInvalidArguments, res.Code)

	// A sub-agent's final answer, once it has one; waiting for the end.
	go helper.finish(jobs.Result{Answer: "The bug is in parse.go."})
	res = call(t, env, "job_output", map[string]any{"job_id": "job2", "wait_ms": 60000})
	assert.Contains(t, res.Text(), "(no output)\n[job2  agent  completed  ")
	assert.True(t, strings.HasSuffix(res.Text(), "\nFinal answer:\nThe bug is in parse.go."), res.Text())

	res = call(t, env, "job_stop", map[string]any{"job_id": "job1"})
	require.False(t, res.IsError, res.Text())
	assert.Regexp(t, `^\[job1  bash  killed  `, res.Text())
	assert.Equal(t, int32(1), build.stops.Load())
	res = call(t, env, "job_stop", map[string]any{"job_id": "job1"})
	assert.True(t, strings.HasPrefix(res.Text(), "The job had already ended.\n"), res.Text())

	assert.Empty(t, r.TakeEnded(), "the tools showed how both ended: no notices")

	res = call(t, env, "job_stop", map[string]any{"job_id": "job9"})
	assert.Equal(t, harness.CodeNotFound, res.Code)
	assert.Contains(t, res.Text(), "Known jobs: job1, job2.")
}
