package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
)

// A TurnObserver sees every turn of a loop's sessions (Hooks.Turns). It
// is called when a turn starts, with the turn's context so far, and
// returns the context the turn runs in (nil keeps ctx): the model calls,
// the tool calls and their middleware see its values, so a tracer can
// carry the turn's span in it (package observe does). The function it
// returns, when not nil, then sees each of the turn's events in order,
// the TurnEnd last, even when the host stopped iterating; what it needs
// of the turn (a span, say) it keeps from the call that made it, as a
// closure. Both are called on the turn's goroutine and must return
// promptly; a panic in either is logged and ignored.
type TurnObserver func(ctx context.Context, info TurnInfo) (context.Context, func(Event))

// TurnInfo describes a turn as it starts.
type TurnInfo struct {
	// SessionID is the id of the turn's session.
	SessionID string
	// Turn numbers the session's turns from 1.
	Turn int
	// Model is the name of the model the turn calls.
	Model string
}

// WithPrices sets the price table the loop costs model calls by: the
// ModelUsage and TurnEnd events carry the cost in the table's currency,
// and Session.Cost sums it over the session's logged calls (a resumed
// session included). A call to a model the table does not price costs
// 0. Without it, costs are 0.
func WithPrices(t *pricing.Table) Option { return func(c *config) { c.prices = t } }

// beginTurn lets the observers begin the turn and returns its context and
// the observers of its events.
func (s *Session) beginTurn(ctx context.Context, m model.Model) (context.Context, []func(Event)) {
	obs := s.loop.cfg.turnObservers
	if len(obs) == 0 {
		return ctx, nil
	}
	info := TurnInfo{SessionID: s.Header().ID, Turn: s.turns() + 1, Model: m.Info().Name}
	var sinks []func(Event)
	for _, o := range obs {
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.logger.Error("turn observer panicked as the turn began", "panic", fmt.Sprint(p))
				}
			}()
			c, sink := o(ctx, info)
			if c != nil {
				ctx = c
			}
			if sink != nil {
				sinks = append(sinks, sink)
			}
		}()
	}
	return ctx, sinks
}

// notify hands ev to the turn's event observers.
func (t *turn) notify(ev Event) {
	for _, sink := range t.observers {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.s.logger.Error("turn observer panicked", "event", kindOf(ev), "panic", fmt.Sprint(p))
				}
			}()
			sink(ev)
		}()
	}
}

// price returns the cost of a call of modelName with usage u made now,
// and adds it to the turn's and the session's.
func (t *turn) price(modelName string, u harness.Usage) float64 {
	c, _ := t.l.cfg.prices.Cost(modelName, u, time.Now())
	t.cost += c
	t.s.spend(u, c)
	return c
}

// Cost returns what the session's logged model calls cost by the loop's
// price table (WithPrices), in its currency: derived from the log when
// resumed, and summed as turns run. Compactions' summarizing calls and
// the calls of the session's sub-agents count (the log records both).
func (s *Session) Cost() float64 {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.cost
}

// spend adds the usage and the cost of model calls to the session's.
func (s *Session) spend(u harness.Usage, c float64) {
	s.logMu.Lock()
	s.usage.Add(u)
	s.cost += c
	s.logMu.Unlock()
}

// logSpend is the token usage and the cost of every model call in a
// loaded log: the session's own, its compactions' summarizing calls and
// its sub-agents' (recorded in the parent's log as they end). The cost is
// 0 without a price table.
func logSpend(prices *pricing.Table, events []session.Event) (harness.Usage, float64) {
	var (
		usage harness.Usage
		cost  float64
	)
	count := func(modelName string, u harness.Usage, at time.Time) {
		usage.Add(u)
		if prices != nil {
			c, _ := prices.Cost(modelName, u, at)
			cost += c
		}
	}
	for _, ev := range events {
		switch p := ev.Data.(type) {
		case *session.AssistantMessage:
			if p.Usage != nil {
				count(p.Model, *p.Usage, ev.Time)
			}
		case *session.ToolRecord:
			// A sub-agent's model calls, priced when they were made.
			if p.Tool != taskToolName || p.Name != subAgentUsageRecord {
				continue
			}
			var rec subAgentUsage
			if json.Unmarshal(p.Data, &rec) != nil {
				continue
			}
			for _, c := range rec.Calls {
				count(c.Model, c.Usage, c.Time)
			}
		case *session.Compacted:
			// The summarizing call is a model call too.
			if p.Usage != nil {
				count(p.Model, *p.Usage, ev.Time)
			}
		}
	}
	return usage, cost
}

// turnModels returns the models a turn calls: m wrapped in mws, or, when
// m is a fallback chain (model.Chain), each of its models wrapped in
// mws, the primary first. A chain of no models is m itself.
func turnModels(m model.Model, mws []model.Middleware) []model.Model {
	if c, ok := m.(model.Chain); ok {
		if ms := c.Models(); len(ms) > 0 {
			for i := range ms {
				ms[i] = chainModel(ms[i], mws)
			}
			return ms
		}
	}
	return []model.Model{chainModel(m, mws)}
}

// chainModel wraps m in mws, mws[0] the outermost: it sees the request
// first and the answer last. Nil middlewares are skipped.
func chainModel(m model.Model, mws []model.Middleware) model.Model {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			m = mws[i](m)
		}
	}
	return m
}
