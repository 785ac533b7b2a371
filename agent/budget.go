package agent

import (
	"fmt"
	"math"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// Budget caps what model calls spend: every call counts, the summaries
// of compaction and the calls of sub-agents included. A zero field caps
// nothing.
type Budget struct {
	// Cost caps the money spent, priced by the loop's table
	// (WithPrices), in its currency (US dollars for pricing.Default). A
	// loop with a Cost budget and no price table is a configuration
	// error: nothing could be counted against it.
	Cost float64
	// Tokens caps the tokens spent: input plus output.
	Tokens int64
}

// Budgets are the caps of one turn and of a whole session (all its
// turns, as Session.Cost and Session.Usage count them), for
// Limits.Budget and for raising them in Answers.Budget.
type Budgets struct {
	Turn    Budget
	Session Budget
}

// zero reports whether b caps nothing.
func (b Budgets) zero() bool { return b == Budgets{} }

// spend is money and tokens spent.
type spend struct {
	cost   float64
	tokens int64
}

func spendOf(u harness.Usage, cost float64) spend {
	return spend{cost: cost, tokens: u.InputTokens + u.OutputTokens}
}

func (a spend) plus(b spend) spend { return spend{a.cost + b.cost, a.tokens + b.tokens} }

// validate reports a budget out of range.
func (b Budgets) validate(prices bool) error {
	for _, f := range []struct {
		name string
		b    Budget
	}{{"Turn", b.Turn}, {"Session", b.Session}} {
		if f.b.Tokens < 0 || !(f.b.Cost >= 0) || math.IsInf(f.b.Cost, 0) {
			return optionError("WithLimits: Limits.Budget.%s is %+v; a budget must not be negative (zero caps nothing)", f.name, f.b)
		}
		if f.b.Cost > 0 && !prices {
			return optionError("WithLimits: Limits.Budget.%s.Cost is %v, but the loop has no price table to count cost by: add agent.WithPrices, or cap Tokens instead", f.name, f.b.Cost)
		}
	}
	return nil
}

// raise returns b with each cap of r that is higher put in its place.
// A zero cap of r changes nothing; a zero cap of b stays: it caps
// nothing, which no raise goes above.
func (b Budgets) raise(r Budgets) Budgets {
	hiF := func(a, r float64) float64 {
		if a == 0 || r == 0 {
			return a
		}
		return max(a, r)
	}
	hiI := func(a, r int64) int64 {
		if a == 0 || r == 0 {
			return a
		}
		return max(a, r)
	}
	return Budgets{
		Turn:    Budget{Cost: hiF(b.Turn.Cost, r.Turn.Cost), Tokens: hiI(b.Turn.Tokens, r.Turn.Tokens)},
		Session: Budget{Cost: hiF(b.Session.Cost, r.Session.Cost), Tokens: hiI(b.Session.Tokens, r.Session.Tokens)},
	}
}

// reached returns the first budget of b that turn and sess have
// reached, and its value; "" when none.
func (b Budgets) reached(turn, sess spend) (string, float64) {
	switch {
	case b.Turn.Cost > 0 && turn.cost >= b.Turn.Cost:
		return "turn_cost", b.Turn.Cost
	case b.Turn.Tokens > 0 && turn.tokens >= b.Turn.Tokens:
		return "turn_tokens", float64(b.Turn.Tokens)
	case b.Session.Cost > 0 && sess.cost >= b.Session.Cost:
		return "session_cost", b.Session.Cost
	case b.Session.Tokens > 0 && sess.tokens >= b.Session.Tokens:
		return "session_tokens", float64(b.Session.Tokens)
	}
	return "", 0
}

// left is what a sub-agent may spend of b, the turn and the session
// having spent turn and sess: the least that is left of any cap, as a
// turn budget. ok is false when a cap is already reached.
func (b Budgets) left(turn, sess spend) (Budget, bool) {
	var out Budget
	takeF := func(limit, spent float64) bool {
		if limit <= 0 {
			return true
		}
		rest := limit - spent
		if rest <= 0 {
			return false
		}
		if out.Cost == 0 || rest < out.Cost {
			out.Cost = rest
		}
		return true
	}
	takeI := func(limit, spent int64) bool {
		if limit <= 0 {
			return true
		}
		rest := limit - spent
		if rest <= 0 {
			return false
		}
		if out.Tokens == 0 || rest < out.Tokens {
			out.Tokens = rest
		}
		return true
	}
	ok := takeF(b.Turn.Cost, turn.cost) && takeI(b.Turn.Tokens, turn.tokens) &&
		takeF(b.Session.Cost, sess.cost) && takeI(b.Session.Tokens, sess.tokens)
	return out, ok
}

// budgets returns the session's budgets: the loop's, raised by the
// answers that raised them.
func (s *Session) budgets() Budgets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loop.cfg.limits.Budget.raise(s.raised)
}

