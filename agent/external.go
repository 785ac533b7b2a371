package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// WithExternalTools names tools whose calls the host runs, outside the
// loop: a durable workflow engine that runs each sub-agent (the task
// tool) as a workflow of its own, say. The model sees the tools as
// usual, and their calls are checked (arguments, permissions) as any
// call is; but instead of running one, the loop runs the step's other
// calls and pauses the turn durably: a TurnEnd with reason
// awaiting_tool, the calls in the log (Session.Paused lists them in
// Pause.Tools, after ResumeSession too). Session.Answer with
// Answers.Tools, a result for each waiting call, continues the same
// turn. Only a top-level session's calls wait: a sub-agent runs its
// calls itself. A name no tool of the loop has makes no call wait.
func WithExternalTools(names ...string) Option {
	return func(c *config) {
		if c.external == nil {
			c.external = map[string]bool{}
		}
		for _, n := range names {
			c.external[n] = true
		}
	}
}

// ToolAnswer is the host's result for a call of an external tool that
// waits (see WithExternalTools).
type ToolAnswer struct {
	// Result is what the model reads, as a tool's result.
	Result harness.ToolResult
	// Usage and Cost are what running the call spent on model calls (a
	// sub-agent's turn): they are logged and added to the session's
	// spending (Session.Usage and Session.Cost), so its budgets count
	// them. Cost is in the loop's price table's currency.
	Usage harness.Usage
	Cost  float64
}

// externalSpendRecord names the record of the spend an external call's
// answer brought (a session.ToolRecord with the call's tool and id).
const externalSpendRecord = "external_spend"

type externalSpendData struct {
	Usage harness.Usage `json:"usage"`
	Cost  float64       `json:"cost,omitempty"`
}

// externalSpend reads a record of an external call's spend.
func externalSpend(r *session.ToolRecord) (harness.Usage, float64, bool) {
	if r.Name != externalSpendRecord {
		return harness.Usage{}, 0, false
	}
	var d externalSpendData
	if json.Unmarshal(r.Data, &d) != nil {
		return harness.Usage{}, 0, false
	}
	return d.Usage, d.Cost, true
}

// deferExternal reports whether the call is one the host runs.
func (t *turn) deferExternal(c *tools.Call) bool {
	return t.l.cfg.depth == 0 && t.l.cfg.external[c.Name]
}

// pauseExternal ends a step whose external calls wait for the host: it
// logs the pause, keeps it and returns errPaused. The step's ask_user
// calls that wait too are asked once the external calls are answered.
func (t *turn) pauseExternal(step int, waiting []harness.ToolCall) error {
	ids := make([]string, len(waiting))
	for i, c := range waiting {
		ids[i] = c.ID
	}
	if err := t.pauseForCalls(step, session.ReasonAwaitingTool, ids); err != nil {
		return fmt.Errorf("agent: logging the external calls' pause: %w", err)
	}
	return errPaused
}

// pauseForCalls logs that the turn pauses at step for reason, waiting
// for the calls ids, and marks the session paused.
func (t *turn) pauseForCalls(step int, reason string, ids []string) error {
	p := &session.Paused{Step: step, Reason: reason, Calls: ids}
	if o := t.output; o != nil {
		p.OutputName, p.OutputSchema, p.OutputRepaired = o.out.Name, o.out.Schema, o.repaired
	}
	if err := t.s.append(t.ctx, p); err != nil {
		return err
	}
	t.s.mu.Lock()
	t.s.paused = &pause{reason: reason, step: step, inputs: ids, output: t.output}
	t.s.mu.Unlock()
	return nil
}

// notRunExternal closes the external calls of a cancelled step as not
// run.
func (t *turn) notRunExternal(step int, calls []harness.ToolCall) error {
	for _, c := range calls {
		res := harness.ErrorResult(harness.CodeNotRun, "This %s call was not run: the turn was cancelled before it was handed to the host.", c.Name)
		if err := t.finishCall(step, c, res, 0); err != nil {
			return err
		}
	}
	return nil
}

// externalCalls returns the waiting calls of ids, in order.
func (s *Session) externalCalls(ids []string) []harness.ToolCall {
	pending := s.pendingCalls()
	out := make([]harness.ToolCall, 0, len(ids))
	for _, id := range ids {
		if c, ok := pending[id]; ok {
			out = append(out, c)
		}
	}
	return out
}

