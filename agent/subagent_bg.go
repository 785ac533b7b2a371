package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// Why a background child was stopped (its context's cause).
var (
	errJobStopped   = errors.New("the job was stopped")
	errParentBudget = errors.New("the parent session's budget is reached")
)

// bgState is what a session keeps of its background children: the
// running turn their events and spend go to, the events waiting for it,
// and the children waiting for answers to their approvals.
type bgState struct {
	mu    sync.Mutex
	turn  *subTurn // the running turn's; nil between turns
	queue []Event
	wake  chan struct{}
	waits []*bgWait
}

// bgWait is a background child waiting for answers: its questions, as
// its own session's Pending lists them, and where the answers go.
type bgWait struct {
	job     string
	origin  permission.Origin
	reqs    []permission.Request
	answers chan map[string]permission.Answer // buffered: never blocks
}

// wakeChan is signalled when an event waits for the running turn.
func (b *bgState) wakeChan() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wake == nil {
		b.wake = make(chan struct{}, 1)
	}
	return b.wake
}

// bgAttach makes t the turn background children's events and spend go
// to.
func (s *Session) bgAttach(t *turn) {
	s.bg.mu.Lock()
	s.bg.turn = t.sub
	s.bg.mu.Unlock()
}

// bgDetach ends what bgAttach began and returns the events still waiting
// for the turn.
func (s *Session) bgDetach(t *turn) []Event {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	if s.bg.turn != t.sub {
		return nil
	}
	s.bg.turn = nil
	q := s.bg.queue
	s.bg.queue = nil
	return q
}

// relayJobEvents passes on the background children's events that came
// since the last time. It runs on the turn's goroutine.
func (t *turn) relayJobEvents() {
	t.s.bg.mu.Lock()
	if t.s.bg.turn != t.sub {
		t.s.bg.mu.Unlock()
		return
	}
	q := t.s.bg.queue
	t.s.bg.queue = nil
	t.s.bg.mu.Unlock()
	for _, ev := range q {
		t.emit(ev)
	}
}

// bgEvent passes on an event of a background child: to the running
// turn, or, between turns, to WithJobEvents's function.
func (s *Session) bgEvent(ev *SubAgentEvent) {
	wake := s.bg.wakeChan()
	s.bg.mu.Lock()
	if s.bg.turn != nil {
		s.bg.queue = append(s.bg.queue, ev)
		s.bg.mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
		return
	}
	s.bg.mu.Unlock()
	if f := s.loop.cfg.jobs.events; f != nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.logger.Error("the job events function panicked", "event", kindOf(ev), "panic", fmt.Sprint(p))
				}
			}()
			f(ev)
		}()
	}
}

// bgCharge counts a background child's model call: in the session's
// spend at once, and in the running turn's.
func (s *Session) bgCharge(u harness.Usage, cost float64) {
	s.spend(u, cost)
	s.bg.mu.Lock()
	st := s.bg.turn
	s.bg.mu.Unlock()
	if st != nil {
		st.addBackground(u, cost)
	}
}

// bgWaiting registers a child waiting for answers; bgDone forgets it.
func (s *Session) bgWaiting(w *bgWait) {
	s.bg.mu.Lock()
	s.bg.waits = append(s.bg.waits, w)
	s.bg.mu.Unlock()
}

func (s *Session) bgDone(w *bgWait) {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	for i, x := range s.bg.waits {
		if x == w {
			s.bg.waits = append(s.bg.waits[:i:i], s.bg.waits[i+1:]...)
			return
		}
	}
}

// jobCallSep joins a job id and a child's call id into the id Pending
// gives a background child's question: job3/call_t1_s2_0.
const jobCallSep = "/"

// jobRequests returns the questions of the background children waiting
// for answers, their call ids qualified by their job ids, oldest job
// first.
func (s *Session) jobRequests() []permission.Request {
	s.bg.mu.Lock()
	waits := append([]*bgWait(nil), s.bg.waits...)
	s.bg.mu.Unlock()
	sort.SliceStable(waits, func(i, j int) bool { return jobNumber(waits[i].job) < jobNumber(waits[j].job) })
	var out []permission.Request
	for _, w := range waits {
		for _, r := range w.reqs {
			r.Call.ID = w.job + jobCallSep + r.Call.ID
			o := w.origin
			r.Origin = &o
			out = append(out, r)
		}
	}
	return out
}

func jobNumber(id string) int {
	var n int
	_, _ = fmt.Sscanf(id, "job%d", &n)
	return n
}

