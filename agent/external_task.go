package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// TaskSessionID is the id of the child session that runs a task call
// (the sub-agent tool) when the host runs it ([Loop.OpenTask]): derived
// from the parent session's id and the call's, so that opening the task
// again, on any machine, finds the same session.
func TaskSessionID(parentID, callID string) string {
	sum := sha256.Sum256([]byte(parentID + "\x00" + callID))
	tag := hex.EncodeToString(sum[:8])
	if id := parentID + "-task-" + tag; len(id) <= 128 {
		return id
	}
	return "task-" + hex.EncodeToString(sum[:16])
}

// Task is a task call run by the host outside its parent's turn (task
// made external with WithExternalTools): the sub-agent's child session,
// on a loop configured as the plain loop configures the sub-agent (the
// agent type's tools, prompt, model and step limit, the parent
// session's permission policy with its remembered rules, what is left of
// its budgets). Unlike a sub-agent run inside its parent's turn, a
// call that needs approval and has no approver pauses the child's turn
// (awaiting_approval) for the host to answer, as a background
// sub-agent's does.
type Task struct {
	// Session is the child session, nil when the call was refused
	// (Refused holds why).
	Session *Session
	// Prompt is the task's prompt: the user message of the child's turn.
	Prompt string
	// Agent is the agent type.
	Agent string
	// Refused, when set, is the call's result without a child: an
	// unknown agent type, an empty prompt, a budget already reached.
	Refused *ToolAnswer

	loop *Loop
	max  int
}

// OpenTask opens the child session of the task call that the session
// parentID made: it creates the session (its id TaskSessionID, its
// header naming the parent and the call) or, when it exists, resumes it,
// so that a turn cut off by a crash can go on (Session.Continue) and a
// turn that ended is not run again. The parent's log is read, not
// opened: the parent may stay open, paused, elsewhere. Close the task
// when done.
func (l *Loop) OpenTask(ctx context.Context, parentID string, call harness.ToolCall) (*Task, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	if l.cfg.sub == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "agent: OpenTask: the loop has no sub-agents: configure them with WithSubAgents"}
	}
	if call.Name != taskToolName {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("agent: OpenTask: the call %s is a %s call, not a task call", call.ID, call.Name)}
	}
	refuse := func(code harness.Code, format string, args ...any) (*Task, error) {
		return &Task{Refused: &ToolAnswer{Result: *harness.ErrorResult(code, format, args...)}}, nil
	}
	var in taskArgs
	if err := json.Unmarshal([]byte(call.Arguments), &in); err != nil {
		return refuse(harness.CodeInvalidArguments, "the task call's arguments are not valid JSON: %v", err)
	}
	ty, ok := l.agentType(in.Agent)
	if !ok {
		names := make([]string, 0, len(l.cfg.sub.Types))
		for _, t := range l.cfg.sub.Types {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		return refuse(harness.CodeInvalidArguments, "there is no agent type %q; use one of: %s", in.Agent, strings.Join(names, ", "))
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return refuse(harness.CodeInvalidArguments, "the prompt is empty: say what the agent should do and report")
	}
	tr, err := l.cfg.store.Load(ctx, parentID)
	if err != nil {
		return nil, fmt.Errorf("agent: OpenTask: reading the parent session's log: %w", err)
	}
	id := TaskSessionID(parentID, call.ID)
	budget, ok := l.taskBudget(tr.Events)
	if !ok {
		return refuse(CodeBudgetExceeded, "this turn has reached its budget of money or tokens (Limits.Budget): no sub-agent can start; finish with what you have or report what is left")
	}
	steps := ty.MaxSteps
	if steps == 0 {
		steps = l.cfg.maxSteps
	}
	m := ty.Model
	if m == nil {
		m = l.cfg.model
	}
	origin := &permission.Origin{Agent: ty.Name, Session: id}
	child, err := l.childLoop(l.viewOfLog(tr.Events), m, ty, steps, budget, l.toolsByName(), origin, true)
	if err != nil {
		return nil, err
	}
	sess, err := child.ResumeSession(ctx, id)
	if errors.Is(err, harness.CodeNotFound) {
		sess, err = child.NewSession(ctx, session.Header{ID: id, Cwd: tr.Header.Cwd, Parent: parentID, ParentCall: call.ID})
		if errors.Is(err, harness.CodeExists) {
			sess, err = child.ResumeSession(ctx, id)
		}
	}
	if err != nil {
		child.Close()
		return nil, err
	}
	return &Task{Session: sess, Prompt: in.Prompt, Agent: ty.Name, loop: child, max: l.cfg.sub.MaxAnswer}, nil
}

// taskBudget is the turn budget of a task started now by the session
// whose log is events: what is left of its budgets, the spending of its
// log (and of its last turn) counted. ok is false when nothing is left.
func (l *Loop) taskBudget(events []session.Event) (Budgets, bool) {
	b := l.cfg.limits.Budget
	last := 0
	for i, e := range events {
		switch p := e.Data.(type) {
		case *session.BudgetSet:
			b = b.raise(Budgets{Turn: Budget{Cost: p.TurnCost, Tokens: p.TurnTokens}, Session: Budget{Cost: p.SessionCost, Tokens: p.SessionTokens}})
		case *session.UserMessage:
			if !p.Steer {
				last = i
			}
		}
	}
	if b.zero() {
		return Budgets{}, true
	}
	su, sc := logSpend(l.cfg.prices, events)
	tu, tc := logSpend(l.cfg.prices, events[last:])
	left, ok := b.left(spendOf(tu, tc), spendOf(su, sc))
	return Budgets{Turn: left}, ok
}

// Answer is the task call's result for its parent, once the child's
// turn ended with end: the child's last answer (or why it did not
// finish), and everything the child session spent, for Answers.Tools.
func (tk *Task) Answer(end *TurnEnd) ToolAnswer {
	if tk.Refused != nil {
		return *tk.Refused
	}
	var answer string
	msgs := tk.Session.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == harness.RoleAssistant {
			answer = msgs[i].Text()
			break
		}
	}
	id := tk.Session.Header().ID
	res, err := taskResult(id, tk.Agent, answer, end, tk.max, nil)
	if err != nil {
		res = harness.ErrorResult(harness.CodeOf(err), "%s", err.Error())
	}
	return ToolAnswer{Result: *res, Usage: tk.Session.Usage(), Cost: tk.Session.Cost()}
}

// Close closes the child session and its loop.
func (tk *Task) Close() error {
	var err error
	if tk.Session != nil {
		err = tk.Session.Close()
	}
	if tk.loop != nil {
		err = errors.Join(err, tk.loop.Close())
	}
	return err
}
