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
	"github.com/go-harness/harness/tools/permission"
)

// pause is a turn's pause as the session keeps it: the step whose calls
// wait, the questions, and the decisions already made.
type pause struct {
	// reason is why the turn waits: session.ReasonAwaitingApproval,
	// ReasonAwaitingInput, ReasonAwaitingBudget or ReasonAwaitingTool.
	reason  string
	step    int
	asked   []session.PendingCall
	decided map[string]*session.PermissionDecided
	// output is the structured answer the paused turn asks for, if any:
	// its continuation asks for it too.
	output *outputSpec
	// inputs are the ask_user calls waiting for answers (awaiting_input),
	// or the external calls waiting for the host (awaiting_tool).
	inputs []string
	// spend is what was spent when a budget was reached, and base the
	// paused turn's part of it (awaiting_budget).
	spend *session.Spend
	base  spend
}

// errPaused ends dispatch when the step's calls wait for answers.
var errPaused = errors.New("agent: the step waits for approval")

// pauseStep ends a step whose calls wait for answers (asked, the
// questions to requests): it logs the questions, keeps the decisions
// made so far in the step and the answer the turn asks for, for the
// resolution, yields the ApprovalRequest and returns errPaused.
func (t *turn) pauseStep(step int, asked []session.PendingCall, requests []permission.Request, made map[string]*session.PermissionDecided) error {
	ar := &session.ApprovalRequested{Step: step, Calls: asked}
	if o := t.output; o != nil {
		ar.OutputName, ar.OutputSchema, ar.OutputRepaired = o.out.Name, o.out.Schema, o.repaired
	}
	if err := t.s.append(t.ctx, ar); err != nil {
		return fmt.Errorf("agent: logging the approval request: %w", err)
	}
	pz := &pause{reason: session.ReasonAwaitingApproval, step: step, asked: asked, decided: made, output: t.output}
	t.s.mu.Lock()
	t.s.paused = pz
	t.s.mu.Unlock()
	t.emit(&ApprovalRequest{Step: step, Requests: requests})
	return errPaused
}

// Pending returns the questions of a paused turn and those of the
// session's background sub-agents that wait for approval, or nil when no
// call waits. A background sub-agent's question has Origin set (its
// session, agent type and job) and its call's id qualified by the job's:
// "job3/call_t1_s2_0". Resolve takes the ids as Pending gives them.
func (s *Session) Pending() []permission.Request {
	s.mu.Lock()
	pz := s.paused
	s.mu.Unlock()
	var out []permission.Request
	if pz != nil && pz.reason == session.ReasonAwaitingApproval {
		calls := s.pendingCalls()
		for _, a := range pz.asked {
			if len(calls) == 0 {
				break // the turn waits for its background sub-agents: listed below
			}
			out = append(out, permission.Request{Call: calls[a.CallID], Digest: a.Digest, Decision: permission.Decision{
				Outcome: permission.Ask, Rule: a.Rule, Reason: a.Reason, Suggest: a.Suggest, Preview: a.Preview,
			}})
		}
	}
	return append(out, s.jobRequests()...)
}

// Resolve answers the calls a paused turn waits for and continues that
// turn where it stopped: the answers are logged, approved calls run,
// denied ones get their denial result, and the model is called next. It
// yields the turn's events as RunContent does. answers maps call ids
// (see Pending) to answers and must answer every waiting call; an answer
// with Remember adds that rule to the session's allow list. When no turn
// is paused, or an id does not wait, or one is missing, the only event is
// a TurnEnd with an error matching CodeNothingPending or
// harness.CodeInvalidArguments, and nothing is logged.
//
// Answers for a background sub-agent's calls (ids qualified by its job,
// as Pending gives them; all of one sub-agent's at once) go to that
// sub-agent, which goes on in the background and logs them in its own
// session. A turn that paused only because background sub-agents waited
// goes on too: the model is called next, or, when it had finished the
// turn, the turn ends. When no turn is paused and only background
// sub-agents wait, the only event is a TurnEnd with reason completed and
// no steps, and no turn is logged in this session.
//
// Answers bind to the calls asked about: each question keeps a digest
// of its call's name and arguments, and when the call in the log no
// longer has it, or an answer carries the digest (Request.Digest) of
// another call, the only event is a TurnEnd with an error matching
// CodeCallChanged, and nothing is logged or run. Two
// processes resolving the same session at once cannot both run its
// calls: the store lets one open it for appending (the other's
// ResumeSession fails with harness.CodeLocked), and once the first has
// answered, nothing waits (CodeNothingPending).
func (s *Session) Resolve(ctx context.Context, answers map[string]permission.Answer) iter.Seq2[Event, error] {
	return s.Answer(ctx, Answers{Approvals: answers})
}

