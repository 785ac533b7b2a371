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