// splitJobAnswers separates the answers for background children's
// questions (their ids qualified by a waiting job's id) from the rest.
func (s *Session) splitJobAnswers(answers map[string]permission.Answer) (byJob map[*bgWait]map[string]permission.Answer, own map[string]permission.Answer) {
	s.bg.mu.Lock()
	waits := append([]*bgWait(nil), s.bg.waits...)
	s.bg.mu.Unlock()
	for id, a := range answers {
		var w *bgWait
		for _, x := range waits {
			if strings.HasPrefix(id, x.job+jobCallSep) {
				w = x
				break
			}
		}
		if w == nil {
			if own == nil {
				own = map[string]permission.Answer{}
			}
			own[id] = a
			continue
		}
		if byJob == nil {
			byJob = map[*bgWait]map[string]permission.Answer{}
		}
		if byJob[w] == nil {
			byJob[w] = map[string]permission.Answer{}
		}
		byJob[w][strings.TrimPrefix(id, w.job+jobCallSep)] = a
	}
	return byJob, own
}

// checkJobAnswers reports answers that do not fit the questions of the
// children they are for: an unknown call, a missing one (a child's
// questions are answered together), or an answer for another version of
// a call.
func checkJobAnswers(byJob map[*bgWait]map[string]permission.Answer) error {
	for w, answers := range byJob {
		want := map[string]permission.Request{}
		var ids []string
		for _, r := range w.reqs {
			want[r.Call.ID] = r
			ids = append(ids, w.job+jobCallSep+r.Call.ID)
		}
		for id, a := range answers {
			r, ok := want[id]
			if !ok {
				return &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf(
					"agent: no call with id %s%s%s waits for approval; the calls of job %s that wait are %s", w.job, jobCallSep, id, w.job, strings.Join(ids, ", "))}
			}
			if a.Digest != "" && a.Digest != r.Digest {
				return &harness.Error{Code: CodeCallChanged, Message: fmt.Sprintf(
					"agent: the answer for %s%s%s was given for another version of the call; no answer was applied and nothing ran: answer the current question from Pending", w.job, jobCallSep, id)}
			}
		}
		for id := range want {
			if _, ok := answers[id]; !ok {
				return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(
					"agent: the call %s%s%s still waits for approval: answer every waiting call of job %s (%s) at once", w.job, jobCallSep, id, w.job, strings.Join(ids, ", "))}
			}
		}
	}
	return nil
}

// answerJobs hands checked answers to the children waiting for them,
// which go on in the background.
func (s *Session) answerJobs(byJob map[*bgWait]map[string]permission.Answer) {
	for w, answers := range byJob {
		s.bgDone(w)
		w.answers <- answers
	}
}

// awaitJobs pauses the turn when background children wait for answers
// no approver gave: it logs their questions (ids qualified by job),
// yields an ApprovalRequest and ends the turn awaiting_approval, so that
// Session.Resolve answers them and continues the turn. final says the
// model had finished the turn. It reports whether the turn paused.
func (t *turn) awaitJobs() bool {
	reqs := t.s.jobRequests()
	if len(reqs) == 0 {
		return false
	}
	t.relayJobEvents()
	asked := make([]session.PendingCall, 0, len(reqs))
	for _, r := range reqs {
		asked = append(asked, session.PendingCall{CallID: r.Call.ID, Name: r.Call.Name, Preview: r.Decision.Preview, Rule: r.Decision.Rule,
			Reason: r.Decision.Reason, Suggest: r.Decision.Suggest, Digest: r.Digest})
	}
	ar := &session.ApprovalRequested{Step: t.steps, Calls: asked}
	if o := t.output; o != nil {
		ar.OutputName, ar.OutputSchema, ar.OutputRepaired = o.out.Name, o.out.Schema, o.repaired
	}
	if err := t.s.append(t.ctx, ar); err != nil {
		t.finish(session.ReasonError, fmt.Errorf("agent: logging the sub-agents' approval requests: %w", err))
		return true
	}
	t.s.mu.Lock()
	t.s.paused = &pause{reason: session.ReasonAwaitingApproval, step: t.steps, asked: asked, decided: map[string]*session.PermissionDecided{}, output: t.output}
	t.s.mu.Unlock()
	t.emit(&ApprovalRequest{Step: t.steps, Requests: reqs})
	t.finish(session.ReasonAwaitingApproval, nil)
	return true
}

// resumeJobs continues a turn paused by awaitJobs, whose children's
// answers were handed over: it calls the model next, or, when the model
// had finished the turn, ends it (after pausing again for children still
// waiting).
func (t *turn) resumeJobs(pz *pause) {
	t.s.mu.Lock()
	t.s.paused = nil
	t.s.mu.Unlock()
	t.steps, t.output = pz.step, pz.output
	msgs := t.s.Messages()
	if n := len(msgs); n > 0 && msgs[n-1].Role == harness.RoleAssistant && len(msgs[n-1].ToolCalls()) == 0 {
		if !t.awaitJobs() {
			t.finish(session.ReasonCompleted, nil)
		}
		return
	}
	t.loop()
}