// Answers answer what a paused turn waits for ([Session.Paused] says
// what): approvals, the user's answers to the model's questions, or a
// raised budget. Only the field of the pause's reason may be set.
type Answers struct {
	// Approvals answer the calls that wait for approval
	// (awaiting_approval), by call id: see Session.Pending and
	// Session.Resolve.
	Approvals map[string]permission.Answer
	// Input answers the questions of the ask_user calls that wait
	// (awaiting_input), by call id: one answer per question, in the
	// order asked. An answer is free text, or the label of a choice;
	// several labels of a multiple-choice question are joined by ", ".
	Input map[string][]string
	// Budget raises the budgets of a turn that reached one
	// (awaiting_budget): each cap that is higher than the session's
	// replaces it for the rest of the session, and is logged, so a
	// resumed session keeps it; a zero cap changes nothing. Nil continues the turn
	// when the loop's own Limits.Budget (a restarted program's, say) is
	// no longer reached.
	Budget *Budgets
	// Tools are the results of the calls of external tools that wait
	// (awaiting_tool, see WithExternalTools), by call id: every waiting
	// call's at once.
	Tools map[string]ToolAnswer
}

// Pause is what a paused turn waits for.
type Pause struct {
	// Reason is session.ReasonAwaitingApproval, ReasonAwaitingInput,
	// ReasonAwaitingBudget or ReasonAwaitingTool, as the turn's TurnEnd
	// said.
	Reason string
	// Step is the step the turn paused in (after, for a budget).
	Step int
	// Approvals are the calls waiting for approval (as Pending returns
	// them).
	Approvals []permission.Request
	// Questions are the ask_user calls waiting for the user's answers.
	Questions []InputRequest
	// Spend is what was spent when the budget was reached.
	Spend *session.Spend
	// Tools are the calls of external tools waiting for the host to run
	// them (awaiting_tool), in the order the model made them.
	Tools []harness.ToolCall
}

// Paused returns what the session's paused turn waits for, or nil when
// no turn is paused. A resumed session knows its pause from the log.
func (s *Session) Paused() *Pause {
	s.mu.Lock()
	pz := s.paused
	s.mu.Unlock()
	if pz == nil {
		if reqs := s.jobRequests(); len(reqs) > 0 {
			// Between turns, background sub-agents wait for answers.
			return &Pause{Reason: session.ReasonAwaitingApproval, Approvals: reqs}
		}
		return nil
	}
	p := &Pause{Reason: pz.reason, Step: pz.step, Approvals: s.Pending(), Spend: pz.spend}
	switch {
	case pz.reason == session.ReasonAwaitingTool:
		p.Tools = s.externalCalls(pz.inputs)
	case len(pz.inputs) > 0:
		p.Questions = s.inputRequests(pz.inputs)
	}
	return p
}

// Answer continues a paused turn with answers, as Resolve does for
// approvals: the answers are logged and the same turn goes on, yielding
// its events. When no turn is paused, or the answers do not fit what it
// waits for (another kind, an unknown id, a missing answer, a budget
// still reached), the only event is a TurnEnd with an error matching
// CodeNothingPending or harness.CodeInvalidArguments, and nothing is
// logged.
func (s *Session) Answer(ctx context.Context, answers Answers) iter.Seq2[Event, error] {
	return s.runTurn(ctx, func(t *turn) { t.resume(answers) })
}

