package agent

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/session"
)

// deepseekFlash are DeepSeek flash's prices per token: a hit is 1/50 of
// a miss.
var deepseekFlash = cutPrices{miss: 0.30 / 1e6, hit: 0.006 / 1e6, out: 1.20 / 1e6}

func prunesAt(pos ...int64) []pruneOption {
	var out []pruneOption
	for i, p := range pos {
		out = append(out, pruneOption{call: session.PrunedCall{CallID: string(rune('a' + i))}, pos: p, saved: 5000})
	}
	return out
}

func TestPlanCut(t *testing.T) {
	p := deepseekFlash
	compaction := &compactOption{after: 20_000, cost: p.miss*17_000 + p.hit*100_000 + p.out*2500}
	tests := []struct {
		name string
		s    cutState
		want cutPlan
	}{{
		name: "early superseded reads are not worth the cache they break",
		s:    cutState{est: 100_000, cached: 97_000, forceAt: 950_000, horizon: 64, growth: 3000, prunes: prunesAt(5_000, 20_000)},
		want: cutPlan{prune: 2},
	}, {
		name: "a read near the end is pruned when the saving over the horizon pays",
		// Cutting 5,000 tokens with 2,000 cached tokens after them
		// re-sends those uncached ($0.000588) and saves $0.00003 per
		// request: 64 requests pay for it.
		s:    cutState{est: 100_000, cached: 97_000, forceAt: 950_000, horizon: 64, growth: 3000, prunes: prunesAt(5_000, 90_000)},
		want: cutPlan{prune: 1},
	}, {
		name: "but not over a short horizon",
		s:    cutState{est: 100_000, cached: 97_000, forceAt: 950_000, horizon: 4, growth: 3000, prunes: prunesAt(90_000)},
		want: cutPlan{prune: 1},
	}, {
		name: "nor when a compaction comes before it pays back",
		s:    cutState{est: 100_000, cached: 97_000, forceAt: 106_000, horizon: 64, growth: 3000, prunes: prunesAt(90_000)},
		want: cutPlan{prune: 1},
	}, {
		name: "a read the last step superseded is pruned at once: only new tokens follow it",
		s:    cutState{est: 100_000, cached: 97_000, forceAt: 950_000, horizon: 4, growth: 3000, prunes: prunesAt(92_000)},
		want: cutPlan{prune: 0},
	}, {
		name: "the window forces a cut: compaction makes the most room for its price",
		s:    cutState{est: 120_000, cached: 117_000, forceAt: 115_000, horizon: 64, growth: 3000, prunes: prunesAt(5_000, 20_000), compaction: compaction},
		want: cutPlan{prune: 2, compact: true, forced: true},
	}, {
		name: "forced, with only pruning possible",
		s:    cutState{est: 120_000, cached: 117_000, forceAt: 115_000, horizon: 64, growth: 3000, prunes: prunesAt(5_000, 20_000)},
		want: cutPlan{prune: 0, forced: true},
	}, {
		name: "forced, pruning late reads alone is cheaper per token of room",
		s: cutState{est: 120_000, cached: 117_000, forceAt: 115_000, horizon: 64, growth: 3000, compaction: compaction,
			prunes: []pruneOption{{pos: 70_000, saved: 45_000}}},
		want: cutPlan{prune: 0, forced: true},
	}, {
		name: "voluntary compaction once the history passes the restocking size",
		s:    cutState{est: 200_000, cached: 197_000, forceAt: 950_000, horizon: 64, growth: 3000, compaction: compaction},
		want: cutPlan{compact: true},
	}, {
		name: "not below it",
		s:    cutState{est: 60_000, cached: 57_000, forceAt: 950_000, horizon: 64, growth: 3000, compaction: compaction},
		want: cutPlan{},
	}, {
		name: "nor when too few requests are left to pay for it",
		s:    cutState{est: 200_000, cached: 197_000, forceAt: 950_000, horizon: 4, growth: 3000, compaction: compaction},
		want: cutPlan{},
	}, {
		name: "nor without a growth to plan with",
		s:    cutState{est: 200_000, cached: 197_000, forceAt: 950_000, horizon: 64, compaction: compaction},
		want: cutPlan{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, planCut(tt.s, p))
		})
	}
}

func TestPlanCutFreeHits(t *testing.T) {
	// A cache hit that costs nothing: nothing is ever worth cutting early.
	p := cutPrices{miss: 1e-6, out: 1e-5}
	s := cutState{est: 500_000, cached: 500_000, forceAt: 950_000, horizon: 64, growth: 3000, prunes: prunesAt(499_000 - 5000),
		compaction: &compactOption{after: 10_000, cost: 1e-6 * 9000}}
	assert.Equal(t, cutPlan{prune: 1}, planCut(s, p))
	s.est, s.forceAt = 960_000, 950_000
	assert.True(t, planCut(s, p).compact, "the window still forces a cut")
}

func TestRestock(t *testing.T) {
	p := deepseekFlash
	// √(2·C·d/h): a compaction costing $0.006, with 3,000 tokens a step
	// and hits at $0.006 per million, is worth repeating every 77,460
	// tokens of growth.
	assert.InDelta(t, 20_000+77_460, p.restock(20_000, 0.006, 3000), 1)
	assert.True(t, math.IsInf(p.restock(20_000, 0.006, 0), 1))
	assert.True(t, math.IsInf(cutPrices{miss: 1}.restock(20_000, 0.006, 3000), 1))
}

func TestHorizon(t *testing.T) {
	assert.Equal(t, 4.0, horizon(0))
	assert.Equal(t, 4.0, horizon(7))
	assert.Equal(t, 17.0, horizon(34))
	assert.Equal(t, 64.0, horizon(150))
}

func TestContextTrack(t *testing.T) {
	var c contextTrack
	c.observe(1000) // nothing before it
	assert.Zero(t, c.growth())
	c.last = 1000
	c.observe(4000)
	assert.Zero(t, c.growth(), "one sample is not enough")
	c.last = 4000
	c.observe(5000)
	assert.Equal(t, 2000.0, c.growth())
	c.last = 5000
	c.observe(2000) // a cut made it smaller: not growth
	assert.Equal(t, 2000.0, c.growth())
	assert.Equal(t, 2, countSteps([]session.Event{{Data: &session.AssistantMessage{}}, {Data: &session.UserMessage{}}, {Data: &session.AssistantMessage{}}}))
}

func TestContextStrategyString(t *testing.T) {
	assert.Equal(t, "cost", ContextCost.String())
	assert.Equal(t, "thresholds", ContextThresholds.String())
	assert.Equal(t, "off", ContextOff.String())
	assert.Equal(t, "ContextStrategy(7)", ContextStrategy(7).String())
}
