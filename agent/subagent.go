package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// AgentType is a kind of sub-agent the model may start with the task
// tool: a child session with its own context, history and log, whose
// final answer comes back as the task call's result.
type AgentType struct {
	// Name is what the model passes as task's "agent": snake_case.
	Name string
	// Description tells the model what the agent is for and when to use it.
	Description string
	// System is the child's system prompt.
	System string
	// Tools names the parent's tools the child may use; a name the parent
	// does not have is an error of WithSubAgents. The task tool itself is
	// given to a child only below the depth limit.
	Tools []string
	// Model, when set, is the child's model; otherwise the parent
	// session's.
	Model model.Model
	// MaxSteps is the child's step limit; zero means the loop's.
	MaxSteps int
}

// SubAgents configures the task tool.
type SubAgents struct {
	// Types are the agent types the model may start.
	Types []AgentType
	// MaxDepth is how deep sessions may nest: 1 (the default) lets the
	// parent start children that cannot start their own.
	MaxDepth int
	// TurnSteps is the budget of child steps in one parent turn, all
	// children together; zero means 200. A child gets what is left, up to
	// its type's limit; a task call when nothing is left is refused.
	TurnSteps int
	// MaxAnswer caps the answer returned to the parent, in bytes; zero
	// means 16 KiB. The whole answer stays in the child's log.
	MaxAnswer int
}

const (
	// defaultTaskDeadline is the backstop of one task call: a child's
	// whole turn.
	defaultTaskDeadline   = 30 * time.Minute
	taskToolName          = "task"
	defaultSubAgentSteps  = 200
	defaultSubAgentAnswer = 16 << 10
)

// WithSubAgents gives the model a task tool that starts the agent types
// of sa as child sessions. A child is a session of the same store: its
// header names the parent session and the task call (session.Header
// Parent and ParentCall), so it can be resumed, replayed and searched
// like any other; the parent's log records the child's id. A child never
// has more than its parent: its tools are a subset of the parent's, its
// calls are decided by the parent session's permission policy (remembered
// rules included), and an ask goes to the parent's approver. Without an
// approver a child cannot pause the parent's turn for the question: the
// call is denied by the policy (PermissionDecision By "rule" or "mode",
// never "user"), and the reason, which the child's model and the host
// read, says that it needed approval and that WithApprover, or an allow
// rule, lets a sub-agent's calls be approved. Hosts whose sub-agents must
// make such calls configure an approver, or rules that allow them. The
// host sees the child's events as SubAgentEvent values, its usage adds to
// the parent's turn, and cancelling the parent's turn cancels the
// children. A child started with background true is a job instead, whose
// asks pause it and its parent durably: see "Background jobs" in the
// package documentation.
func WithSubAgents(sa SubAgents) Option {
	return func(c *config) {
		if len(sa.Types) == 0 {
			c.fail("WithSubAgents: no agent types")
			return
		}
		if sa.MaxDepth < 0 || sa.TurnSteps < 0 || sa.MaxAnswer < 0 {
			c.fail("WithSubAgents: MaxDepth %d, TurnSteps %d and MaxAnswer %d must not be negative", sa.MaxDepth, sa.TurnSteps, sa.MaxAnswer)
			return
		}
		seen := map[string]bool{}
		for _, ty := range sa.Types {
			switch {
			case !snakeCase(ty.Name):
				c.fail("WithSubAgents: agent type name %q is not snake_case", ty.Name)
				return
			case seen[ty.Name]:
				c.fail("WithSubAgents: two agent types are named %q", ty.Name)
				return
			case ty.MaxSteps < 0:
				c.fail("WithSubAgents: agent type %q has a negative MaxSteps %d", ty.Name, ty.MaxSteps)
				return
			}
			seen[ty.Name] = true
		}
		if sa.MaxDepth == 0 {
			sa.MaxDepth = 1
		}
		if sa.TurnSteps == 0 {
			sa.TurnSteps = defaultSubAgentSteps
		}
		if sa.MaxAnswer == 0 {
			sa.MaxAnswer = defaultSubAgentAnswer
		}
		c.sub = &sa
	}
}