// bgChild is a background sub-agent: its job, its session, and what it
// owes its parent.
type bgChild struct {
	l      *Loop // the parent's
	parent *Session
	child  *Loop
	sess   *Session
	job    *jobs.Job
	origin *permission.Origin
	// call is the parent's task call that started it.
	call  *tools.Call
	agent string
	depth int
	// steps is the budget of child steps it spends (the starting turn's,
	// shared with that turn's other children), of total.
	steps    *subTurn
	total    int
	lastStep int
	ctx      context.Context
	cancel   context.CancelCauseFunc

	// waiting is the child's questions, registered with the parent as
	// its turn pauses.
	waiting *bgWait

	answer strings.Builder
	end    *TurnEnd
	// calls are its model calls not yet recorded in the parent's log.
	calls []subAgentCall
}

func (c *bgChild) stop(context.Context) error {
	c.cancel(errJobStopped)
	return nil
}

// startBackgroundTask starts a child session as a job of the parent
// session's registry (kind "agent") and returns at once. The child's
// turn runs until it ends, job_stop stops it, or the parent session
// closes. Its text is the job's output, its final answer the job's
// Answer; the parent's log records its session id and its model calls.
// Its events reach the parent's host (bgEvent), its steps count against
// the starting turn's budget of sub-agent steps, its spend is the parent
// session's as it happens, and its asks go to the parent's approver or
// pause it until Session.Resolve answers them through the parent.
func (l *Loop) startBackgroundTask(ctx context.Context, t *turn, call *tools.Call, in taskArgs, ty AgentType, steps int, budget Budgets, byName map[string]tools.Tool) (*harness.ToolResult, error) {
	reg := t.s.jobs()
	if reg == nil {
		return nil, &harness.Error{Code: harness.CodeClosed, Message: "the session is closing; no background agent was started"}
	}
	origin := &permission.Origin{Agent: ty.Name}
	child, err := l.childLoop(t.s.view(), t.childModel(ty), ty, steps, budget, byName, origin, true)
	if err != nil {
		return nil, err
	}
	c := &bgChild{l: l, parent: t.s, child: child, origin: origin, call: &tools.Call{ID: call.ID, Name: call.Name},
		agent: ty.Name, depth: child.cfg.depth, steps: t.sub, total: l.cfg.sub.TurnSteps}
	// The child lives as long as its job, not as long as this call.
	c.ctx, c.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	title := in.Description
	if title == "" {
		title = in.Agent
	}
	j, err := reg.Start(jobs.Spec{Kind: jobs.Agent, Title: in.Agent + ": " + title, ReadTool: "job_output", Stop: c.stop})
	if err != nil {
		c.cancel(nil)
		child.Close()
		return nil, err
	}
	c.job, origin.Job = j, j.ID()
	sess, err := child.NewSession(ctx, session.Header{Cwd: t.s.Header().Cwd, Parent: t.s.Header().ID, ParentCall: call.ID})
	if err != nil {
		c.cancel(nil)
		child.Close()
		j.End(jobs.Result{Status: jobs.Failed, Detail: err.Error()})
		return nil, err
	}
	c.sess, origin.Session = sess, sess.Header().ID
	if rerr := t.s.record(ctx, call, "sub_agent", subAgentRecord{Session: sess.Header().ID, Agent: ty.Name, Description: in.Description, Job: j.ID()}); rerr != nil {
		l.cfg.logger.Warn("agent: recording a sub-agent's session id failed", "error", rerr)
	}
	go c.run(sess.Run(c.ctx, in.Prompt))
	// The session id stays out of the text: the model needs the job id,
	// and a replay's sessions have other ids.
	return harness.TextResult(fmt.Sprintf("Started the %s agent in the background as job %s. "+
		"You will be told when it ends; then read its final answer with job_output (job_id %q). Stop it with job_stop.", ty.Name, j.ID(), j.ID())), nil
}

