package pricing_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/pricing"
)

func TestCost(t *testing.T) {
	ds := pricing.DeepSeek()
	// 2026-12-01 is a Tuesday; 2026-12-05 a Saturday.
	peak := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	peak2 := time.Date(2026, 12, 1, 9, 59, 0, 0, time.UTC)
	offPeak := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	between := time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)
	earlyMorning := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	weekendPeakHour := time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC)
	now := peak
	for _, tc := range []struct {
		name  string
		model string
		u     harness.Usage
		at    time.Time
		want  float64
		known bool
	}{
		{"split input, peak", "deepseek-flash", harness.Usage{InputTokens: 1000, CacheHitTokens: 600, CacheMissTokens: 400, OutputTokens: 200}, peak, (400*0.30 + 600*0.006 + 200*1.20) / 1e6, true},
		{"no cache report, pro", "deepseek-v4-pro", harness.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, peak, 1.32 + 3.96, true},
		{"end of the second peak window", "deepseek-flash", harness.Usage{OutputTokens: 1_000_000}, peak2, 1.20, true},
		{"off-peak afternoon: half", "deepseek-flash", harness.Usage{InputTokens: 1_000_000}, offPeak, 0.15, true},
		{"between the peak windows: half", "deepseek-v4-pro", harness.Usage{OutputTokens: 1_000_000}, between, 1.98, true},
		{"before the first peak window: half", "deepseek-flash", harness.Usage{CacheHitTokens: 1_000_000, InputTokens: 1_000_000}, earlyMorning, 0.003, true},
		{"weekend at a peak hour: half", "deepseek-v4-pro", harness.Usage{InputTokens: 1_000_000, CacheHitTokens: 1_000_000}, weekendPeakHour, 0.022, true},
		{"unknown model", "gpt-x", harness.Usage{InputTokens: 5}, now, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ds.Cost(tc.model, tc.u, tc.at)
			assert.Equal(t, tc.known, ok)
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
}

func TestTable(t *testing.T) {
	tb, err := pricing.DeepSeek().With(map[string]pricing.Price{"mine": {Input: 1, CacheHit: 0.5, Output: 2}})
	require.NoError(t, err)
	c, ok := tb.Cost("mine", harness.Usage{InputTokens: 2_000_000, CacheHitTokens: 1_000_000, OutputTokens: 1_000_000}, time.Now())
	assert.True(t, ok)
	assert.InDelta(t, 1+0.5+2, c, 1e-12)
	_, ok = tb.Price("deepseek-flash")
	assert.True(t, ok, "the built-in entries stay")
	assert.Equal(t, "USD", tb.Currency())
	_, ok = pricing.DeepSeek().Price("mine")
	assert.False(t, ok, "With leaves the table it was called on unchanged")

	for name, p := range map[string]pricing.Price{
		"negative": {Input: -1},
		"nan":      {Output: math.NaN()},
		"off zero": {Discounts: []pricing.Discount{{Start: 0, End: time.Hour, Off: 0}}},
		"off big":  {Discounts: []pricing.Discount{{Start: 0, End: time.Hour, Off: 1.5}}},
		"window":   {Discounts: []pricing.Discount{{Start: 25 * time.Hour, End: time.Hour, Off: 0.5}}},
	} {
		_, err := pricing.NewTable("USD", map[string]pricing.Price{"m": p})
		assert.ErrorIs(t, err, harness.CodeInvalidOption, name)
	}
	_, err = pricing.NewTable("", nil)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = pricing.NewTable("USD", map[string]pricing.Price{"": {}})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
}

// Every id DeepSeek's API serves has a price, the legacy Flash ids the
// Flash price (DeepSeek bills them so).
func TestDeepSeekPricesEveryServedID(t *testing.T) {
	ds := pricing.DeepSeek()
	flash, ok := ds.Price("deepseek-flash")
	require.True(t, ok)
	for _, id := range []string{"deepseek-flash", "deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v4-flash-vision-exp"} {
		p, ok := ds.Price(id)
		require.True(t, ok, "DeepSeek serves %s: the table must price it", id)
		assert.NotEmpty(t, p.Discounts, "%s: off-peak discounts", id)
	}
	for _, id := range []string{"deepseek-v4-flash", "deepseek-v4-flash-vision-exp"} {
		p, _ := ds.Price(id)
		assert.Equal(t, flash, p, "%s is billed at the Flash price", id)
	}
}

// Cache writes cost the cache-write price, hits the hit price, the rest
// of the input the input price; without a cache-write price a write
// costs what uncached input does.
func TestCacheWrites(t *testing.T) {
	tb, err := pricing.NewTable("USD", map[string]pricing.Price{
		"claude": {Input: 3, CacheHit: 0.30, CacheWrite: 3.75, Output: 15},
		"plain":  {Input: 1, CacheHit: 0.1, Output: 2},
	})
	require.NoError(t, err)
	u := harness.Usage{InputTokens: 1_000_000, CacheHitTokens: 500_000, CacheMissTokens: 500_000, CacheWriteTokens: 300_000, OutputTokens: 100_000}
	c, ok := tb.Cost("claude", u, time.Now())
	require.True(t, ok)
	assert.InDelta(t, 0.2*3+0.5*0.30+0.3*3.75+0.1*15, c, 1e-12)
	c, _ = tb.Cost("plain", u, time.Now())
	assert.InDelta(t, 0.5*1+0.5*0.1+0.1*2, c, 1e-12, "a write is priced as input")
	// Counts past the input are clamped: hits first, then writes.
	c, _ = tb.Cost("claude", harness.Usage{InputTokens: 100, CacheHitTokens: 80, CacheWriteTokens: 50}, time.Now())
	assert.InDelta(t, (80*0.30+20*3.75)/1e6, c, 1e-15)
}

// A prompt over the long-prompt threshold is priced in the long band,
// every token of the call.
func TestLongPromptBand(t *testing.T) {
	an := pricing.Anthropic()
	short, _ := an.Cost("claude-haiku-5-5", harness.Usage{InputTokens: 100_000, OutputTokens: 1_000_000}, time.Now())
	assert.InDelta(t, 0.1*0.10+0.50, short, 1e-12, "at the threshold: the base band")
	long, _ := an.Cost("claude-haiku-5-5", harness.Usage{InputTokens: 200_000, CacheHitTokens: 100_000, CacheWriteTokens: 50_000, OutputTokens: 1_000_000}, time.Now())
	assert.InDelta(t, 0.05*0.50+0.1*0.05+0.05*0.625+2.50, long, 1e-12)
	_, err := pricing.NewTable("USD", map[string]pricing.Price{"m": {LongPrompt: &pricing.LongPrompt{Above: 0}}})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = pricing.NewTable("USD", map[string]pricing.Price{"m": {LongPrompt: &pricing.LongPrompt{Above: 5, Output: -1}}})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = pricing.NewTable("USD", map[string]pricing.Price{"m": {CacheWrite: math.Inf(1)}})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
}

func TestAnthropicAndBuiltinTables(t *testing.T) {
	an := pricing.Anthropic()
	p, ok := an.Price("claude-sonnet-5-5")
	require.True(t, ok)
	assert.Equal(t, pricing.Price{Input: 2, CacheHit: 0.10, CacheWrite: 2.5, Output: 10}, p)
	// A call with a cache write and a read, at any hour: no discounts.
	c, _ := an.Cost("claude-opus-5-5", harness.Usage{InputTokens: 1_000_000, CacheHitTokens: 600_000, CacheWriteTokens: 300_000, OutputTokens: 10_000},
		time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC))
	assert.InDelta(t, 0.1*4+0.6*0.20+0.3*5+0.01*20, c, 1e-12)
	all := pricing.Builtin()
	for _, id := range []string{"deepseek-flash", "deepseek-v4-flash-vision-exp", "claude-sonnet-5-5", "claude-haiku-4-5"} {
		_, ok := all.Price(id)
		assert.True(t, ok, id)
	}
	_, ok = pricing.DeepSeek().Price("claude-sonnet-5-5")
	assert.False(t, ok, "Builtin leaves the provider tables unchanged")
}
