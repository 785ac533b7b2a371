package agent

import (
	"encoding/json"
	"math"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/compact"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
)

// The cost-aware policy's constants (see ContextCost).
const (
	// costForceAt is the share of the window above which a cut is forced
	// when CompactAt is not set.
	costForceAt = 0.95
	// costKeepShare and costKeepMax bound what a compaction keeps
	// verbatim when KeepRecent is not set.
	costKeepShare = 0.1
	costKeepMax   = 16_000
	// horizonMin and horizonMax bound the estimate of the requests still
	// to come.
	horizonMin = 4
	horizonMax = 64
	// minHitDiscount is how much cheaper than a miss a cache hit must be
	// for the cost rule to apply: a hit at more than half a miss's price
	// is no reason to keep a prefix.
	minHitDiscount = 2
	// expectedSummary and expectedSummaryOut are what a summary is
	// expected to take in the history and to cost in output tokens
	// (reasoning included) before the session's first compaction shows
	// it; instructionTokens is the summary instruction's size.
	expectedSummary    = 1000
	expectedSummaryOut = 2500
	instructionTokens  = 250
)

// cutPrices are per-token prices: a cache miss, a cache hit, an output
// token.
type cutPrices struct {
	miss, hit, out float64
}

// priceCuts returns the prices the cost-aware policy decides with for
// the model named modelName, and whether it applies: a price for the
// model is known (the policy's, or the loop's table's) and a cache hit is
// much cheaper than a miss.
func priceCuts(p ContextPolicy, table *pricing.Table, modelName string) (cutPrices, bool) {
	if p.Strategy != ContextCost {
		return cutPrices{}, false
	}
	price := p.Price
	if price == nil {
		pr, ok := table.Price(modelName)
		if !ok {
			return cutPrices{}, false
		}
		price = &pr
	}
	c := cutPrices{miss: price.Input / 1e6, hit: price.CacheHit / 1e6, out: price.Output / 1e6}
	if c.miss <= 0 || c.hit*minHitDiscount > c.miss {
		return cutPrices{}, false
	}
	return c, true
}

// horizon estimates the requests still to come after a session has
// made steps model calls: at the median as many again (P(more than r)
// = steps/(steps+r)); half of that, which comes two times in three,
// within [horizonMin, horizonMax].
func horizon(steps int) float64 {
	return float64(min(max(steps/2, horizonMin), horizonMax))
}

// pruneOption is a result pruning may replace: where its message starts
// in the request, and how many tokens replacing it frees.
type pruneOption struct {
	call  session.PrunedCall
	pos   int64
	saved int64
}

// compactOption is what compacting now would do: leave a request of
// after tokens, at a cost (the kept part and the summary sent uncached,
// and the summarizing call).
type compactOption struct {
	keep  int64
	after int64
	cost  float64
}

// cutState is what a decision knows of the request about to be sent.
type cutState struct {
	est int64 // the request's size
	// cached is how much of it the provider's cache holds: the size of
	// the previous request, which it extends.
	cached  int64
	forceAt int64   // the size above which a cut is forced
	horizon float64 // requests still to come
	growth  float64 // tokens the request grows by per step; 0 unknown
	// prunes are the results pruning may replace, in request order.
	prunes []pruneOption
	// compaction is nil when nothing can be compacted.
	compaction *compactOption
}

// cutPlan is a decision: prune the prunes from index prune on (none when
// it equals their count), or compact (pruning the kept part after).
type cutPlan struct {
	prune   int
	compact bool
	forced  bool
}

// breakCost is what the next request pays extra when x tokens at pos are
// cut from a request whose first cached tokens the provider's cache
// holds: the cached tokens after the cut miss the cache once. (Tokens
// the previous request did not have miss it anyway.)
func (p cutPrices) breakCost(cached, pos, x int64) float64 {
	return (p.miss - p.hit) * float64(max(cached-pos-x, 0))
}

// restock is the size at which compacting again and again costs least
// per step, for a compaction that leaves after tokens and costs cost,
// with a history growing by growth tokens a step: the square-root rule,
// after + √(2·cost·growth/hit). It is +Inf when it cannot be told.
func (p cutPrices) restock(after int64, cost, growth float64) float64 {
	if p.hit <= 0 || growth <= 0 {
		return math.Inf(1)
	}
	return float64(after) + math.Sqrt(2*cost*growth/p.hit)
}