// run relays the child's turn, seq (nil for a child taken up again while
// it waits), then, while the turn pauses for answers, waits for them and
// relays the continuation; it ends the job when the turn ends.
func (c *bgChild) run(seq iter.Seq2[Event, error]) {
	defer c.cancel(nil)
	defer c.child.Close()
	for {
		if seq != nil {
			c.relay(seq)
		}
		if c.end == nil || c.end.Reason != session.ReasonAwaitingApproval || c.ctx.Err() != nil {
			break
		}
		c.recordCalls()
		answers, ok := c.await()
		if !ok {
			break
		}
		seq = c.sess.Resolve(c.ctx, answers)
	}
	c.recordCalls()
	if cerr := c.sess.Close(); cerr != nil {
		c.l.cfg.logger.Warn("agent: closing a sub-agent's session failed", "session", c.sess.Header().ID, "error", cerr)
	}
	c.job.End(c.result())
}

// relay passes the events of one run of the child's turn on to the
// parent, counting its steps and spend.
func (c *bgChild) relay(seq iter.Seq2[Event, error]) {
	id := c.sess.Header().ID
	for ev := range seq {
		if u := innerUsage(ev); u != nil {
			c.calls = append(c.calls, subAgentCall{Model: u.Model, Usage: u.Usage, Time: time.Now()})
			c.parent.bgCharge(u.Usage, u.Cost)
			if c.parentBudgetReached() {
				c.cancel(errParentBudget)
			}
		}
		switch e := ev.(type) {
		case *TextDelta:
			c.answer.WriteString(e.Text)
			_, _ = c.job.Write([]byte(e.Text))
		case *Retry:
			c.answer.Reset()
		case *StepEnd:
			if e.ToolCalls > 0 {
				c.answer.Reset()
				_, _ = c.job.Write([]byte("\n"))
			}
			if e.Step != c.lastStep { // a resolved step ends twice
				c.lastStep = e.Step
				if c.steps.charge(c.total) && e.ToolCalls > 0 {
					c.cancel(errBudgetSpent)
				}
			}
		case *ApprovalRequest:
			// The questions are the parent's before the host hears of
			// them.
			c.register()
		case *TurnEnd:
			c.end = e
		}
		wrapped, ok := ev.(*SubAgentEvent)
		if ok {
			cp := *wrapped // a grandchild's, already tagged
			if cp.Job == "" {
				cp.Job = c.job.ID()
			}
			wrapped = &cp
		} else {
			wrapped = &SubAgentEvent{Session: id, Call: c.call.ID, Agent: c.agent, Depth: c.depth, Job: c.job.ID(), Event: ev}
		}
		c.parent.bgEvent(wrapped)
	}
}

// parentBudgetReached reports whether the parent session's budget of
// money or tokens is reached, the child's spend included.
func (c *bgChild) parentBudgetReached() bool {
	b := c.parent.budgets()
	if b.Session == (Budget{}) {
		return false
	}
	what, _ := Budgets{Session: b.Session}.reached(spend{}, spendOf(c.parent.Usage(), c.parent.Cost()))
	return what != ""
}

// register makes the questions of the child's paused turn the parent's
// (Session.Pending lists them).
func (c *bgChild) register() {
	if c.waiting != nil {
		return
	}
	w := &bgWait{job: c.job.ID(), origin: *c.origin, reqs: c.sess.Pending(), answers: make(chan map[string]permission.Answer, 1)}
	if len(w.reqs) == 0 {
		return
	}
	c.waiting = w
	c.parent.bgWaiting(w)
}

// await waits for the answers to the child's registered questions, until
// the job is stopped.
func (c *bgChild) await() (map[string]permission.Answer, bool) {
	c.register()
	w := c.waiting
	if w == nil {
		return nil, false
	}
	c.waiting = nil
	defer c.parent.bgDone(w)
	select {
	case a := <-w.answers:
		return a, true
	case <-c.ctx.Done():
		return nil, false
	}
}

// recordCalls records the child's model calls in the parent's log, so
// that a resumed parent's Cost counts them as the live one did.
func (c *bgChild) recordCalls() {
	if len(c.calls) == 0 {
		return
	}
	if rerr := c.parent.record(context.Background(), c.call, subAgentUsageRecord, subAgentUsage{Session: c.sess.Header().ID, Calls: c.calls}); rerr != nil {
		c.l.cfg.logger.Warn("agent: recording a sub-agent's model calls failed", "error", rerr)
	}
	c.calls = nil
}

// result is how the child's turn ended, for its job.
func (c *bgChild) result() jobs.Result {
	answer := strings.TrimSpace(c.answer.String())
	switch cause := context.Cause(c.ctx); {
	case errors.Is(cause, errBudgetSpent):
		return jobs.Result{Status: jobs.Completed, Answer: answer, Detail: "stopped at the turn's budget of sub-agent steps before it finished"}
	case errors.Is(cause, errParentBudget):
		return jobs.Result{Status: jobs.Completed, Answer: answer, Detail: "stopped at the parent session's budget of money or tokens before it finished"}
	case cause != nil:
		return jobs.Result{Status: jobs.Killed, Answer: answer, Detail: fmt.Sprintf("the %s agent was stopped", c.agent)}
	}
	return backgroundResult(c.agent, answer, c.end)
}