func snakeCase(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// subTurn is what one parent turn keeps of its children: the steps and
// usage they spent, and the channel their events reach the host by.
type subTurn struct {
	relay chan Event

	mu    sync.Mutex
	steps int
	usage harness.Usage
	cost  float64
	// bgUsage and bgCost are the model calls background children made
	// while the turn ran: already the session's (Session.spend), the
	// turn's too.
	bgUsage harness.Usage
	bgCost  float64
}

// addBackground adds a background child's model call made while the turn
// runs.
func (st *subTurn) addBackground(u harness.Usage, cost float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.bgUsage.Add(u)
	st.bgCost += cost
}

// backgroundSpent is what background children spent while the turn ran.
func (st *subTurn) backgroundSpent() (harness.Usage, float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bgUsage, st.bgCost
}

// left returns how many child steps the turn has left of total.
func (st *subTurn) left(total int) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return max(total-st.steps, 0)
}

// charge counts one child step and reports whether the budget of total
// is spent.
func (st *subTurn) charge(total int) (spent bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.steps++
	return st.steps >= total
}

// add adds a child turn's usage and cost.
func (st *subTurn) add(u harness.Usage, cost float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.usage.Add(u)
	st.cost += cost
}

// spent is what the children of the turn used and cost.
func (st *subTurn) spent() (harness.Usage, float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.usage, st.cost
}

type turnKey struct{}

var errBudgetSpent = errors.New("the turn's budget of sub-agent steps is spent")

// taskArgs are the task tool's arguments.
type taskArgs struct {
	Agent       string `json:"agent" jsonschema:"Agent type."`
	Description string `json:"description" jsonschema:"3-5 words for the user."`
	Prompt      string `json:"prompt" jsonschema:"Everything the agent needs to know, and what to report."`
	Background  bool   `json:"background,omitempty" jsonschema:"Run as a job: returns at once; you are told when it ends; job_output reads the answer."`
}

// toolsByName returns the loop's tools and its sources' current ones,
// by name: those a child may be given.
func (l *Loop) toolsByName() map[string]tools.Tool {
	byName := map[string]tools.Tool{}
	for _, t := range l.cfg.tools {
		byName[t.Spec().Name] = t
	}
	for _, src := range l.cfg.sources {
		if src != nil {
			for _, t := range src.Tools() {
				byName[t.Spec().Name] = t
			}
		}
	}
	return byName
}

// taskTool builds the task tool for a loop at depth (0 for a top loop).
func (l *Loop) taskTool() (tools.Tool, error) {
	sa := l.cfg.sub
	byName := l.toolsByName()
	readOnly := true
	var desc strings.Builder
	desc.WriteString("Start a sub-agent on a self-contained task, in its own context with its own tools; only its final answer returns. " +
		"Use it for exploration whose details you need not keep; ask for a concise report with the paths and lines that matter. " +
		"It sees the prompt, not this conversation. Task calls in one step run in parallel when the agents cannot change anything.\n\nAgent types:")
	for _, ty := range sa.Types {
		for _, name := range ty.Tools {
			t, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("agent type %q names tool %q, which the loop does not have", ty.Name, name)
			}
			if t.Spec().SideEffects {
				readOnly = false
			}
		}
		fmt.Fprintf(&desc, "\n- %s: %s", ty.Name, ty.Description)
	}
	spec := tools.Spec{
		Name:            taskToolName,
		Description:     desc.String(),
		ConcurrencySafe: readOnly,
		SideEffects:     !readOnly,
		Family:          tools.FamilyNetwork,
		Deadline:        defaultTaskDeadline,
	}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in taskArgs) (*harness.ToolResult, error) {
		return l.runTask(ctx, call, in, byName)
	}), nil
}

func (l *Loop) agentType(name string) (AgentType, bool) {
	for _, ty := range l.cfg.sub.Types {
		if ty.Name == name {
			return ty, true
		}
	}
	return AgentType{}, false
}

