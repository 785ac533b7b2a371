package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// narrowState is the narrowings a tool recorded in the session's
// running turn (permission.NarrowRecord), guarded by Session.mu.
type narrowState struct {
	turn int
	list []permission.Narrowing
}

// recordTool is the Env.Record of the session's tools: it logs the
// record, and keeps a narrowing for the rest of the turn.
func (s *Session) recordTool(ctx context.Context, call *tools.Call, name string, data any) error {
	if err := s.record(ctx, call, name, data); err != nil {
		return err
	}
	if name == permission.NarrowRecord {
		var n permission.Narrowing
		if raw, err := json.Marshal(data); err == nil && json.Unmarshal(raw, &n) == nil {
			s.addNarrowing(s.turns(), n)
		}
	}
	return nil
}

func (s *Session) addNarrowing(turn int, n permission.Narrowing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.narrow.turn != turn {
		s.narrow = narrowState{turn: turn}
	}
	s.narrow.list = append(s.narrow.list, n)
}

// narrowings returns the narrowings of the running turn.
func (s *Session) narrowings() []permission.Narrowing {
	turn := s.turns()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.narrow.turn != turn {
		return nil
	}
	return append([]permission.Narrowing(nil), s.narrow.list...)
}

// narrowed reports whether a narrowing applies to the running turn.
func (s *Session) narrowed() bool { return len(s.narrowings()) > 0 }

// decideCall decides a call by the session's policy and the turn's
// narrowings. ok is false when neither applies: the call runs.
func (s *Session) decideCall(call *tools.Call) (d permission.Decision, ok bool) {
	pol, ns := s.policy(), s.narrowings()
	if pol == nil && len(ns) == 0 {
		return d, false
	}
	if pol != nil {
		d = pol.Decide(call)
	} else {
		d = permission.Decision{Outcome: permission.Allow, Reason: fmt.Sprintf("the %s call is allowed: the loop has no permission policy", call.Name)}
	}
	for _, n := range ns {
		if d.Outcome == permission.Deny || call.Name == loadToolsName {
			// load_tools only shows schemas: the calls of what it
			// loads are narrowed as any other.
			break
		}
		if allowed, why := n.Permits(call); !allowed {
			d = permission.Decision{Outcome: permission.Deny, Mode: d.Mode, Reason: why, Preview: d.Preview}
		}
	}
	return d, true
}

// restoreNarrowing rebuilds the narrowings of a resumed session's last
// turn from its log, so that a paused turn continued in another process
// keeps them.
func (s *Session) restoreNarrowing(events []session.Event) {
	turn := 0
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			turn++
		case *session.ToolRecord:
			if p.Name != permission.NarrowRecord {
				continue
			}
			var n permission.Narrowing
			if json.Unmarshal(p.Data, &n) == nil {
				s.addNarrowing(turn, n)
			}
		}
	}
}

// Recheck checks a call a tool middleware changed before it runs (the
// input a hook rewrote), as dispatch checked the model's call: the
// arguments against the tool's schema, then the session's permission
// policy and the turn's narrowings, with the loop's approver asked when
// the policy wants an answer. It returns nil when the call may run (its
// Spec and tool are then those of the new arguments), or the result to
// return instead of running it. The decision is logged. Outside a tool
// call of the loop it refuses the call: a changed call that cannot be
// checked does not run.
//
// A call that needs an answer and has no approver to ask is refused:
// the step's questions were asked before its calls ran, and a running
// call cannot pause the turn.
func Recheck(ctx context.Context, call *tools.Call) *harness.ToolResult {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil || call == nil {
		return harness.ErrorResult(harness.CodeDenied, "This call's arguments were changed before it ran, and the change could not be checked (no agent loop runs it), so it was not run. Nothing was changed by it.")
	}
	if res := t.stepTools().reg.Check(call); res != nil {
		return res
	}
	d, ok := t.s.decideCall(call)
	if !ok {
		return nil
	}
	rec := &session.PermissionDecided{Step: call.Step, CallID: call.ID, Name: call.Name, Outcome: string(d.Outcome),
		Rule: d.Rule, Mode: string(d.Mode), Reason: "its input was changed before it ran: " + d.Reason, By: byMode}
	if d.Rule != "" {
		rec.By = byRule
	}
	if d.Outcome == permission.Ask {
		rec.Outcome = string(permission.Deny)
		switch {
		case t.l.cfg.approver == nil:
			rec.Reason += "; it needs approval, and a call whose input changed as it was about to run cannot wait for an answer (allow it with a rule, or have the host configure an approver)"
		default:
			tc := harness.ToolCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments}
			t.s.approveMu.Lock()
			ans, err := askApprover(t.ctx, t.l.cfg.approver, permission.Request{Call: tc, Decision: d, Render: call.Spec.Render, Digest: callDigest(tc)})
			t.s.approveMu.Unlock()
			rec.By = byApprover
			switch {
			case err != nil:
				rec.Feedback = "the approver failed: " + err.Error()
			case ans.Allow:
				rec.Outcome, rec.By = string(permission.Allow), byUser
			default:
				rec.By, rec.Feedback = byUser, ans.Feedback
			}
		}
	}
	if err := t.s.append(ctx, rec); err != nil {
		return harness.ErrorResult(harness.CodeDenied, "This %s call was not run: its changed input was checked, but the decision could not be logged (%v). Nothing was changed by it.", call.Name, err)
	}
	if rec.Outcome == string(permission.Allow) {
		return nil
	}
	return denialResult(call.Name, strings.TrimSpace(rec.Reason), rec.By, rec.Feedback)
}

// Confirm asks the loop's approver whether a call may run although the
// policy allowed it, because a tool middleware wants an answer (a hook
// said "ask"; reason says why). It returns nil when the approver allows
// it, or the denial to return instead. The answer is logged. Without an
// approver, or outside a tool call of the loop, the call is denied: a
// running call cannot pause the turn to wait for an answer.
func Confirm(ctx context.Context, call *tools.Call, reason string) *harness.ToolResult {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil || call == nil {
		return harness.ErrorResult(harness.CodeDenied, "This call needed the user's approval (%s), and no one could be asked, so it was not run. Nothing was changed by it.", reason)
	}
	rec := &session.PermissionDecided{Step: call.Step, CallID: call.ID, Name: call.Name, Outcome: string(permission.Deny), By: byApprover, Reason: reason}
	if t.l.cfg.approver == nil {
		rec.By = byMode
		rec.Reason += "; it needs the user's approval, and this session has no approver to ask while a call runs (the host configures one with agent.WithApprover)"
	} else {
		tc := harness.ToolCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments}
		d := permission.Decision{Outcome: permission.Ask, Reason: reason}
		t.s.approveMu.Lock()
		ans, err := askApprover(t.ctx, t.l.cfg.approver, permission.Request{Call: tc, Decision: d, Render: call.Spec.Render, Digest: callDigest(tc)})
		t.s.approveMu.Unlock()
		switch {
		case err != nil:
			rec.Feedback = "the approver failed: " + err.Error()
		case ans.Allow:
			rec.Outcome, rec.By = string(permission.Allow), byUser
		default:
			rec.By, rec.Feedback = byUser, ans.Feedback
		}
	}
	if err := t.s.append(ctx, rec); err != nil {
		return harness.ErrorResult(harness.CodeDenied, "This %s call was not run: the answer about it could not be logged (%v). Nothing was changed by it.", call.Name, err)
	}
	if rec.Outcome == string(permission.Allow) {
		return nil
	}
	return denialResult(call.Name, rec.Reason, rec.By, rec.Feedback)
}
