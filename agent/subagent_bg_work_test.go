package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell"
)

// workEnv is a workspace on disk and a session store, for sessions that
// run real background commands beside background sub-agents.
type workEnv struct {
	dir   string
	store session.Store
	g     *gates
}

func newWorkEnv(t *testing.T) *workEnv {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return &workEnv{dir: dir, store: session.NewJSONL(t.TempDir(), session.StoreConfig{}), g: &gates{ch: map[string]chan struct{}{}}}
}

// waitJobs waits for the jobs it names to end and says how each ended.
func waitJobs() tools.Tool {
	type in struct {
		IDs []string `json:"ids" jsonschema:"the jobs"`
	}
	return tools.Define(tools.Spec{Name: "wait_jobs", Description: "Wait for jobs to end."},
		func(ctx context.Context, call *tools.Call, in in) (*harness.ToolResult, error) {
			reg, err := jobs.FromState(call.Env.State, jobs.Config{})
			if err != nil {
				return nil, err
			}
			var out []string
			for _, id := range in.IDs {
				info, err := reg.Wait(ctx, id)
				if err != nil {
					return nil, err
				}
				out = append(out, id+" "+string(info.Status))
			}
			return harness.TextResult(strings.Join(out, ", ")), nil
		})
}

func (e *workEnv) loop(t *testing.T, m model.Model, opts ...agent.Option) *agent.Loop {
	t.Helper()
	ws, err := fslocal.New(e.dir)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	all := slices.Concat(shell.Tools(shell.Config{}), jobs.Tools(), e.g.tools(), []tools.Tool{echoTool(), waitJobs()})
	base := []agent.Option{agent.WithModel(m), agent.WithTools(all...),
		agent.WithStores(agent.Stores{Sessions: e.store, Files: ws}),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "helper", Description: "helps", Tools: []string{"gate", "echo"}}}})}
	loop, err := agent.New(append(base, opts...)...)
	require.NoError(t, err)
	return loop
}

func bgBash(id, command string) harness.ToolCall {
	return replay.ToolCall(id, "bash", map[string]any{"command": command, "description": "build", "run_in_background": true})
}

// buildCommand stands for a build: it prints as it goes, takes a while,
// and writes what it built.
const buildCommand = `for i in 1 2 3; do echo "compiling part $i"; sleep 0.05; done; echo built > out.bin; echo "build ok"`

// Two background sub-agents and a background build (a real bash job) run
// while the parent works: the parent's own calls go on meanwhile, each
// child's end reaches the parent at its next step, the build's output is
// read, and nothing is left running.
func TestTwoBackgroundAgentsAndABuildWhileTheParentWorks(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	e := newWorkEnv(t)
	parent := replay.NewScripted(
		replay.Call(bgBash("p1", buildCommand)),
		replay.Call(bgTask("p2", "task a")),
		replay.Call(bgTask("p3", "task b")),
		replay.Call(replay.ToolCall("p4", "echo", echoIn{Text: "the parent works"})),
		replay.Call(replay.ToolCall("p5", "open_gate", map[string]any{"name": "a", "job": "job2"})),
		replay.Call(replay.ToolCall("p6", "echo", echoIn{Text: "more work"})),
		replay.Call(replay.ToolCall("p7", "open_gate", map[string]any{"name": "b", "job": "job3"})),
		replay.Call(replay.ToolCall("p8", "job_output", map[string]any{"job_id": "job1", "wait_ms": 30000})),
		replay.Response{Text: "all done"},
	)
	childA := replay.NewScripted(replay.Call(replay.ToolCall("a1", "gate", map[string]any{"name": "a"})), replay.Response{Text: "answer A"})
	childB := replay.NewScripted(replay.Call(replay.ToolCall("b1", "gate", map[string]any{"name": "b"})), replay.Response{Text: "answer B"})
	m := &routeModel{routes: map[string]model.Model{"go": parent, "task a": childA, "task b": childB}}
	loop := e.loop(t, m)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{Cwd: e.dir})
	require.NoError(t, err)
	evs, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)

	res := callEnds(evs)
	assert.Contains(t, res["p1"].Result.Text(), "Started background job job1")
	assert.Contains(t, res["p2"].Result.Text(), "as job job2")
	assert.Contains(t, res["p3"].Result.Text(), "as job job3")
	assert.Equal(t, "echo: the parent works", res["p4"].Result.Text(), "the parent works while its jobs run")
	assert.Equal(t, "completed", res["p5"].Result.Text())
	assert.Equal(t, "completed", res["p7"].Result.Text())
	out := res["p8"].Result.Text()
	assert.Contains(t, out, "compiling part 1\ncompiling part 2\ncompiling part 3\nbuild ok\n")
	assert.Contains(t, out, "[job1  bash  completed (exit 0)")
	built, err := os.ReadFile(filepath.Join(e.dir, "out.bin"))
	require.NoError(t, err)
	assert.Equal(t, "built\n", string(built))

	reqs := parent.Requests()
	require.Len(t, reqs, 9)
	assert.Contains(t, allText(reqs[5].Messages[len(reqs[5].Messages)-1:]), `job job2 (agent) completed; read it with job_output {"job_id":"job2"}`,
		"child A's end is told after the step during which it came")
	assert.Contains(t, allText(reqs[7].Messages[len(reqs[7].Messages)-1:]), `job job3 (agent) completed`)
	for _, j := range []string{"job2", "job3"} {
		var kinds []string
		for _, se := range ofType[*agent.SubAgentEvent](evs) {
			if se.Job == j {
				kinds = append(kinds, agent.KindOf(se.Event))
			}
		}
		require.NotEmpty(t, kinds, j)
		assert.Equal(t, "turn_end", kinds[len(kinds)-1], "%s's events reached the host, its end last", j)
	}
	reg, err := jobs.FromState(s.State(), jobs.Config{})
	require.NoError(t, err)
	for _, info := range reg.List() {
		assert.True(t, info.Status.Final(), "%s is %s", info.ID, info.Status)
	}
}

