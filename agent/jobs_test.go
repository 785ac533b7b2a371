package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// probes is a host kind of job for tests: start_probe starts one,
// finish_probe ends it (when live is set), so a test decides the step
// during which a job ends.
type probes struct {
	live bool
	mu   sync.Mutex
	jobs map[string]*jobs.Job
}

type probeIn struct {
	ID string `json:"id,omitempty" jsonschema:"the job to finish"`
}

func (p *probes) tools() []tools.Tool {
	start := tools.Define(tools.Spec{Name: "start_probe", Description: "Start a probe job."},
		func(ctx context.Context, call *tools.Call, _ probeIn) (*harness.ToolResult, error) {
			reg, err := jobs.FromState(call.Env.State, jobs.Config{})
			if err != nil {
				return nil, err
			}
			var j *jobs.Job
			j, err = reg.Start(jobs.Spec{Kind: "probe", Title: "probe", Stop: func(context.Context) error {
				j.End(jobs.Result{})
				return nil
			}})
			if err != nil {
				return nil, err
			}
			_, _ = j.Write([]byte("started " + j.ID() + "\n"))
			p.mu.Lock()
			p.jobs[j.ID()] = j
			p.mu.Unlock()
			return harness.TextResult("started " + j.ID()), nil
		})
	finish := tools.Define(tools.Spec{Name: "finish_probe", Description: "Finish a probe job."},
		func(ctx context.Context, call *tools.Call, in probeIn) (*harness.ToolResult, error) {
			if p.live {
				p.finish(in.ID)
			}
			return harness.TextResult("finishing " + in.ID), nil
		})
	return []tools.Tool{start, finish, echoTool()}
}

func (p *probes) finish(id string) {
	p.mu.Lock()
	j := p.jobs[id]
	p.mu.Unlock()
	if j != nil {
		code := 0
		_, _ = j.Write([]byte("probe output\n"))
		j.End(jobs.Result{ExitCode: &code})
	}
}

// jobScript is the model's side of the session: two probes started in
// step 1, one finished in step 3, the other between the turns.
func jobScript() []replay.Response {
	return []replay.Response{
		{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "start_probe", map[string]any{}), replay.ToolCall("c2", "start_probe", map[string]any{})}},
		{ToolCalls: []harness.ToolCall{replay.ToolCall("c3", "echo", map[string]any{"text": "working"})}},
		{ToolCalls: []harness.ToolCall{replay.ToolCall("c4", "finish_probe", map[string]any{"id": "job1"})}},
		{Text: "turn one done"},
		{Text: "turn two done"},
	}
}

const (
	notice1 = `job job1 (probe) completed, exit 0; read it with job_output {"job_id":"job1"}`
	notice2 = `job job2 (probe) completed, exit 0; read it with job_output {"job_id":"job2"}`
)

// lastReminder is the text of the last message, a reminder as the model
// sees it.
func lastReminder(msgs []harness.Message) string {
	return strings.TrimSuffix(strings.TrimPrefix(msgs[len(msgs)-1].Text(), "<system-reminder>\n"), "\n</system-reminder>")
}

func allText(msgs []harness.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestJobNoticesArriveAtTheNextStep(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := &probes{live: true, jobs: map[string]*jobs.Job{}}
	var ended []jobs.Info
	var mu sync.Mutex
	m := replay.NewScripted(jobScript()...)
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(p.tools()...),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}),
		agent.WithJobs(jobs.Config{OnEnd: func(i jobs.Info) { mu.Lock(); ended = append(ended, i); mu.Unlock() }}))
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)

	evs, _, err := collect(t, s, ctx, "start two probes")
	require.NoError(t, err)
	reqs := m.Requests()
	require.Len(t, reqs, 4)
	assert.NotContains(t, allText(reqs[2].Messages), "job job1", "no notice before the job ended")
	assert.Equal(t, notice1, lastReminder(reqs[3].Messages), "the notice follows the results of the step during which the job ended")
	rem := ofType[*agent.ReminderAdded](evs)
	require.Len(t, rem, 1)
	assert.Equal(t, 3, rem[0].Step)
	assert.Equal(t, harness.Reminder{Source: "jobs", Text: notice1}, rem[0].Reminder)
	mu.Lock()
	require.Len(t, ended, 1, "the host heard of the end at once")
	assert.Equal(t, "job1", ended[0].ID)
	mu.Unlock()

	// job2 ends between the turns: the model hears of it right after the
	// next user message.
	p.finish("job2")
	evs, _, err = collect(t, s, ctx, "anything new?")
	require.NoError(t, err)
	reqs = m.Requests()
	require.Len(t, reqs, 5)
	msgs := reqs[4].Messages
	assert.Equal(t, notice2, lastReminder(msgs))
	assert.Equal(t, "anything new?", msgs[len(msgs)-2].Text())
	rem = ofType[*agent.ReminderAdded](evs)
	require.Len(t, rem, 1)
	assert.Equal(t, 0, rem[0].Step)
	id := s.Header().ID
	require.NoError(t, loop.Close())

	// The notices are in the log: a resumed session has them.
	loop2, err := agent.New(agent.WithModel(replay.NewScripted()), agent.WithTools(p.tools()...),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}))
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(ctx, id)
	require.NoError(t, err)
	text := allText(s2.Messages())
	assert.Contains(t, text, notice1)
	assert.Contains(t, text, notice2)
}