// resumeExternal continues a turn whose external calls waited, with the
// host's results by call id.
func (t *turn) resumeExternal(pz *pause, in map[string]ToolAnswer) {
	calls := t.s.externalCalls(pz.inputs)
	if err := checkExternal(pz, calls, in); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	t.s.mu.Lock()
	t.s.paused = nil
	t.s.mu.Unlock()
	t.steps, t.output = pz.step, pz.output
	for _, c := range calls {
		a := in[c.ID]
		logs := []session.Payload{&session.ToolStarted{Step: pz.step, CallID: c.ID, Name: c.Name}}
		if a.Usage != (harness.Usage{}) || a.Cost != 0 {
			raw, err := json.Marshal(externalSpendData{Usage: a.Usage, Cost: a.Cost})
			if err != nil {
				t.finish(session.ReasonError, err)
				return
			}
			logs = append(logs, &session.ToolRecord{CallID: c.ID, Tool: c.Name, Name: externalSpendRecord, Data: raw})
		}
		// The start and the spend in one append: a crash cannot log one
		// without the other.
		if err := t.s.append(t.ctx, logs...); err != nil {
			t.finish(session.ReasonError, fmt.Errorf("agent: logging an external call's result: %w", err))
			return
		}
		if len(logs) > 1 {
			t.s.spend(a.Usage, a.Cost)
			t.base = t.base.plus(spendOf(a.Usage, a.Cost))
		}
		t.emit(&ToolCallStart{Step: pz.step, Call: c})
		res := a.Result
		res.CallID, res.Name = c.ID, c.Name
		if err := t.finishCall(pz.step, c, &res, 0); err != nil {
			t.finish(session.ReasonError, err)
			return
		}
	}
	// The step's questions for the user, if any, wait next.
	var ask []harness.ToolCall
	t.s.logMu.Lock()
	for _, c := range t.s.hist.Pending() {
		if t.deferInput(&tools.Call{ID: c.ID, Name: c.Name}) {
			ask = append(ask, c)
		}
	}
	t.s.logMu.Unlock()
	if len(ask) > 0 {
		if err := t.pauseInput(pz.step, ask); err != nil {
			t.finish(session.ReasonError, err)
			return
		}
		t.emit(&StepEnd{Step: pz.step, Finish: "tool_calls"})
		t.finish(session.ReasonAwaitingInput, nil)
		return
	}
	t.emit(&StepEnd{Step: pz.step, Finish: "tool_calls", ToolCalls: len(calls)})
	t.loop()
}

// checkExternal reports answers that do not fit the waiting calls.
func checkExternal(pz *pause, calls []harness.ToolCall, in map[string]ToolAnswer) error {
	if len(calls) != len(pz.inputs) {
		return &harness.Error{Code: CodeNothingPending, Message: "agent: the external calls are no longer waiting in the session's log; nothing was answered: read Paused again"}
	}
	unknown, missing := answerIDs(pz.inputs, in)
	switch {
	case len(unknown) > 0:
		return &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf("agent: no external call waits under the id %s; the waiting calls are %s", strings.Join(unknown, ", "), strings.Join(pz.inputs, ", "))}
	case len(missing) > 0:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("agent: the external calls %s still wait: answer every waiting call (%s) at once", strings.Join(missing, ", "), strings.Join(pz.inputs, ", "))}
	}
	for id, a := range in {
		if a.Usage.InputTokens < 0 || a.Usage.OutputTokens < 0 || !(a.Cost >= 0) {
			return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("agent: the answer for %s gives a negative or invalid spend (%+v, cost %v)", id, a.Usage, a.Cost)}
		}
	}
	return nil
}

// parentView is what a sub-agent's loop takes from its parent session:
// the permission policy with the rules its answers remembered, and the
// deferred tools it has loaded.
type parentView struct {
	policy *permission.Policy
	loaded []string
}

func (s *Session) view() parentView {
	return parentView{policy: s.policy(), loaded: s.LoadedTools()}
}

// viewOfLog is the parentView of a session from its log, read without
// opening the session.
func (l *Loop) viewOfLog(events []session.Event) parentView {
	v := parentView{policy: l.cfg.policy}
	var remembered []string
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.PermissionDecided:
			if p.Remember != "" {
				remembered = append(remembered, p.Remember)
			}
		case *session.ToolRecord:
			if p.Tool != loadToolsName || p.Name != loadedRecord {
				continue
			}
			var rec loadRecord
			if json.Unmarshal(p.Data, &rec) != nil {
				continue
			}
			for _, n := range rec.Names {
				if !contains(v.loaded, n) {
					v.loaded = append(v.loaded, n)
				}
			}
		}
	}
	if v.policy != nil && len(remembered) > 0 {
		if q, err := v.policy.WithAllow(remembered...); err == nil {
			v.policy = q
		}
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