// A strict replay of a session with background work, a bash job and a
// sub-agent, sends every request as recorded: the completion notices
// where the recording had them (ReplayJobNotices), the child's requests
// as its own log has them. (The texts of bash_output, job_output and
// job_list say how long a job ran, so a session that reads a job with
// them cannot replay strictly.)
func TestBackgroundWorkReplaysStrictly(t *testing.T) {
	ctx := context.Background()
	e := newWorkEnv(t)
	script := []replay.Response{
		replay.Call(bgBash("p1", `echo compiling; sleep 0.1; echo "build ok"`)),
		replay.Call(bgTask("p2", "task a")),
		replay.Call(replay.ToolCall("p3", "echo", echoIn{Text: "the parent works"})),
		replay.Call(replay.ToolCall("p4", "wait_jobs", map[string]any{"ids": []string{"job1", "job2"}})),
		{Text: "all done"},
	}
	child := replay.NewScripted(replay.Call(replay.ToolCall("a1", "echo", echoIn{Text: "child works"})), replay.Response{Text: "answer A"})
	m := &routeModel{routes: map[string]model.Model{"go": replay.NewScripted(script...), "task a": child}}
	loop := e.loop(t, m)
	s, err := loop.NewSession(ctx, session.Header{Cwd: e.dir})
	require.NoError(t, err)
	_, end, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	require.NoError(t, loop.Close())
	tr, err := e.store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	var notices int
	for _, ev := range tr.Events {
		if r, ok := ev.Data.(*session.Reminded); ok && r.Source == jobs.NoticeSource {
			notices++
		}
	}
	assert.Equal(t, 2, notices, "the ends of both jobs were told")

	// The child's log, found through the parent's.
	var ctr *session.Transcript
	for _, id := range listChildren(t, e.store, s.Header().ID) {
		ctr, err = e.store.Load(ctx, id)
		require.NoError(t, err)
	}
	require.NotNil(t, ctr)

	pm, err := replay.NewStrict(tr)
	require.NoError(t, err)
	cm, err := replay.NewStrict(ctr)
	require.NoError(t, err)
	e2 := &workEnv{dir: e.dir, store: session.NewMemory(session.StoreConfig{}), g: e.g}
	rl := e2.loop(t, &routeModel{routes: map[string]model.Model{"go": pm, "task a": cm}}, agent.ReplayJobNotices(tr.Events))
	defer rl.Close()
	rs, err := rl.NewSession(ctx, session.Header{Cwd: e.dir})
	require.NoError(t, err)
	evs, end, err := collect(t, rs, ctx, "go")
	require.NoError(t, err, "the strict replay did not drift")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Contains(t, callEnds(evs)["p4"].Result.Text(), "job1 completed, job2 completed")
}

// listChildren returns the ids of the sub-agent sessions a parent's log
// names.
func listChildren(t *testing.T, store session.Store, parent string) []string {
	t.Helper()
	var ids []string
	for _, ev := range logEvents(t, store, parent) {
		if r, ok := ev.Data.(*session.ToolRecord); ok && r.Name == "sub_agent" {
			var rec struct {
				Session string `json:"session"`
			}
			require.NoError(t, jsonUnmarshal(r.Data, &rec))
			ids = append(ids, rec.Session)
		}
	}
	return ids
}

