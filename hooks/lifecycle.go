package hooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/tools/permission"
)

// Lifecycle returns the loop's lifecycle calls that run the session and
// turn events' hooks (agent.WithLifecycle):
//
//   - SessionStart (source startup or resume) before a session's first
//     turn, and SubagentStart for a sub-agent's session; what a hook
//     prints on exit 0 (or its additionalContext) reaches the model.
//   - UserPromptSubmit before the user's message is logged: exit 2,
//     "decision": "block" or "continue": false refuses the message (the
//     reason goes to the host, not the model); stdout on exit 0, or
//     additionalContext, reaches the model after the message.
//   - Stop when the model has answered without tools (SubagentStop in
//     a sub-agent's session): exit 2 (standard error) or "decision":
//     "block" (reason) keeps the turn going with the reason for the
//     model; stop_hook_active tells the hook it already did this turn.
//   - PreCompact (trigger auto) before a compaction.
//   - SessionEnd (reason other) when a session closes.
func (r *Runner) Lifecycle() agent.Lifecycle {
	return agent.Lifecycle{
		SessionStart: r.sessionStart,
		Prompt:       r.prompt,
		Stop:         r.stop,
		Compact:      r.compact,
		SessionEnd:   r.sessionEnd,
	}
}

// agentType returns the agent type of a sub-agent's session.
func (r *Runner) agentType(info agent.SessionInfo) string {
	r.agentsMu.Lock()
	defer r.agentsMu.Unlock()
	return r.agents[info.ParentCall]
}

func (r *Runner) sessionStart(ctx context.Context, info agent.SessionInfo) agent.Verdict {
	dir, project := r.dirs(nil, info.Cwd)
	if info.Depth > 0 {
		ty := r.agentType(info)
		in := r.common(SubagentStart, info.SessionID, dir)
		in["agent_id"], in["agent_type"] = info.SessionID, ty
		return r.contextVerdict(ctx, SubagentStart, []string{ty}, dir, project, in, false)
	}
	source := "startup"
	if info.Resumed {
		source = "resume"
	}
	in := r.common(SessionStart, info.SessionID, dir)
	in["source"], in["model"] = source, info.Model
	return r.contextVerdict(ctx, SessionStart, []string{source}, dir, project, in, true)
}

func (r *Runner) prompt(ctx context.Context, info agent.PromptInfo) agent.Verdict {
	if info.Depth > 0 {
		return agent.Verdict{} // a sub-agent's task is not a user's prompt
	}
	dir, project := r.dirs(nil, info.Cwd)
	in := r.common(UserPromptSubmit, info.SessionID, dir)
	in["prompt"] = info.Prompt
	runs := r.fire(ctx, UserPromptSubmit, nil, dir, project, in)
	var v agent.Verdict
	var ctxs, reasons []string
	for _, f := range runs {
		if blocked, why := f.blocked(); blocked {
			f.decided, f.reason = "block", why
			reasons = append(reasons, orDefault(why, "a UserPromptSubmit hook refused it"))
		} else if c := contextOf(f, true); c != "" {
			f.decided, f.reason = "context", c
			ctxs = append(ctxs, c)
		}
		r.record(ctx, UserPromptSubmit, f, "", "")
	}
	if len(reasons) > 0 {
		return agent.Verdict{Block: true, Reason: strings.Join(reasons, "; ")}
	}
	v.Context = strings.Join(ctxs, "\n\n")
	return v
}

func (r *Runner) stop(ctx context.Context, info agent.StopInfo) agent.Verdict {
	dir, project := r.dirs(nil, info.Cwd)
	ev, names := Stop, []string(nil)
	in := r.common(Stop, info.SessionID, dir)
	if info.Depth > 0 {
		ev = SubagentStop
		ty := r.agentType(info.SessionInfo)
		names = []string{ty}
		in = r.common(SubagentStop, info.SessionID, dir)
		in["agent_id"], in["agent_type"], in["agent_transcript_path"] = info.SessionID, ty, in["transcript_path"]
	}
	in["stop_hook_active"] = info.Active
	in["last_assistant_message"] = info.Answer
	runs := r.fire(ctx, ev, names, dir, project, in)
	var reasons []string
	for _, f := range runs {
		blocked, why := f.blocked()
		if blocked && f.out != nil && f.out.Continue != nil && !*f.out.Continue {
			blocked = false // continue false ends the turn, as it is ending anyway
		}
		if blocked {
			f.decided, f.reason = "continue", why
			reasons = append(reasons, orDefault(why, "A stop hook asks you to continue."))
		}
		r.record(ctx, ev, f, "", "")
	}
	if len(reasons) == 0 {
		return agent.Verdict{}
	}
	return agent.Verdict{Block: true, Reason: fmt.Sprintf("A %s hook kept this turn going: %s", ev, strings.Join(reasons, "\n"))}
}

func (r *Runner) compact(ctx context.Context, info agent.CompactInfo) {
	dir, project := r.dirs(nil, info.Cwd)
	in := r.common(PreCompact, info.SessionID, dir)
	in["trigger"], in["custom_instructions"] = info.Trigger, ""
	for _, f := range r.fire(ctx, PreCompact, []string{info.Trigger}, dir, project, in) {
		r.record(ctx, PreCompact, f, "", "")
	}
}