// backgroundResult is how a background child's turn ended, for its job.
func backgroundResult(agentName, answer string, end *TurnEnd) jobs.Result {
	switch {
	case end == nil:
		return jobs.Result{Status: jobs.Failed, Answer: answer, Detail: fmt.Sprintf("the %s agent ended without finishing its turn", agentName)}
	case end.Reason == session.ReasonCompleted:
		if answer == "" {
			answer = "(The agent gave no answer.)"
		}
		return jobs.Result{Status: jobs.Completed, Answer: answer}
	case end.Reason == session.ReasonStepLimit:
		return jobs.Result{Status: jobs.Completed, Answer: answer, Detail: "stopped at its step limit before it finished"}
	case end.Reason == session.ReasonBudgetExceeded:
		return jobs.Result{Status: jobs.Completed, Answer: answer, Detail: "stopped at what was left of the parent's budget of money or tokens before it finished"}
	default:
		msg := end.Reason
		if end.Err != nil {
			msg += ": " + end.Err.Error()
		}
		return jobs.Result{Status: jobs.Failed, Answer: answer, Detail: fmt.Sprintf("the %s agent did not finish (%s)", agentName, msg)}
	}
}

// reattach takes up again, after a restart, a background child whose job
// the log records as running: when its session is paused waiting for
// approval, the child is resumed and waits for the answers again, as
// the same job; otherwise it reports false and the job is lost.
func (s *Session) reattach(ctx context.Context, reg *jobs.Registry, rec jobRecord, sub subAgentRef) bool {
	l := s.loop
	if l.cfg.sub == nil || sub.Session == "" {
		return false
	}
	ty, ok := l.agentType(sub.Agent)
	if !ok {
		return false
	}
	tr, err := l.cfg.store.Load(ctx, sub.Session)
	if err != nil || !endsAwaitingApproval(tr.Events) {
		return false
	}
	steps := ty.MaxSteps
	if steps == 0 {
		steps = l.cfg.maxSteps
	}
	var budget Budgets
	if b := s.budgets(); !b.zero() {
		left, ok := b.left(spend{}, spendOf(s.Usage(), s.Cost()))
		if !ok {
			return false
		}
		budget = Budgets{Turn: left}
	}
	m := ty.Model
	if m == nil {
		m = s.Model()
	}
	origin := &permission.Origin{Session: sub.Session, Agent: ty.Name, Job: rec.ID}
	child, err := l.childLoop(s.view(), m, ty, steps, budget, l.toolsByName(), origin, true)
	if err != nil {
		l.cfg.logger.Warn("agent: a waiting sub-agent could not be taken up again", "job", rec.ID, "error", err)
		return false
	}
	csess, err := child.ResumeSession(ctx, sub.Session)
	if err != nil || len(csess.Pending()) == 0 {
		if csess != nil {
			csess.Close()
		}
		child.Close()
		l.cfg.logger.Warn("agent: a waiting sub-agent could not be taken up again", "job", rec.ID, "error", err)
		return false
	}
	c := &bgChild{l: l, parent: s, child: child, sess: csess, origin: origin, call: &tools.Call{ID: sub.Call, Name: taskToolName},
		agent: ty.Name, depth: child.cfg.depth, steps: &subTurn{}, total: l.cfg.sub.TurnSteps,
		end: &TurnEnd{Reason: session.ReasonAwaitingApproval}}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	j, err := reg.Reattach(rec.Info, []byte(rec.Tail), jobs.Spec{Kind: jobs.Agent, ReadTool: "job_output", Stop: c.stop})
	if err != nil {
		c.cancel(nil)
		csess.Close()
		child.Close()
		l.cfg.logger.Warn("agent: a waiting sub-agent could not be taken up again", "job", rec.ID, "error", err)
		return false
	}
	c.job = j
	c.register()
	go c.run(nil)
	return true
}

// endsAwaitingApproval reports whether a log's last turn ended waiting
// for approval, with nothing after it.
func endsAwaitingApproval(events []session.Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		switch p := events[i].Data.(type) {
		case *session.TurnEnded:
			return p.Reason == session.ReasonAwaitingApproval
		case *session.UserMessage, *session.PermissionDecided, *session.ToolStarted, *session.ToolFinished, *session.ModelRequest, *session.AssistantMessage:
			return false
		}
	}
	return false
}
