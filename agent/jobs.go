package agent

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// jobsConfig is the loop's configuration of background jobs.
type jobsConfig struct {
	cfg jobs.Config
	// logged, when set, holds the completion notices of a recording by
	// turn and step (ReplayJobNotices); live notices are then dropped.
	logged map[[2]int][]harness.Reminder
	// events hears the background children's events that come while no
	// turn runs (WithJobEvents).
	events func(*SubAgentEvent)
	// background is set in the loop of a background child: its asks
	// pause it instead of being denied.
	background bool
}

// WithJobEvents sets f to hear the events of background sub-agents (task
// with background true) that come while no turn of their parent session
// runs. While a turn runs, they are among its events; either way each is
// a SubAgentEvent whose Job names the child's job, and each reaches the
// host once. f is called from the child's goroutine, one event at a time
// per child; it must not block. Without f, the events that come between
// turns reach only the child's log.
func WithJobEvents(f func(*SubAgentEvent)) Option {
	return func(c *config) { c.jobs.events = f }
}

// WithJobs configures the job registry of each session (package jobs):
// its limits, and Config.OnEnd, which tells the host the moment a job
// ends, whether or not a turn is running. The zero Config is the default.
//
// Every session has a registry whatever the options: the tools that
// start background work (bash with run_in_background, say) take it from
// the session's state. When a job ends, the model is told at its next
// step: after the results of the step during which it ended, or after
// the user's message when it ended between turns, as one reminder line
// (Source "jobs") such as
//
//	job job3 (bash) completed, exit 0; read it with bash_output {"job_id":"job3"}
//
// so that it need not poll. Like every reminder the notice is logged
// (session.Reminded) and reported as a ReminderAdded event, so a resumed
// session sends what the live one did. A job whose end a tool result
// already showed the model gets no notice.
func WithJobs(cfg jobs.Config) Option { return func(c *config) { c.jobs.cfg = cfg } }

// ReplayJobNotices makes a replay send the completion notices of a
// recording (the events of its log) at the turns and steps where the
// recording sent them, instead of those of the jobs that end during the
// replay, whose timing differs from run to run. Give it with a strict
// replay (replay.NewStrict) of a session that had background jobs.
func ReplayJobNotices(events []session.Event) Option {
	logged := map[[2]int][]harness.Reminder{}
	turn, step := 0, 0
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			turn, step = turn+1, 0
		case *session.AssistantMessage:
			step = p.Step
		case *session.Reminded:
			if p.Source == jobs.NoticeSource {
				k := [2]int{turn, step}
				logged[k] = append(logged[k], p.Reminder)
			}
		}
	}
	return func(c *config) { c.jobs.logged = logged }
}

// jobs returns the session's job registry, creating it with the loop's
// configuration; nil once the session's state has closed.
func (s *Session) jobs() *jobs.Registry {
	r, err := jobs.FromState(s.state, s.loop.cfg.jobs.cfg)
	if err != nil {
		return nil
	}
	return r
}

// jobNotices tells the model about the jobs that ended, after step's
// results (step 0: after the user's message): it logs one reminder per
// job and reports each as a ReminderAdded event.
func (t *turn) jobNotices(step int) {
	t.relayJobEvents()
	var notes []harness.Reminder
	if r := t.s.jobs(); r != nil {
		t.recordJobs(r)
		for _, info := range r.TakeEnded() {
			notes = append(notes, harness.Reminder{Source: jobs.NoticeSource, Text: info.Notice()})
		}
	}
	if logged := t.l.cfg.jobs.logged; logged != nil {
		notes = logged[[2]int{t.s.turns(), step}]
	}
	for _, r := range notes {
		if err := t.s.append(t.ctx, &session.Reminded{Reminder: r}); err != nil {
			t.s.logger.Error("logging a job notice failed", "error", err)
			return
		}
		t.emit(&ReminderAdded{Step: step, Reminder: r})
	}
}

// The log records of jobs: the tools.State key of what was recorded,
// and the ToolRecord's Tool and Name.
type jobLogKey struct{}