// runTask runs one child session to the end of its turn.
func (l *Loop) runTask(ctx context.Context, call *tools.Call, in taskArgs, byName map[string]tools.Tool) (*harness.ToolResult, error) {
	sa := l.cfg.sub
	ty, ok := l.agentType(in.Agent)
	if !ok {
		names := make([]string, 0, len(sa.Types))
		for _, t := range sa.Types {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("there is no agent type %q; use one of: %s", in.Agent, strings.Join(names, ", "))}
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "the prompt is empty: say what the agent should do and report"}
	}
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil {
		return nil, &harness.Error{Code: CodeInternal, Message: "the task tool runs only inside a turn of its loop"}
	}
	steps := ty.MaxSteps
	if steps == 0 {
		steps = l.cfg.maxSteps
	}
	steps = min(steps, t.sub.left(sa.TurnSteps))
	if steps == 0 {
		return nil, &harness.Error{Code: harness.CodeNotRun, Message: fmt.Sprintf("this turn has spent its budget of %d sub-agent steps: finish the work yourself or report what is left", sa.TurnSteps)}
	}
	budget, ok := t.childBudget()
	if !ok {
		return nil, &harness.Error{Code: CodeBudgetExceeded, Message: "this turn has reached its budget of money or tokens (Limits.Budget): no sub-agent can start; finish with what you have or report what is left"}
	}
	if in.Background {
		return l.startBackgroundTask(ctx, t, call, in, ty, steps, budget, byName)
	}
	origin := &permission.Origin{Agent: ty.Name}
	child, err := l.childLoop(t.s.view(), t.childModel(ty), ty, steps, budget, byName, origin, false)
	if err != nil {
		return nil, err
	}
	defer child.Close()
	sess, err := child.NewSession(ctx, session.Header{Cwd: t.s.Header().Cwd, Parent: t.s.Header().ID, ParentCall: call.ID})
	if err != nil {
		return nil, err
	}
	origin.Session = sess.Header().ID
	if rerr := t.s.record(ctx, call, "sub_agent", subAgentRecord{Session: sess.Header().ID, Agent: ty.Name, Description: in.Description}); rerr != nil {
		l.cfg.logger.Warn("agent: recording a sub-agent's session id failed", "error", rerr)
	}
	var (
		answer strings.Builder
		end    *TurnEnd
		calls  []subAgentCall // the model calls of the child and its own children
	)
	depth := child.cfg.depth
	// The child runs until its turn ends, or until the children of this
	// parent turn have spent their budget of steps between them.
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	for ev := range sess.Run(cctx, in.Prompt) {
		if u := innerUsage(ev); u != nil {
			calls = append(calls, subAgentCall{Model: u.Model, Usage: u.Usage, Time: time.Now()})
		}
		switch e := ev.(type) {
		case *TextDelta:
			answer.WriteString(e.Text)
		case *Retry:
			answer.Reset() // the step's text starts over
		case *StepEnd:
			if e.ToolCalls > 0 {
				answer.Reset() // the answer is the text of the last step
			}
			if t.sub.charge(sa.TurnSteps) && e.ToolCalls > 0 {
				stop(errBudgetSpent)
			}
		case *TurnEnd:
			end = e
		}
		wrapped := ev
		if se, ok := ev.(*SubAgentEvent); ok {
			wrapped = se // a grandchild's event, already tagged
		} else {
			wrapped = &SubAgentEvent{Session: sess.Header().ID, Call: call.ID, Agent: ty.Name, Depth: depth, Event: ev}
		}
		select {
		case t.sub.relay <- wrapped:
		case <-ctx.Done():
		}
	}
	if end != nil {
		t.sub.add(end.Usage, end.Cost)
	}
	if len(calls) > 0 {
		// The parent's log keeps the children's model calls, so that a
		// resumed parent's Cost counts them as the live one did.
		if rerr := t.s.record(context.WithoutCancel(ctx), call, subAgentUsageRecord, subAgentUsage{Session: sess.Header().ID, Calls: calls}); rerr != nil {
			l.cfg.logger.Warn("agent: recording a sub-agent's model calls failed", "error", rerr)
		}
	}
	if cerr := sess.Close(); cerr != nil {
		l.cfg.logger.Warn("agent: closing a sub-agent's session failed", "session", sess.Header().ID, "error", cerr)
	}
	if ctx.Err() == nil && errors.Is(context.Cause(cctx), errBudgetSpent) && end != nil {
		end.Reason = session.ReasonStepLimit // the turn's budget, not the child's own limit
	}
	return taskResult(sess.Header().ID, ty.Name, answer.String(), end, sa.MaxAnswer, ctx.Err())
}

// subAgentUsageRecord names the parent's record of a child's model calls.
const subAgentUsageRecord = "sub_agent_usage"

// subAgentUsage is the parent's record of the model calls a child turn
// made, its own children's included, each with when it was priced.
type subAgentUsage struct {
	Session string         `json:"session"`
	Calls   []subAgentCall `json:"calls"`
}

type subAgentCall struct {
	Model string        `json:"model"`
	Usage harness.Usage `json:"usage"`
	Time  time.Time     `json:"time"`
}

// innerUsage returns the ModelUsage an event of a child is, or wraps at
// any depth.
func innerUsage(ev Event) *ModelUsage {
	for {
		switch e := ev.(type) {
		case *ModelUsage:
			return e
		case *SubAgentEvent:
			ev = e.Event
		default:
			return nil
		}
	}
}