// processesWith returns the processes whose command line holds marker.
func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte(marker)) {
			out = append(out, e.Name()+": "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// job_stop of each kind, and closing a session with jobs of each kind
// still running, leave no process and no goroutine behind.
func TestStoppingBackgroundWorkLeavesNothingRunning(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	e := newWorkEnv(t)
	const marker = "31.4159"
	parent := replay.NewScripted(
		replay.Call(bgBash("p1", "sleep "+marker)),
		replay.Call(bgTask("p2", "task a")),
		replay.Call(replay.ToolCall("p3", "job_stop", map[string]any{"job_id": "job1"})),
		replay.Call(replay.ToolCall("p4", "job_stop", map[string]any{"job_id": "job2"})),
		replay.Response{Text: "stopped"},
		// The second turn: the same again, left running for Close.
		replay.Call(bgBash("p5", "sleep "+marker)),
		replay.Call(bgTask("p6", "task a")),
		replay.Response{Text: "left running"},
	)
	child := replay.NewScripted(
		replay.Call(replay.ToolCall("a1", "gate", map[string]any{"name": "never"})),
		replay.Call(replay.ToolCall("a2", "gate", map[string]any{"name": "never"})),
	)
	m := &routeModel{routes: map[string]model.Model{"go": parent, "again": parent, "task a": child}}
	loop := e.loop(t, m)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{Cwd: e.dir})
	require.NoError(t, err)
	evs, _, err := collect(t, s, ctx, "go")
	require.NoError(t, err)
	res := callEnds(evs)
	assert.Contains(t, res["p3"].Result.Text(), "[job1  bash  killed")
	assert.Contains(t, res["p4"].Result.Text(), "[job2  agent  killed")
	assert.Empty(t, processesWith(t, marker), "job_stop left the command's processes")

	_, _, err = collect(t, s, ctx, "again")
	require.NoError(t, err)
	// The job's start returns once its shell has forked; the command may
	// take a moment to appear under its own name on a busy machine.
	require.Eventually(t, func() bool { return len(processesWith(t, marker)) > 0 }, time.Minute, 10*time.Millisecond, "the second build runs")
	reg, err := jobs.FromState(s.State(), jobs.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Empty(t, processesWith(t, marker), "Close left the command's processes")
	for _, info := range reg.List() {
		assert.True(t, info.Status.Final(), "%s is %s", info.ID, info.Status)
	}
}

// A resumed parent reports lost the jobs that cannot have survived its
// process: a bash job, and a sub-agent that was in the middle of a step
// (not waiting for an answer); the model is told, and what they had
// printed can be read.
func TestResumeReportsLostBackgroundWork(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	e := newWorkEnv(t)
	parent := replay.NewScripted(
		replay.Call(bgBash("p1", "echo started; sleep 30")),
		replay.Call(bgTask("p2", "task a")),
		replay.Call(replay.ToolCall("p3", "job_output", map[string]any{"job_id": "job1", "wait_ms": 200})),
		replay.Response{Text: "running"},
	)
	child := replay.NewScripted(replay.Response{Text: "looking", ToolCalls: []harness.ToolCall{replay.ToolCall("a1", "gate", map[string]any{"name": "never"})}})
	loop := e.loop(t, &routeModel{routes: map[string]model.Model{"go": parent, "task a": child}})
	s, err := loop.NewSession(ctx, session.Header{Cwd: e.dir})
	require.NoError(t, err)
	_, _, err = collect(t, s, ctx, "go")
	require.NoError(t, err)
	id := s.Header().ID
	require.NoError(t, loop.Close())

	parent2 := replay.NewScripted(
		replay.Call(replay.ToolCall("q1", "job_output", map[string]any{"job_id": "job2"})),
		replay.Response{Text: "ok"},
	)
	loop2 := e.loop(t, &routeModel{routes: map[string]model.Model{"go": parent2}})
	defer loop2.Close()
	s2, err := loop2.ResumeSession(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, s2.Pending())
	evs, _, err := collect(t, s2, ctx, "go")
	require.NoError(t, err)
	first := allText(parent2.Requests()[0].Messages)
	assert.Contains(t, first, `job job1 (bash) lost; read it with bash_output {"job_id":"job1"}`)
	assert.Contains(t, first, `job job2 (agent) lost; read it with job_output {"job_id":"job2"}`)
	out := callEnds(evs)["q1"].Result.Text()
	assert.Contains(t, out, "looking")
	assert.Contains(t, out, "[job2  agent  lost")
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
