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
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	offPeakThen := time.Date(2025, 8, 1, 17, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		model string
		u     harness.Usage
		at    time.Time
		want  float64
		known bool
	}{
		{"split input", "deepseek-chat", harness.Usage{InputTokens: 1000, CacheHitTokens: 600, CacheMissTokens: 400, OutputTokens: 200}, now, (400*0.28 + 600*0.028 + 200*0.42) / 1e6, true},
		{"no cache report", "deepseek-reasoner", harness.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, now, 0.28 + 0.42, true},
		{"off-peak while offered, chat", "deepseek-chat", harness.Usage{InputTokens: 1_000_000}, offPeakThen, 0.14, true},
		{"off-peak while offered, reasoner", "deepseek-reasoner", harness.Usage{InputTokens: 1_000_000}, offPeakThen, 0.07, true},
		{"off-peak wraps midnight", "deepseek-chat", harness.Usage{InputTokens: 1_000_000}, time.Date(2025, 8, 1, 0, 10, 0, 0, time.UTC), 0.14, true},
		{"peak then", "deepseek-chat", harness.Usage{InputTokens: 1_000_000}, time.Date(2025, 8, 1, 10, 0, 0, 0, time.UTC), 0.28, true},
		{"off-peak hours after it ended", "deepseek-chat", harness.Usage{InputTokens: 1_000_000}, time.Date(2026, 1, 1, 17, 0, 0, 0, time.UTC), 0.28, true},
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
	_, ok = tb.Price("deepseek-chat")
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