// resume continues a paused turn with answers.
func (t *turn) resume(all Answers) {
	t.s.mu.Lock()
	pz := t.s.paused
	t.s.mu.Unlock()
	byJob, own := t.s.splitJobAnswers(all.Approvals)
	if err := checkJobAnswers(byJob); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	if pz == nil && len(byJob) > 0 && own == nil && all.Input == nil && all.Budget == nil {
		// Only background sub-agents waited: they go on.
		t.s.answerJobs(byJob)
		t.end(&TurnEnd{Reason: session.ReasonCompleted})
		return
	}
	if pz == nil {
		err := &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf("agent: no turn waits for an answer in session %s", t.s.Header().ID)}
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	if err := answersFit(pz, all); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	if pz.reason == session.ReasonAwaitingApproval && len(t.s.pendingCalls()) == 0 {
		// The turn waits for its background sub-agents only.
		if len(own) > 0 {
			err := &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf(
				"agent: no call with id %s waits for approval; the waiting calls are those Pending lists", strings.Join(sortedKeys(own), ", "))}
			t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
			return
		}
		t.s.answerJobs(byJob)
		t.resumeJobs(pz)
		return
	}
	switch pz.reason {
	case session.ReasonAwaitingBudget:
		t.resumeBudget(pz, all.Budget)
		return
	case session.ReasonAwaitingInput:
		t.resumeInput(pz, all.Input)
		return
	case session.ReasonAwaitingTool:
		t.resumeExternal(pz, all.Tools)
		return
	}
	answers := own
	if err := checkAnswers(pz, answers); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	pending := t.s.pendingCalls()
	if err := checkBinding(pz, pending, answers); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	t.s.answerJobs(byJob)
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
		t.emit(decisionEvent(d.(*session.PermissionDecided), pending[d.(*session.PermissionDecided).CallID]))
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
			t.finish(t.pauseReason(), nil)
			return
		}
		t.finish(session.ReasonError, err)
		return
	}
	t.emit(&StepEnd{Step: pz.step, Finish: "tool_calls", ToolCalls: len(calls)})
	t.loop()
}

// pauseReason is the reason of the pause the turn just made.
func (t *turn) pauseReason() string {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.s.paused != nil {
		return t.s.paused.reason
	}
	return session.ReasonAwaitingApproval
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// answersFit reports answers of another kind than the pause waits for.
func answersFit(pz *pause, a Answers) error {
	var given []string
	if a.Approvals != nil && pz.reason != session.ReasonAwaitingApproval {
		given = append(given, "approvals")
	}
	if a.Input != nil && pz.reason != session.ReasonAwaitingInput {
		given = append(given, "input")
	}
	if a.Budget != nil && pz.reason != session.ReasonAwaitingBudget {
		given = append(given, "a budget")
	}
	if a.Tools != nil && pz.reason != session.ReasonAwaitingTool {
		given = append(given, "tool results")
	}
	if len(given) == 0 {
		return nil
	}
	return &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf(
		"agent: the paused turn waits for %s, and the answers give %s: answer what Session.Paused says it waits for", waitsFor(pz.reason), strings.Join(given, " and "))}
}

func waitsFor(reason string) string {
	switch reason {
	case session.ReasonAwaitingInput:
		return "the user's answers to its questions (Answers.Input)"
	case session.ReasonAwaitingBudget:
		return "a raised budget (Answers.Budget)"
	case session.ReasonAwaitingTool:
		return "the results of its external calls (Answers.Tools)"
	}
	return "approvals (Answers.Approvals)"
}