func (r *Runner) sessionEnd(ctx context.Context, info agent.SessionInfo) {
	if info.Depth > 0 {
		return
	}
	dir, project := r.dirs(nil, info.Cwd)
	in := r.common(SessionEnd, info.SessionID, dir)
	in["reason"] = "other"
	for _, f := range r.fire(ctx, SessionEnd, []string{"other"}, dir, project, in) {
		r.record(ctx, SessionEnd, f, "", "")
	}
}

// contextVerdict runs hooks whose output is context for the model.
func (r *Runner) contextVerdict(ctx context.Context, ev Event, names []string, dir, project string, in map[string]any, plain bool) agent.Verdict {
	var ctxs []string
	for _, f := range r.fire(ctx, ev, names, dir, project, in) {
		if c := contextOf(f, plain); c != "" {
			f.decided, f.reason = "context", c
			ctxs = append(ctxs, c)
		}
		r.record(ctx, ev, f, "", "")
	}
	return agent.Verdict{Context: strings.Join(ctxs, "\n\n")}
}

// contextOf returns the context a run adds: its additionalContext, or,
// when plain, what it printed on exit 0 that is not JSON.
func contextOf(f *fired, plain bool) string {
	if c := f.context(); c != "" {
		return c
	}
	if plain && f.out == nil && f.warn == "" && f.run.exit != nil && *f.run.exit == 0 {
		return strings.TrimSpace(f.run.stdout)
	}
	return ""
}

// Observer returns a turn observer that runs Notification hooks
// (notification_type permission_prompt) when a turn pauses for
// approval. They run in the background, bounded by their timeouts, so
// the turn ends at once.
func (r *Runner) Observer() agent.TurnObserver {
	return func(ctx context.Context, info agent.TurnInfo) (context.Context, func(agent.Event)) {
		if len(r.settings.Hooks[Notification]) == 0 || r.settings.Disabled {
			return nil, nil
		}
		return nil, func(ev agent.Event) {
			ar, ok := ev.(*agent.ApprovalRequest)
			if !ok || len(ar.Requests) == 0 {
				return
			}
			msg := fmt.Sprintf("The agent needs your permission to use %s", permission.ClaudeName(ar.Requests[0].Call.Name))
			bg := context.WithoutCancel(ctx)
			go r.notify(bg, info.SessionID, msg)
		}
	}
}

// notify runs the Notification hooks.
func (r *Runner) notify(ctx context.Context, sessionID, msg string) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.MaxTimeout+5*time.Second)
	defer cancel()
	dir, project := r.dirs(nil, "")
	in := r.common(Notification, sessionID, dir)
	in["message"], in["notification_type"] = msg, "permission_prompt"
	for _, f := range r.fire(ctx, Notification, []string{"permission_prompt"}, dir, project, in) {
		r.record(ctx, Notification, f, "", "")
	}
}

// Approver wraps a host's synchronous approver with the
// PermissionRequest hooks: before the user is asked, each matching hook
// may answer ("hookSpecificOutput": {"decision": {"behavior": "allow"}}
// or "deny" with a message; exit 2 denies with its standard error), and
// the first answer stands; without one, Notification hooks run and next
// asks. An updatedInput in an allow is not applied (a question's answer
// cannot change the call; a PreToolUse hook can) and is logged. With a
// nil next it returns nil: a loop without an approver pauses instead of
// asking, and no hook answers for the user then.
func (r *Runner) Approver(next permission.Approver) permission.Approver {
	if next == nil {
		return nil
	}
	return func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		dir, project := r.dirs(nil, "")
		claude := permission.ClaudeName(req.Call.Name)
		in := r.common(PermissionRequest, "", dir)
		var args map[string]any
		_ = jsonUnmarshal(req.Call.Arguments, &args)
		in["tool_name"], in["tool_input"], in["tool_use_id"] = claude, args, req.Call.ID
		if req.Decision.Suggest != "" {
			in["permission_suggestions"] = []map[string]any{{"type": "addRules", "rules": []string{req.Decision.Suggest}, "behavior": "allow"}}
		}
		var answer *permission.Answer
		for _, f := range r.fire(ctx, PermissionRequest, []string{claude, req.Call.Name}, dir, project, in) {
			if answer == nil {
				if blocked, why := f.blocked(); blocked {
					f.decided, f.reason = "deny", why
					answer = &permission.Answer{Feedback: orDefault(why, "a PermissionRequest hook denied it")}
				} else if f.out != nil && f.out.HookSpecificOutput != nil && f.out.HookSpecificOutput.Decision != nil {
					d := f.out.HookSpecificOutput.Decision
					switch d.Behavior {
					case "allow":
						f.decided = "allow"
						if len(d.UpdatedInput) > 0 && string(d.UpdatedInput) != "null" {
							f.warn = "its updatedInput was not applied: an answer cannot change the call"
						}
						answer = &permission.Answer{Allow: true, Digest: req.Digest}
					case "deny":
						f.decided, f.reason = "deny", d.Message
						answer = &permission.Answer{Feedback: orDefault(d.Message, "a PermissionRequest hook denied it"), Digest: req.Digest}
					}
				}
			}
			r.record(ctx, PermissionRequest, f, req.Call.Name, req.Call.ID)
		}
		if answer != nil {
			return *answer, nil
		}
		r.notify(ctx, "", fmt.Sprintf("The agent needs your permission to use %s", claude))
		return next(ctx, req)
	}
}
