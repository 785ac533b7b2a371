package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// WithPermissions decides every tool call before it runs by p: allowed
// calls run, denied ones get a result saying what was denied and why,
// and calls that need an answer go to the approver (WithApprover) or,
// without one, pause the turn (see Session.Resolve). Every decision is
// logged. Without this option every call runs.
func WithPermissions(p *permission.Policy) Option { return func(c *config) { c.policy = p } }

// WithApprover sets the synchronous approver asked about calls the
// policy wants an answer for. Without one, such calls pause the turn.
func WithApprover(a permission.Approver) Option { return func(c *config) { c.approver = a } }

// ApprovalRequest says the turn is pausing: the calls of the step wait
// for answers that Session.Resolve gives, in this process or in another
// one after ResumeSession. The TurnEnd that follows has reason
// awaiting_approval.
type ApprovalRequest struct {
	Step     int                  `json:"step"`
	Requests []permission.Request `json:"requests"`
}

// PermissionDecision reports the decision on a call, before it runs or
// instead of running it: every denial, every answer, and every call an
// allow rule let through. Calls the mode lets run without a question
// (calls without side effects, everything in bypass mode) are logged but
// yield no event.
type PermissionDecision struct {
	Step int              `json:"step"`
	Call harness.ToolCall `json:"call"`
	// Outcome is allow or deny.
	Outcome permission.Outcome `json:"outcome"`
	// By is who decided: rule, mode, user or approver.
	By       string `json:"by"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	// Remember is the rule the answer added to the session's allow list.
	Remember string `json:"remember,omitempty"`
}

func (*ApprovalRequest) kind() string    { return "approval_request" }
func (*PermissionDecision) kind() string { return "permission_decision" }

// Who decided a call.
const (
	byRule     = "rule"
	byMode     = "mode"
	byUser     = "user"
	byApprover = "approver"
)

// pause is a turn's pause as the session keeps it: the step whose calls
// wait, the questions, and the decisions already made.
type pause struct {
	step    int
	asked   []session.PendingCall
	decided map[string]*session.PermissionDecided
	// output is the structured answer the paused turn asks for, if any:
	// its continuation asks for it too.
	output *outputSpec
}

// errPaused ends dispatch when the step's calls wait for answers.
var errPaused = errors.New("agent: the step waits for approval")

// policy returns the session's policy: the loop's, with the rules the
// session's answers remembered.
func (s *Session) policy() *permission.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pol == nil {
		s.pol = s.loop.cfg.policy
	}
	return s.pol
}

// remember adds a remembered rule to the session's policy.
func (s *Session) remember(rule string) error {
	p := s.policy()
	q, err := p.WithAllow(rule)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.pol = q
	s.mu.Unlock()
	return nil
}

// Pending returns the questions of a paused turn, or nil when no call
// waits for approval.
func (s *Session) Pending() []permission.Request {
	s.mu.Lock()
	pz := s.paused
	s.mu.Unlock()
	if pz == nil {
		return nil
	}
	calls := s.pendingCalls()
	out := make([]permission.Request, 0, len(pz.asked))
	for _, a := range pz.asked {
		out = append(out, permission.Request{Call: calls[a.CallID], Digest: a.Digest, Decision: permission.Decision{
			Outcome: permission.Ask, Rule: a.Rule, Reason: a.Reason, Suggest: a.Suggest, Preview: a.Preview,
		}})
	}
	return out
}

// callDigest identifies a call by its name and arguments as logged.
func callDigest(c harness.ToolCall) string {
	h := sha256.New()
	h.Write([]byte(c.Name))
	h.Write([]byte{0})
	h.Write([]byte(c.Arguments))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// checkBinding reports an answer given for a call that is no longer the
// one asked about: the logged call lost its digest (its name or
// arguments changed), or the answer carries the digest of another call.
func checkBinding(pz *pause, pending map[string]harness.ToolCall, answers map[string]permission.Answer) error {
	for _, a := range pz.asked {
		call, ok := pending[a.CallID]
		if !ok {
			return &harness.Error{Code: codeNothingPending, Message: fmt.Sprintf(
				"agent: the call %s asked about no longer waits in the session's log; nothing was run: read Pending again", a.CallID)}
		}
		if a.Digest != "" && callDigest(call) != a.Digest {
			return &harness.Error{Code: codeCallChanged, Message: fmt.Sprintf(
				"agent: the logged %s call %s is not the call that was asked about (its name or arguments changed since the question); no answer was applied and nothing ran", call.Name, a.CallID)}
		}
		if ans := answers[a.CallID]; ans.Digest != "" && ans.Digest != a.Digest {
			return &harness.Error{Code: codeCallChanged, Message: fmt.Sprintf(
				"agent: the answer for %s was given for another version of the call (its digest is not the question's); no answer was applied and nothing ran: answer the current question from Pending", a.CallID)}
		}
	}
	return nil
}

// pendingCalls returns the calls of the last step without a result, by
// id.
func (s *Session) pendingCalls() map[string]harness.ToolCall {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := map[string]harness.ToolCall{}
	for _, c := range s.hist.Pending() {
		out[c.ID] = c
	}
	return out
}

// Resolve answers the calls a paused turn waits for and continues that
// turn where it stopped: the answers are logged, approved calls run,
// denied ones get their denial result, and the model is called next. It
// yields the turn's events as RunContent does. answers maps call ids
// (see Pending) to answers and must answer every waiting call; an answer
// with Remember adds that rule to the session's allow list. When no turn
// is paused, or an id does not wait, or one is missing, the only event is
// a TurnEnd with an error matching codeNothingPending or
// harness.CodeInvalidArguments, and nothing is logged.
//
// Answers bind to the calls asked about: each question keeps a digest
// of its call's name and arguments, and when the call in the log no
// longer has it, or an answer carries the digest (Request.Digest) of
// another call, the only event is a TurnEnd with an error matching
// harness.Code("call_changed"), and nothing is logged or run. Two
// processes resolving the same session at once cannot both run its
// calls: the store lets one open it for appending (the other's
// ResumeSession fails with harness.CodeLocked), and once the first has
// answered, nothing waits (harness.Code("nothing_pending")).
func (s *Session) Resolve(ctx context.Context, answers map[string]permission.Answer) iter.Seq2[Event, error] {
	return s.runTurn(ctx, func(t *turn) { t.resumeSafely(answers) })
}

// checkAnswers reports what is wrong with answers for pz.
func checkAnswers(pz *pause, answers map[string]permission.Answer) error {
	want := map[string]bool{}
	for _, a := range pz.asked {
		want[a.CallID] = true
	}
	var unknown, missing []string
	for id := range answers {
		if !want[id] {
			unknown = append(unknown, id)
		}
	}
	for id := range want {
		if _, ok := answers[id]; !ok {
			missing = append(missing, id)
		}
	}
	sort.Strings(unknown)
	sort.Strings(missing)
	switch {
	case len(unknown) > 0:
		return &harness.Error{Code: codeNothingPending, Message: fmt.Sprintf(
			"agent: no call with id %s waits for approval; the waiting calls are %s", strings.Join(unknown, ", "), ids(pz.asked))}
	case len(missing) > 0:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(
			"agent: the call %s still waits for approval: answer every waiting call (%s) at once", strings.Join(missing, ", "), ids(pz.asked))}
	}
	return nil
}

func ids(calls []session.PendingCall) string {
	var out []string
	for _, c := range calls {
		out = append(out, c.CallID)
	}
	return strings.Join(out, ", ")
}

// resume continues a paused turn with answers.
func (t *turn) resume(answers map[string]permission.Answer) {
	t.s.mu.Lock()
	pz := t.s.paused
	t.s.mu.Unlock()
	if pz == nil {
		err := &harness.Error{Code: codeNothingPending, Message: fmt.Sprintf("agent: no call waits for approval in session %s", t.s.Header().ID)}
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	if err := checkAnswers(pz, answers); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	pending := t.s.pendingCalls()
	if err := checkBinding(pz, pending, answers); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	var logs []session.Payload
	for _, a := range pz.asked {
		ans := answers[a.CallID]
		d := &session.PermissionDecided{Step: pz.step, CallID: a.CallID, Name: a.Name, Outcome: string(permission.Deny), By: byUser,
			Rule: a.Rule, Reason: a.Reason, Feedback: ans.Feedback}
		if ans.Allow {
			d.Outcome = string(permission.Allow)
		}
		if ans.Remember != "" {
			if err := t.s.remember(ans.Remember); err != nil {
				t.s.logger.Warn("a remembered rule does not parse; it is not kept", "rule", ans.Remember, "error", err)
			} else {
				d.Remember = ans.Remember
			}
		}
		pz.decided[a.CallID] = d
		logs = append(logs, d)
	}
	if err := t.s.append(t.ctx, logs...); err != nil {
		t.finish(session.ReasonError, fmt.Errorf("agent: logging the answers: %w", err))
		return
	}
	for _, d := range logs {
		t.emitDecision(d.(*session.PermissionDecided), pending[d.(*session.PermissionDecided).CallID])
	}
	t.s.mu.Lock()
	t.s.paused = nil
	t.s.mu.Unlock()
	// The step's calls, in the order the model made them.
	var calls []harness.ToolCall
	t.s.logMu.Lock()
	calls = t.s.hist.Pending()
	t.s.logMu.Unlock()
	t.steps = pz.step
	t.preset = pz.decided
	t.output = pz.output
	err := t.dispatch(pz.step, calls)
	t.preset = nil
	if err != nil {
		if errors.Is(err, errPaused) {
			t.finish(session.ReasonAwaitingApproval, nil)
			return
		}
		t.finish(session.ReasonError, err)
		return
	}
	t.emit(&StepEnd{Step: pz.step, Finish: "tool_calls", ToolCalls: len(calls)})
	t.loop()
}

// abandonPause answers the calls of a paused turn as not run, because a
// new user message moves the conversation on.
func (t *turn) abandonPause() error {
	t.s.mu.Lock()
	pz := t.s.paused
	t.s.paused = nil
	t.s.mu.Unlock()
	if pz == nil {
		return nil
	}
	t.s.logMu.Lock()
	calls := t.s.hist.Pending()
	t.s.logMu.Unlock()
	var logs []session.Payload
	for _, c := range calls {
		res := harness.ErrorResult(harness.CodeNotRun,
			"This %s call was not run: it was waiting for approval when the user sent a new message instead of an answer. Nothing was changed by it; make it again if it is still needed.", c.Name)
		logs = append(logs, &session.ToolFinished{Step: pz.step, CallID: c.ID, Name: c.Name, Result: *res})
	}
	return t.s.append(t.ctx, logs...)
}

// decide makes the decision for each call the registry accepted, before
// anything of the step runs. Denied calls get their result in results;
// when some call needs an answer that no approver gives, the questions
// are logged and errPaused is returned: nothing of the step runs.
func (t *turn) decide(step int, calls []harness.ToolCall, prepared []*tools.Call, results []*harness.ToolResult) error {
	if t.s.policy() == nil && t.preset == nil && !t.s.narrowed() {
		return nil
	}
	var asked []session.PendingCall
	var requests []permission.Request
	made := map[string]*session.PermissionDecided{}
	for i, call := range prepared {
		if results[i] != nil {
			continue
		}
		if d, ok := t.preset[call.ID]; ok {
			if d.Outcome != string(permission.Allow) {
				results[i] = denialResult(call.Name, d.Reason, d.By, d.Feedback)
			}
			continue
		}
		d, ok := t.s.decideCall(call) // the policy, and the turn's narrowings
		if !ok {
			continue // a pause logged by a loop with permissions, resolved by one without
		}
		rec := &session.PermissionDecided{Step: step, CallID: call.ID, Name: call.Name, Outcome: string(d.Outcome),
			Rule: d.Rule, Mode: string(d.Mode), Reason: d.Reason, By: byMode}
		if d.Rule != "" {
			rec.By = byRule
		}
		if d.Outcome == permission.Ask {
			req := permission.Request{Call: calls[i], Decision: d, Render: call.Spec.Render, Digest: callDigest(calls[i])}
			switch {
			case t.l.cfg.approver == nil && t.l.cfg.depth > 0:
				// A sub-agent cannot pause its parent's turn: the policy's
				// ask becomes its denial, saying what would allow it.
				rec.Outcome, rec.Reason = string(permission.Deny), subAgentAskReason(d)
				t.s.logger.Warn("a sub-agent's call needs approval and the loop has no approver; it is denied (set agent.WithApprover, or an allow rule, to let sub-agents make such calls)",
					"tool", call.Name, "call", call.ID, "suggest", d.Suggest)
			case t.l.cfg.approver == nil:
				asked = append(asked, session.PendingCall{CallID: call.ID, Name: call.Name, Preview: d.Preview, Rule: d.Rule, Reason: d.Reason, Suggest: d.Suggest, Digest: req.Digest})
				requests = append(requests, req)
				continue
			default:
				ans, err := t.approve(req)
				if t.ctx.Err() != nil {
					return t.ctx.Err()
				}
				rec.By, rec.Outcome = byApprover, string(permission.Deny)
				switch {
				case err != nil:
					rec.Feedback = "the approver failed: " + err.Error()
				case ans.Allow:
					rec.Outcome = string(permission.Allow)
					rec.By = byUser
				default:
					rec.By, rec.Feedback = byUser, ans.Feedback
				}
				if err == nil && ans.Remember != "" {
					if rerr := t.s.remember(ans.Remember); rerr != nil {
						t.s.logger.Warn("a remembered rule does not parse; it is not kept", "rule", ans.Remember, "error", rerr)
					} else {
						rec.Remember = ans.Remember
					}
				}
			}
		}
		if err := t.s.append(t.ctx, rec); err != nil {
			return fmt.Errorf("agent: logging a permission decision: %w", err)
		}
		made[call.ID] = rec
		if rec.By != byMode || rec.Outcome != string(permission.Allow) {
			t.emitDecision(rec, calls[i])
		}
		if rec.Outcome != string(permission.Allow) {
			results[i] = denialResult(call.Name, rec.Reason, rec.By, rec.Feedback)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	ar := &session.ApprovalRequested{Step: step, Calls: asked}
	if o := t.output; o != nil {
		ar.OutputName, ar.OutputSchema, ar.OutputRepaired = o.out.Name, o.out.Schema, o.repaired
	}
	if err := t.s.append(t.ctx, ar); err != nil {
		return fmt.Errorf("agent: logging the approval request: %w", err)
	}
	// The decisions made so far in this step, and the answer the turn
	// asks for, are kept for the resolution.
	pz := &pause{step: step, asked: asked, decided: made, output: t.output}
	t.s.mu.Lock()
	t.s.paused = pz
	t.s.mu.Unlock()
	t.emit(&ApprovalRequest{Step: step, Requests: requests})
	return errPaused
}

// subAgentAskReason is the denial reason of a sub-agent's call the policy
// wanted an answer for, with no approver to give it.
func subAgentAskReason(d permission.Decision) string {
	var b strings.Builder
	if d.Reason != "" {
		b.WriteString(d.Reason)
	} else {
		b.WriteString("it needs approval")
	}
	b.WriteString("; a sub-agent cannot pause its parent's turn to wait for an answer: the loop has no approver (the host configures one with agent.WithApprover, or allows calls like this with a permission rule")
	if d.Suggest != "" {
		fmt.Fprintf(&b, " such as %s", d.Suggest)
	}
	b.WriteString("). Do without it, or say in your answer that the parent should make this call")
	return b.String()
}

// approve asks the approver, recovering a panic as an error.
func (t *turn) approve(req permission.Request) (ans permission.Answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the approver panicked: %v", p)
		}
	}()
	return t.l.cfg.approver(t.ctx, req)
}

func (t *turn) emitDecision(d *session.PermissionDecided, call harness.ToolCall) {
	t.emit(&PermissionDecision{Step: d.Step, Call: call, Outcome: permission.Outcome(d.Outcome), By: d.By, Rule: d.Rule,
		Reason: d.Reason, Feedback: d.Feedback, Remember: d.Remember})
}

// denialResult is what the model reads for a denied call.
func denialResult(name, reason, by, feedback string) *harness.ToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Permission denied: this %s call was not run, and nothing was changed by it. ", name)
	if by == byUser || by == byApprover {
		b.WriteString("The user denied it")
		if reason != "" {
			fmt.Fprintf(&b, " (it needed approval: %s)", reason)
		}
		b.WriteString(".")
	} else if reason != "" {
		b.WriteString(upperFirst(reason) + ".")
	}
	if feedback != "" {
		fmt.Fprintf(&b, " The user said: %q", feedback)
	}
	b.WriteString(" Do not retry the same call: take another approach, or ask the user to change the permissions if it is needed.")
	return &harness.ToolResult{IsError: true, Code: harness.CodeDenied, Content: []harness.Block{harness.TextBlock(b.String())}}
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// planReminder tells the model it is planning.
const planReminder = "Plan mode is on: this session is read-only. Calls that change files, run commands or have other side effects are denied. " +
	"Read and search what you need, then present your plan to the user and wait for approval before making changes."

// restorePermissions rebuilds, from the log of a resumed session, the
// rules its answers remembered and the pause its last turn ended in. It
// reports a pause whose continuation was cut off (answers or calls
// after the pause, and no end): that turn must be closed as interrupted.
func (s *Session) restorePermissions(events []session.Event) (cutOff bool) {
	var remembered []string
	lastEnd := -1
	for i, e := range events {
		switch p := e.Data.(type) {
		case *session.PermissionDecided:
			if p.Remember != "" {
				remembered = append(remembered, p.Remember)
			}
		case *session.TurnEnded:
			lastEnd = i
		}
	}
	if pol := s.loop.cfg.policy; pol != nil && len(remembered) > 0 {
		q, err := pol.WithAllow(remembered...)
		if err != nil {
			s.logger.Warn("a remembered rule of the log does not parse; the session's remembered rules are dropped", "error", err)
		} else {
			s.pol = q
		}
	}
	if lastEnd < 0 {
		return false
	}
	end := events[lastEnd].Data.(*session.TurnEnded)
	if end.Reason != session.ReasonAwaitingApproval {
		return false
	}
	for _, e := range events[lastEnd+1:] {
		switch e.Data.(type) {
		case *session.PermissionDecided, *session.ToolStarted, *session.ToolFinished, *session.ModelRequest, *session.AssistantMessage:
			return true
		}
	}
	var ask *session.ApprovalRequested
	for i := lastEnd - 1; i >= 0; i-- {
		if a, ok := events[i].Data.(*session.ApprovalRequested); ok {
			ask = a
			break
		}
		if _, ok := events[i].Data.(*session.AssistantMessage); ok {
			break
		}
	}
	if ask == nil {
		return false
	}
	pz := &pause{step: ask.Step, asked: ask.Calls, decided: map[string]*session.PermissionDecided{}}
	if len(ask.OutputSchema) > 0 {
		spec, err := newOutputSpec(model.Output{Name: ask.OutputName, Schema: ask.OutputSchema})
		if err != nil {
			s.logger.Warn("the paused turn's output schema in the log does not compile; its continuation asks for no structured answer", "error", err)
		} else {
			spec.repaired = ask.OutputRepaired
			pz.output = spec
		}
	}
	for i := lastEnd - 1; i >= 0; i-- {
		if _, ok := events[i].Data.(*session.AssistantMessage); ok {
			break
		}
		if d, ok := events[i].Data.(*session.PermissionDecided); ok && d.Step == ask.Step {
			if _, seen := pz.decided[d.CallID]; !seen {
				pz.decided[d.CallID] = d
			}
		}
	}
	s.paused = pz
	return false
}
