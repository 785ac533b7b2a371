package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// startBackgroundTask starts a child session as a job of the parent
// session's registry (kind "agent") and returns at once. The child's
// turn runs until it ends, job_stop stops it, or the parent session
// closes. Its text is the job's output, its final answer the job's
// Answer; the parent's log records its session id and its model calls,
// and its spend adds to the parent session's. Its events do not reach
// the host as SubAgentEvent values (the parent's turn may be over): the
// host reads the child's session, or hears of its end through the
// job's notice and WithJobs's OnEnd.
func (l *Loop) startBackgroundTask(ctx context.Context, t *turn, call *tools.Call, in taskArgs, ty AgentType, steps int, budget Budgets, byName map[string]tools.Tool) (*harness.ToolResult, error) {
	reg := t.s.jobs()
	if reg == nil {
		return nil, &harness.Error{Code: harness.CodeClosed, Message: "the session is closing; no background agent was started"}
	}
	child, err := l.childLoop(t, ty, steps, budget, byName)
	if err != nil {
		return nil, err
	}
	// The child lives as long as its job, not as long as this call.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	title := in.Description
	if title == "" {
		title = in.Agent
	}
	j, err := reg.Start(jobs.Spec{Kind: jobs.Agent, Title: in.Agent + ": " + title, ReadTool: "job_output",
		Stop: func(context.Context) error { cancel(); return nil }})
	if err != nil {
		cancel()
		child.Close()
		return nil, err
	}
	sess, err := child.NewSession(ctx, session.Header{Cwd: t.s.Header().Cwd, Parent: t.s.Header().ID, ParentCall: call.ID})
	if err != nil {
		cancel()
		child.Close()
		j.End(jobs.Result{Status: jobs.Failed, Detail: err.Error()})
		return nil, err
	}
	id := sess.Header().ID
	if rerr := t.s.record(ctx, call, "sub_agent", subAgentRecord{Session: id, Agent: ty.Name, Description: in.Description}); rerr != nil {
		l.cfg.logger.Warn("agent: recording a sub-agent's session id failed", "error", rerr)
	}
	parent := t.s
	go func() {
		defer cancel()
		defer child.Close()
		var (
			answer strings.Builder
			end    *TurnEnd
			calls  []subAgentCall
		)
		for ev := range sess.Run(cctx, in.Prompt) {
			if u := innerUsage(ev); u != nil {
				calls = append(calls, subAgentCall{Model: u.Model, Usage: u.Usage, Time: time.Now()})
			}
			switch e := ev.(type) {
			case *TextDelta:
				answer.WriteString(e.Text)
				_, _ = j.Write([]byte(e.Text))
			case *Retry:
				answer.Reset()
			case *StepEnd:
				if e.ToolCalls > 0 {
					answer.Reset()
					_, _ = j.Write([]byte("\n"))
				}
			case *TurnEnd:
				end = e
			}
		}
		if end != nil {
			parent.spend(end.Usage, end.Cost)
		}
		if len(calls) > 0 {
			if rerr := parent.record(context.Background(), call, subAgentUsageRecord, subAgentUsage{Session: id, Calls: calls}); rerr != nil {
				l.cfg.logger.Warn("agent: recording a sub-agent's model calls failed", "error", rerr)
			}
		}
		if cerr := sess.Close(); cerr != nil {
			l.cfg.logger.Warn("agent: closing a sub-agent's session failed", "session", id, "error", cerr)
		}
		j.End(backgroundResult(ty.Name, id, strings.TrimSpace(answer.String()), end, cctx.Err()))
	}()
	return harness.TextResult(fmt.Sprintf("Started the %s agent in the background as job %s (session %s). "+
		"You will be told when it ends; then read its final answer with job_output (job_id %q). Stop it with job_stop.", ty.Name, j.ID(), id, j.ID())), nil
}

// backgroundResult is how a background child's turn ended, for its job.
func backgroundResult(agentName, id, answer string, end *TurnEnd, stopped error) jobs.Result {
	switch {
	case stopped != nil:
		return jobs.Result{Status: jobs.Killed, Answer: answer, Detail: fmt.Sprintf("the %s agent (session %s) was stopped", agentName, id)}
	case end == nil:
		return jobs.Result{Status: jobs.Failed, Answer: answer, Detail: fmt.Sprintf("the %s agent (session %s) ended without finishing its turn", agentName, id)}
	case end.Reason == session.ReasonCompleted:
		if answer == "" {
			answer = "(The agent gave no answer.)"
		}
		return jobs.Result{Status: jobs.Completed, Answer: answer}
	case end.Reason == session.ReasonStepLimit:
		return jobs.Result{Status: jobs.Completed, Answer: answer, Detail: "stopped at its step limit before it finished"}
	default:
		msg := end.Reason
		if end.Err != nil {
			msg += ": " + end.Err.Error()
		}
		return jobs.Result{Status: jobs.Failed, Answer: answer, Detail: fmt.Sprintf("the %s agent (session %s) did not finish (%s)", agentName, id, msg)}
	}
}