// spent returns what the turn and its session have spent so far, the
// running sub-agents' finished turns included.
func (t *turn) spent() (turn, sess spend) {
	childUsage, childCost := t.sub.spent()
	child := spendOf(childUsage, childCost)
	bgUsage, bgCost := t.sub.backgroundSpent() // already in the session's
	turn = t.base.plus(spendOf(t.usage, t.cost)).plus(child).plus(spendOf(bgUsage, bgCost))
	sess = spendOf(t.s.Usage(), t.s.Cost()).plus(child)
	return turn, sess
}

// checkBudget is called before each model call of the turn. When a
// budget is reached it ends the turn: paused (awaiting_budget) for a
// host to raise it, or, for a hard ceiling or in a sub-agent (which
// cannot pause its parent's turn), stopped (budget_exceeded). It reports
// whether the turn ended.
func (t *turn) checkBudget() bool {
	b := t.s.budgets()
	if b.zero() {
		return false
	}
	turnSpent, sessSpent := t.spent()
	what, limit := b.reached(turnSpent, sessSpent)
	if what == "" {
		return false
	}
	sp := &session.Spend{TurnCost: turnSpent.cost, TurnTokens: turnSpent.tokens, SessionCost: sessSpent.cost,
		SessionTokens: sessSpent.tokens, Reached: what, Limit: limit}
	if t.l.cfg.limits.HardBudget || t.l.cfg.depth > 0 {
		t.emit(&BudgetReached{Step: t.steps, Spend: *sp, Hard: true})
		t.finish(session.ReasonBudgetExceeded, &harness.Error{Code: CodeBudgetExceeded, Message: budgetMessage(sp, true)})
		return true
	}
	p := &session.Paused{Step: t.steps, Reason: session.ReasonAwaitingBudget, Spend: sp}
	if o := t.output; o != nil {
		p.OutputName, p.OutputSchema, p.OutputRepaired = o.out.Name, o.out.Schema, o.repaired
	}
	if err := t.s.append(t.ctx, p); err != nil {
		t.finish(session.ReasonError, fmt.Errorf("agent: logging the budget pause: %w", err))
		return true
	}
	t.s.mu.Lock()
	t.s.paused = &pause{reason: session.ReasonAwaitingBudget, step: t.steps, output: t.output, spend: sp,
		base: turnSpent}
	t.s.mu.Unlock()
	t.emit(&BudgetReached{Step: t.steps, Spend: *sp})
	t.finish(session.ReasonAwaitingBudget, nil)
	return true
}

// budgetMessage says which budget a turn reached and what was spent.
func budgetMessage(sp *session.Spend, hard bool) string {
	what := map[string]string{"turn_cost": "the turn's cost budget", "turn_tokens": "the turn's token budget",
		"session_cost": "the session's cost budget", "session_tokens": "the session's token budget"}[sp.Reached]
	msg := fmt.Sprintf("agent: %s of %v is reached (the turn spent %.4f and %d tokens, the session %.4f and %d tokens)",
		what, sp.Limit, sp.TurnCost, sp.TurnTokens, sp.SessionCost, sp.SessionTokens)
	if hard {
		return msg + "; it is a hard ceiling, so the turn stopped: raise Limits.Budget to go on"
	}
	return msg
}

// raiseBudget checks and logs raised budgets answering a budget pause.
// It fails, logging nothing, when the budget reached would still be
// reached.
func (t *turn) raiseBudget(pz *pause, r *Budgets) error {
	cur := t.s.budgets()
	next := cur
	if r != nil {
		next = cur.raise(*r)
	}
	sess := spendOf(t.s.Usage(), t.s.Cost())
	if what, limit := next.reached(pz.base, sess); what != "" {
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(
			"agent: the turn paused at its budget, and %s is still reached (limit %v): answer with a higher Answers.Budget, or raise Limits.Budget", what, limit)}
	}
	if r == nil || next == cur {
		return nil
	}
	set := &session.BudgetSet{TurnCost: next.Turn.Cost, TurnTokens: next.Turn.Tokens, SessionCost: next.Session.Cost, SessionTokens: next.Session.Tokens}
	if err := t.s.append(t.ctx, set); err != nil {
		return fmt.Errorf("agent: logging the raised budget: %w", err)
	}
	t.s.mu.Lock()
	t.s.raised = next
	t.s.mu.Unlock()
	return nil
}

// childBudget is the turn budget of a sub-agent started now: what is
// left of the parent's budgets. ok is false when nothing is left.
func (t *turn) childBudget() (Budgets, bool) {
	b := t.s.budgets()
	if b.zero() {
		return Budgets{}, true
	}
	turnSpent, sessSpent := t.spent()
	left, ok := b.left(turnSpent, sessSpent)
	return Budgets{Turn: left}, ok
}