// resumeBudget continues a turn paused at its budget, raised by r.
func (t *turn) resumeBudget(pz *pause, r *Budgets) {
	if err := t.raiseBudget(pz, r); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	t.s.mu.Lock()
	t.s.paused = nil
	t.s.mu.Unlock()
	t.steps, t.base, t.output = pz.step, pz.base, pz.output
	t.loop()
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
		return &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf(
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

// checkBinding reports an answer given for a call that is no longer the
// one asked about: the logged call lost its digest (its name or
// arguments changed), or the answer carries the digest of another call.
func checkBinding(pz *pause, pending map[string]harness.ToolCall, answers map[string]permission.Answer) error {
	for _, a := range pz.asked {
		call, ok := pending[a.CallID]
		if !ok {
			return &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf(
				"agent: the call %s asked about no longer waits in the session's log; nothing was run: read Pending again", a.CallID)}
		}
		if a.Digest != "" && callDigest(call) != a.Digest {
			return &harness.Error{Code: CodeCallChanged, Message: fmt.Sprintf(
				"agent: the logged %s call %s is not the call that was asked about (its name or arguments changed since the question); no answer was applied and nothing ran", call.Name, a.CallID)}
		}
		if ans := answers[a.CallID]; ans.Digest != "" && ans.Digest != a.Digest {
			return &harness.Error{Code: CodeCallChanged, Message: fmt.Sprintf(
				"agent: the answer for %s was given for another version of the call (its digest is not the question's); no answer was applied and nothing ran: answer the current question from Pending", a.CallID)}
		}
	}
	return nil
}

// callDigest identifies a call by its name and arguments as logged.
func callDigest(c harness.ToolCall) string {
	h := sha256.New()
	h.Write([]byte(c.Name))
	h.Write([]byte{0})
	h.Write([]byte(c.Arguments))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
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
		if pz.reason == session.ReasonAwaitingInput {
			res = harness.ErrorResult(harness.CodeNotRun,
				"The user did not answer these questions: they sent a new message instead. Ask again if the answers are still needed.")
		}
		if pz.reason == session.ReasonAwaitingTool {
			res = harness.ErrorResult(harness.CodeNotRun,
				"This %s call was not run: it was waiting to be run by the host when the user sent a new message. Nothing was changed by it; make it again if it is still needed.", c.Name)
		}
		logs = append(logs, &session.ToolFinished{Step: pz.step, CallID: c.ID, Name: c.Name, Result: *res})
	}
	return t.s.append(t.ctx, logs...)
}

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
		case *session.BudgetSet:
			s.raised = Budgets{Turn: Budget{Cost: p.TurnCost, Tokens: p.TurnTokens}, Session: Budget{Cost: p.SessionCost, Tokens: p.SessionTokens}}
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
	switch end.Reason {
	case session.ReasonAwaitingApproval, session.ReasonAwaitingInput, session.ReasonAwaitingBudget, session.ReasonAwaitingTool:
	default:
		return false
	}
	for _, e := range events[lastEnd+1:] {
		switch e.Data.(type) {
		case *session.PermissionDecided, *session.ToolStarted, *session.ToolFinished, *session.ModelRequest, *session.AssistantMessage, *session.BudgetSet:
			return true
		}
	}
	if end.Reason != session.ReasonAwaitingApproval {
		s.restorePause(events[:lastEnd], end.Reason)
		return false
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
	pz := &pause{reason: session.ReasonAwaitingApproval, step: ask.Step, asked: ask.Calls, decided: map[string]*session.PermissionDecided{}}
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

// restorePause rebuilds the pause a resumed session's last turn ended in
// for input or budget from its Paused event, the last before the end.
func (s *Session) restorePause(events []session.Event, reason string) {
	var p *session.Paused
	for i := len(events) - 1; i >= 0; i-- {
		if q, ok := events[i].Data.(*session.Paused); ok {
			p = q
			break
		}
		if _, ok := events[i].Data.(*session.UserMessage); ok {
			break
		}
	}
	if p == nil || p.Reason != reason {
		s.logger.Warn("the log's last turn ended paused, but its pause is not in the log; nothing waits for an answer", "reason", reason)
		return
	}
	pz := &pause{reason: reason, step: p.Step, inputs: p.Calls, spend: p.Spend}
	if p.Spend != nil {
		pz.base = spend{cost: p.Spend.TurnCost, tokens: p.Spend.TurnTokens}
	}
	if len(p.OutputSchema) > 0 {
		spec, err := newOutputSpec(model.Output{Name: p.OutputName, Schema: p.OutputSchema})
		if err != nil {
			s.logger.Warn("the paused turn's output schema in the log does not compile; its continuation asks for no structured answer", "error", err)
		} else {
			spec.repaired = p.OutputRepaired
			pz.output = spec
		}
	}
	s.paused = pz
}

// answerIDs compares the call ids an answer gives with those that wait:
// unknown are the ids it gives that do not wait, missing those that wait
// and it lacks, each sorted.
func answerIDs[V any](waiting []string, in map[string]V) (unknown, missing []string) {
	want := make(map[string]bool, len(waiting))
	for _, id := range waiting {
		want[id] = true
	}
	for id := range in {
		if !want[id] {
			unknown = append(unknown, id)
		}
	}
	for id := range want {
		if _, ok := in[id]; !ok {
			missing = append(missing, id)
		}
	}
	sort.Strings(unknown)
	sort.Strings(missing)
	return unknown, missing
}