type subAgentRecord struct {
	Session     string `json:"session"`
	Agent       string `json:"agent"`
	Description string `json:"description,omitempty"`
	// Job is the job a background child runs as.
	Job string `json:"job,omitempty"`
}

// taskResult is the parent's view of a child's turn.
func taskResult(id, agentName, answer string, end *TurnEnd, max int, ctxErr error) (*harness.ToolResult, error) {
	if ctxErr != nil {
		return nil, &harness.Error{Code: harness.CodeAborted, Message: fmt.Sprintf("the %s agent (session %s) was cancelled with the turn", agentName, id), Err: ctxErr}
	}
	answer = strings.TrimSpace(answer)
	reason := session.ReasonError
	if end != nil {
		reason = end.Reason
	}
	var b strings.Builder
	switch reason {
	case session.ReasonCompleted:
	case session.ReasonStepLimit:
		fmt.Fprintf(&b, "[The %s agent stopped at its step limit before it finished; its answer so far follows.]\n", agentName)
	case session.ReasonBudgetExceeded:
		fmt.Fprintf(&b, "[The %s agent stopped at what was left of this turn's budget of money or tokens before it finished; its answer so far follows.]\n", agentName)
	default:
		msg := reason
		if end != nil && end.Err != nil {
			msg += ": " + end.Err.Error()
		}
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: fmt.Sprintf("the %s agent (session %s) did not finish (%s). Its partial answer: %s", agentName, id, msg, capText(answer, max, id))}
	}
	if answer == "" {
		answer = "(The agent gave no answer.)"
	}
	b.WriteString(capText(answer, max, id))
	return &harness.ToolResult{Content: []harness.Block{harness.TextBlock(b.String())}}, nil
}

// capText cuts s to at most max bytes on a rune boundary and says where
// the whole text is.
func capText(s string, max int, id string) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[The answer was cut at %d of %d bytes; the whole answer is in session %s.]", cut, len(s), id)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// childModel is the model of a child of type ty started in the turn:
// the type's, or the model the turn calls now with the rest of its
// fallback chain.
func (t *turn) childModel(ty AgentType) model.Model {
	if ty.Model != nil {
		return ty.Model
	}
	if t.cur < len(t.chain)-1 {
		return model.Fallback(t.chain[t.cur], t.chain[t.cur+1:]...)
	}
	return t.model
}

// childLoop builds the loop of one child: the parent's configuration
// with the type's tools, prompt and steps, the model m, the parent
// session's permission policy and the parent's approver, which is told
// the child's origin. A background child (background true) pauses for
// the answers no approver gives; a foreground one is denied them.
func (l *Loop) childLoop(parent parentView, m model.Model, ty AgentType, steps int, budget Budgets, byName map[string]tools.Tool, origin *permission.Origin, background bool) (*Loop, error) {
	cfg := l.cfg
	cfg.errs = nil
	cfg.sources = nil
	cfg.tools = nil
	for _, name := range ty.Tools {
		if name == taskToolName {
			continue
		}
		cfg.tools = append(cfg.tools, byName[name])
	}
	cfg.system = ty.System
	cfg.maxSteps = steps
	// What is left of the parent's budgets, as the child's turn budget:
	// the child stops at it (it cannot pause its parent's turn).
	cfg.limits.Budget = budget
	cfg.model = m
	cfg.policy = parent.policy
	cfg.jobs.background = background
	// The recording's notices (ReplayJobNotices) are the parent's, and
	// the events between the parent's turns its host's.
	cfg.jobs.logged, cfg.jobs.events = nil, nil
	if a := cfg.approver; a != nil {
		cfg.approver = func(ctx context.Context, req permission.Request) (permission.Answer, error) {
			if req.Origin == nil {
				o := *origin
				req.Origin = &o
			}
			return a(ctx, req)
		}
	}
	cfg.deferred = l.cfg.deferred.forChild(parent.loaded)
	cfg.depth = l.cfg.depth + 1
	if cfg.depth >= l.cfg.sub.MaxDepth {
		cfg.sub = nil
	}
	// Without an approver a foreground child's ask is denied, a
	// background child's pauses it: see turn.decide.
	child := &Loop{cfg: cfg, sessions: map[*Session]struct{}{}}
	ts, err := child.buildTools()
	if err != nil {
		return nil, err
	}
	child.tools = ts
	child.handler = l.handler
	return child, nil
}