// planCut decides, for the cost-aware policy, whether to prune or compact
// before a request (see ContextCost).
func planCut(s cutState, p cutPrices) cutPlan {
	none := cutPlan{prune: len(s.prunes)}
	var pruneAll, first int64 = 0, 0
	for i, c := range s.prunes {
		pruneAll += c.saved
		if i == 0 {
			first = c.pos
		}
	}
	if s.est > s.forceAt {
		// A cut is forced: make the most room for the money.
		plan := cutPlan{prune: len(s.prunes), forced: true}
		pruneRoom := float64(s.forceAt - (s.est - pruneAll))
		pruneCost := p.breakCost(s.cached, first, pruneAll)
		if c := s.compaction; c != nil && c.after < s.est {
			compactRoom := float64(s.forceAt - c.after)
			if pruneRoom <= 0 || pruneCost/pruneRoom >= c.cost/max(compactRoom, 1) {
				plan.compact = true
				return plan
			}
		}
		if pruneAll > 0 {
			plan.prune = 0
		}
		return plan
	}
	// Voluntary: compaction first, as it makes pruning the kept part free.
	next := float64(s.forceAt) // the size at which the next cut comes
	if c := s.compaction; c != nil && c.after < s.est {
		at := p.restock(c.after, c.cost, s.growth)
		saving := p.hit * float64(s.est-c.after) * s.horizon
		if float64(s.est) >= at && saving > c.cost {
			return cutPlan{prune: len(s.prunes), compact: true}
		}
		next = min(next, at)
	}
	// Pruning saves until the next compaction at most: that would remove
	// the pruned tokens anyway.
	h := s.horizon
	if s.growth > 0 {
		h = min(h, max(next-float64(s.est), 0)/s.growth)
	}
	best, bestNet := none, 0.0
	var x int64
	for i := len(s.prunes) - 1; i >= 0; i-- {
		x += s.prunes[i].saved
		net := p.hit*float64(x)*h - p.breakCost(s.cached, s.prunes[i].pos, x)
		if net > bestNet {
			best, bestNet = cutPlan{prune: i}, net
		}
	}
	return best
}

func calls(opts []pruneOption) []session.PrunedCall {
	out := make([]session.PrunedCall, len(opts))
	for i, o := range opts {
		out[i] = o.call
	}
	return out
}

// pruneOptions returns the results pruning may replace (cands, the
// superseded ones) in request order, with their positions and what
// replacing each frees.
func pruneOptions(req *model.Request, sizes []int64, prefix int64, cands []session.PrunedCall, est *estimator) []pruneOption {
	if len(cands) == 0 {
		return nil
	}
	byID := make(map[string]session.PrunedCall, len(cands))
	for _, c := range cands {
		byID[c.CallID] = c
	}
	var out []pruneOption
	pos := prefix
	for i, m := range req.Messages {
		if m.Role == harness.RoleTool && len(m.Content) == 1 && m.Content[0].ToolResult != nil {
			if c, ok := byID[m.Content[0].ToolResult.CallID]; ok {
				ph, _ := json.Marshal(c.Placeholder)
				out = append(out, pruneOption{call: c, pos: pos, saved: max(sizes[i]-est.tokens(int64(len(ph))), 0)})
				delete(byID, c.CallID)
			}
		}
		pos += sizes[i]
	}
	return out
}

// newCompactOption returns what compacting req now would leave and
// cost, with what track knows of earlier compactions, or nil when
// nothing can be compacted.
func newCompactOption(req *model.Request, sizes []int64, prefix, cached int64, prunes []pruneOption, keep int64, p cutPrices, track *contextTrack) *compactOption {
	if len(sizes) != len(req.Messages) {
		return nil
	}
	split := compact.Split(req.Messages, keep, func(i int) int64 { return sizes[i] })
	if split == 0 {
		return nil
	}
	var kept int64
	for _, n := range sizes[split:] {
		kept += n
	}
	var keptStart int64 = prefix
	for _, n := range sizes[:split] {
		keptStart += n
	}
	for _, c := range prunes {
		if c.pos >= keptStart {
			kept -= c.saved
		}
	}
	summary, out := track.summary, track.summaryOut
	if summary <= 0 {
		summary = expectedSummary
	}
	if out <= 0 {
		out = expectedSummaryOut
	}
	// The summarizing request is the older part, read from the cache.
	call := p.hit*float64(keptStart) + p.miss*instructionTokens + p.out*float64(out)
	// The summary is new text; the kept part that the cache held misses
	// it once.
	return &compactOption{
		keep:  keep,
		after: prefix + summary + max(kept, 0),
		cost:  p.miss*float64(summary) + p.breakCost(cached, keptStart, 0) + call,
	}
}