const (
	jobRecordTool = "jobs"
	jobRecordName = "job"
	// jobTailBytes is how much of a job's latest output a record keeps.
	jobTailBytes = 4 << 10
)

// jobRecord is a job as the log records it: its Info and the last bytes
// it had printed.
type jobRecord struct {
	jobs.Info
	// Tail is the end of the output at the time, from TailOffset.
	Tail       string `json:"tail,omitempty"`
	TailOffset int64  `json:"tail_offset,omitempty"`
}

// jobLog remembers what was last recorded of each job.
type jobLog struct {
	mu   sync.Mutex
	seen map[string]jobs.Info
}

// recordJobs logs a record for each job that started, printed more or
// changed status since its last record, so that a resumed session knows
// what its jobs were (restoreJobs). It runs at the same places as the
// notices: after the user's message and after each step.
func (t *turn) recordJobs(r *jobs.Registry) {
	jl, err := tools.LoadState(t.s.state, jobLogKey{}, func() *jobLog { return &jobLog{seen: map[string]jobs.Info{}} })
	if err != nil {
		return
	}
	jl.mu.Lock()
	defer jl.mu.Unlock()
	for _, info := range r.List() {
		if last, ok := jl.seen[info.ID]; ok && last.Status == info.Status && last.Output == info.Output {
			continue
		}
		rec := jobRecord{Info: info}
		if j, err := r.Get(info.ID); err == nil {
			w := j.Read(-jobTailBytes, 0)
			rec.Tail, rec.TailOffset = string(w.Data), w.Offset
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			continue
		}
		if err := t.s.append(t.ctx, &session.ToolRecord{Tool: jobRecordTool, Name: jobRecordName, Data: raw}); err != nil {
			t.s.logger.Error("logging a job record failed", "error", err)
			return
		}
		jl.seen[info.ID] = info
	}
}

// restoreJobs puts the jobs a resumed session's log records into its
// registry. None of them survived the process that ran it: those not
// recorded as ended are lost (the model is told at its next step), with
// the output last recorded, except a background sub-agent whose session
// waits for approval, which is taken up again as the same job (reattach).
func (s *Session) restoreJobs(ctx context.Context, events []session.Event) {
	latest := map[string]jobRecord{}
	subs := map[string]subAgentRef{}
	var order []string
	for _, e := range events {
		p, ok := e.Data.(*session.ToolRecord)
		if !ok {
			continue
		}
		if p.Tool == taskToolName && p.Name == "sub_agent" {
			var sr subAgentRecord
			if json.Unmarshal(p.Data, &sr) == nil && sr.Job != "" {
				subs[sr.Job] = subAgentRef{Session: sr.Session, Agent: sr.Agent, Call: p.CallID}
			}
			continue
		}
		if p.Tool != jobRecordTool || p.Name != jobRecordName {
			continue
		}
		var rec jobRecord
		if json.Unmarshal(p.Data, &rec) != nil || rec.ID == "" {
			continue
		}
		if _, ok := latest[rec.ID]; !ok {
			order = append(order, rec.ID)
		}
		latest[rec.ID] = rec
	}
	r := s.jobs()
	if r == nil || len(order) == 0 {
		return
	}
	jl, err := tools.LoadState(s.state, jobLogKey{}, func() *jobLog { return &jobLog{seen: map[string]jobs.Info{}} })
	if err != nil {
		return
	}
	for _, id := range order {
		rec := latest[id]
		if !rec.Status.Final() && rec.Kind == jobs.Agent {
			if sub, ok := subs[id]; ok && s.reattach(ctx, r, rec, sub) {
				continue
			}
		}
		if _, err := r.Lose(rec.Info, []byte(rec.Tail)); err != nil {
			s.logger.Warn("restoring a job from the log failed", "job", id, "error", err)
			continue
		}
		if rec.Status.Final() {
			jl.mu.Lock()
			jl.seen[id] = rec.Info
			jl.mu.Unlock()
		}
	}
}

// subAgentRef is what a parent's log says of a background child: its
// session, agent type and the task call that started it.
type subAgentRef struct {
	Session, Agent, Call string
}