// A strict replay of a session with background jobs sends the notices
// where the recording did, though the replay's jobs end elsewhere (here:
// never).
func TestJobNoticesReplayStrictly(t *testing.T) {
	ctx := context.Background()
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	p := &probes{live: true, jobs: map[string]*jobs.Job{}}
	loop, err := agent.New(agent.WithModel(replay.NewScripted(jobScript()...)), agent.WithTools(p.tools()...), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, _, err = collect(t, s, ctx, "start two probes")
	require.NoError(t, err)
	p.finish("job2")
	_, _, err = collect(t, s, ctx, "anything new?")
	require.NoError(t, err)
	require.NoError(t, loop.Close())
	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)

	replayWith := func(opts ...agent.Option) error {
		m, err := replay.NewStrict(tr)
		require.NoError(t, err)
		still := &probes{jobs: map[string]*jobs.Job{}} // finish_probe does nothing
		l, err := agent.New(append([]agent.Option{agent.WithModel(m), agent.WithTools(still.tools()...)}, opts...)...)
		require.NoError(t, err)
		defer l.Close()
		rs, err := l.NewSession(ctx, session.Header{Cwd: "/proj"})
		require.NoError(t, err)
		for _, prompt := range []string{"start two probes", "anything new?"} {
			_, end, _ := collect(t, rs, ctx, prompt)
			if end.Err != nil {
				return end.Err
			}
		}
		return nil
	}
	require.NoError(t, replayWith(agent.ReplayJobNotices(tr.Events)), "the logged notices replay byte for byte")
	err = replayWith()
	require.Error(t, err, "without the logged notices the replay drifts")
	assert.ErrorIs(t, err, harness.CodeReplayDrift)
}

// A resumed session knows the jobs its log recorded: those that had not
// ended are lost, the model is told so at its next step, and what they
// had printed can still be read.
func TestResumeReportsLostJobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := &probes{live: true, jobs: map[string]*jobs.Job{}}
	loop, err := agent.New(agent.WithModel(replay.NewScripted(jobScript()[:4]...)), agent.WithTools(p.tools()...),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}))
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	_, _, err = collect(t, s, ctx, "start two probes")
	require.NoError(t, err)
	id := s.Header().ID
	require.NoError(t, loop.Close()) // job2 was still running: it ends with the process

	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("c1", "job_output", map[string]any{"job_id": "job2"}),
			replay.ToolCall("c2", "start_probe", map[string]any{}),
		}},
		replay.Response{Text: "ok"},
	)
	p2 := &probes{live: true, jobs: map[string]*jobs.Job{}}
	loop2, err := agent.New(agent.WithModel(m), agent.WithTools(append(p2.tools(), jobs.Tools()...)...),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(dir, session.StoreConfig{})}))
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(ctx, id)
	require.NoError(t, err)
	evs, _, err := collect(t, s2, ctx, "where are my jobs?")
	require.NoError(t, err)

	reqs := m.Requests()
	assert.Equal(t, `job job2 (probe) lost; read it with job_output {"job_id":"job2"}`, lastReminder(reqs[0].Messages),
		"the job that was running is lost; the one that had ended gets no second notice")
	assert.NotContains(t, allText(reqs[0].Messages[len(reqs[0].Messages)-2:]), "job1")
	var out, started string
	for _, e := range ofType[*agent.ToolCallEnd](evs) {
		switch e.Call.Name {
		case "job_output":
			out = e.Result.Text()
		case "start_probe":
			started = e.Result.Text()
		}
	}
	assert.True(t, strings.HasPrefix(out, "started job2\n[bytes 0 to 13 of 13; read on from offset 13]\n[job2  probe  lost  "), out)
	assert.Equal(t, "started job3", started, "new jobs are numbered after the restored ones")
}
