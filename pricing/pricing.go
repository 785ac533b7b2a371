package pricing

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/catalog"
)

// Price is what one model's tokens cost, per million tokens, in the
// table's currency.
type Price struct {
	// Input is the price of input tokens that missed the provider's
	// prefix cache (all input tokens when it reports no cache use).
	Input float64 `json:"input"`
	// CacheHit is the price of input tokens served from the cache.
	CacheHit float64 `json:"cache_hit"`
	// CacheWrite is the price of input tokens written to the cache
	// (harness.Usage.CacheWriteTokens), where the provider bills
	// writing apart, as Anthropic does; 0 prices them as Input.
	CacheWrite float64 `json:"cache_write,omitempty"`
	// Output is the price of output tokens, reasoning included.
	Output float64 `json:"output"`
	// LongPrompt, when set, prices every token of a call whose prompt
	// (harness.Usage.InputTokens) is longer than LongPrompt.Above tokens
	// instead of the prices above, as some providers bill long prompts.
	LongPrompt *LongPrompt `json:"long_prompt,omitempty"`
	// Discounts are time-of-day reductions (off-peak hours), as the
	// provider publishes them; the first that applies at a call's time
	// is used.
	Discounts []Discount `json:"discounts,omitempty"`
}

// LongPrompt is the price band of long prompts: the prices of a call
// whose prompt is longer than Above tokens.
type LongPrompt struct {
	Above      int64   `json:"above"`
	Input      float64 `json:"input"`
	CacheHit   float64 `json:"cache_hit"`
	CacheWrite float64 `json:"cache_write,omitempty"`
	Output     float64 `json:"output"`
}

// Discount is a reduction during a daily window of UTC time, valid
// between two dates.
type Discount struct {
	// Start and End bound the daily window as offsets from UTC
	// midnight; a window with End before Start wraps past midnight
	// (16:30 to 00:30, say).
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	// Off is the fraction taken off every price in the window, in
	// (0, 1]: 0.5 is half price.
	Off float64 `json:"off"`
	// From and Until bound when the discount is offered at all; a zero
	// time is unbounded.
	From  time.Time `json:"from,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Days are the UTC weekdays the window applies on; none means every
	// day.
	Days []time.Weekday `json:"days,omitempty"`
}

// applies reports whether the discount is in force at t.
func (d Discount) applies(t time.Time) bool {
	t = t.UTC()
	if !d.From.IsZero() && t.Before(d.From) || !d.Until.IsZero() && !t.Before(d.Until) {
		return false
	}
	if len(d.Days) > 0 && !slices.Contains(d.Days, t.Weekday()) {
		return false
	}
	y, m, day := t.Date()
	tod := t.Sub(time.Date(y, m, day, 0, 0, 0, 0, time.UTC))
	if d.Start <= d.End {
		return tod >= d.Start && tod < d.End
	}
	return tod >= d.Start || tod < d.End
}

// Table holds the prices of models by their provider ids, in one
// currency. It is immutable: With returns a new table.
type Table struct {
	currency string
	prices   map[string]Price
}

// NewTable returns a table of prices in currency (an ISO 4217 code such
// as "USD"). A negative or non-finite price, or a discount outside
// (0, 1] or with a window outside one day, is an error.
func NewTable(currency string, prices map[string]Price) (*Table, error) {
	if currency == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "pricing: no currency; name one such as \"USD\""}
	}
	t := &Table{currency: currency, prices: make(map[string]Price, len(prices))}
	for name, p := range prices {
		if err := p.validate(name); err != nil {
			return nil, err
		}
		t.prices[name] = p
	}
	return t, nil
}

func (p Price) validate(name string) error {
	bad := func(what string) error {
		return &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("pricing: model %q: %s", name, what)}
	}
	if name == "" {
		return bad("the model id is empty")
	}
	prices := []float64{p.Input, p.CacheHit, p.CacheWrite, p.Output}
	if lp := p.LongPrompt; lp != nil {
		if lp.Above <= 0 {
			return bad(fmt.Sprintf("the long-prompt band starts above %d tokens, not a positive number", lp.Above))
		}
		prices = append(prices, lp.Input, lp.CacheHit, lp.CacheWrite, lp.Output)
	}
	for _, v := range prices {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return bad(fmt.Sprintf("price %v is not a finite amount of at least 0", v))
		}
	}
	for _, d := range p.Discounts {
		if !(d.Off > 0 && d.Off <= 1) {
			return bad(fmt.Sprintf("discount %v is not a fraction in (0, 1]", d.Off))
		}
		if d.Start < 0 || d.Start >= 24*time.Hour || d.End < 0 || d.End > 24*time.Hour {
			return bad("a discount window lies outside one day (offsets from 0 to 24h)")
		}
	}
	return nil
}

// Currency returns the table's currency.
func (t *Table) Currency() string { return t.currency }

// Price returns the price of model, if the table has it.
func (t *Table) Price(model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	p, ok := t.prices[model]
	return p, ok
}

// With returns a table with the prices of t and those given, which
// replace t's for the same model; t is unchanged. It fails like
// NewTable on a bad price.
func (t *Table) With(prices map[string]Price) (*Table, error) {
	all := maps.Clone(t.prices)
	maps.Copy(all, prices)
	return NewTable(t.currency, all)
}

// Cost returns what a model call with usage u cost at time at, and
// whether the table knows the model. Input tokens the provider reports
// as cache hits are priced as such, those it reports written to the
// cache at the cache-write price, the rest of the input as uncached.
func (t *Table) Cost(model string, u harness.Usage, at time.Time) (float64, bool) {
	p, ok := t.Price(model)
	if !ok {
		return 0, false
	}
	in := max(u.InputTokens, 0)
	input, hitPrice, writePrice, output := p.Input, p.CacheHit, p.CacheWrite, p.Output
	if lp := p.LongPrompt; lp != nil && in > lp.Above {
		input, hitPrice, writePrice, output = lp.Input, lp.CacheHit, lp.CacheWrite, lp.Output
	}
	if writePrice == 0 {
		writePrice = input
	}
	hit := min(max(u.CacheHitTokens, 0), in)
	write := min(max(u.CacheWriteTokens, 0), in-hit)
	miss := in - hit - write
	c := (float64(miss)*input + float64(hit)*hitPrice + float64(write)*writePrice + float64(max(u.OutputTokens, 0))*output) / 1e6
	for _, d := range p.Discounts {
		if d.applies(at) {
			c *= 1 - d.Off
			break
		}
	}
	return c, true
}

// DeepSeek returns DeepSeek's published API prices in US dollars per
// million tokens, for every id its API serves: deepseek-flash (V4.1
// Flash: $0.30 uncached input, $0.006 cache hits, $1.20 output),
// deepseek-v4-pro ($1.32, $0.044, $3.96), and the legacy ids
// deepseek-v4-flash and deepseek-v4-flash-vision-exp, which V4.1 Flash
// answers at the Flash price. Those are the peak prices; off-peak is
// half price, as data: peak hours are 01:00-04:00 and 06:00-10:00 UTC
// (09:00-12:00 and 14:00-18:00 in Beijing) on weekdays, every other hour
// and weekends are off-peak. Chinese public holidays, which DeepSeek
// also bills off-peak, are not in the table: a call on one is priced at
// the weekday rate. Hosts with other prices, or prices that changed, add
// their own with [Table.With].
func DeepSeek() *Table {
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	weekend := []time.Weekday{time.Saturday, time.Sunday}
	offPeak := []Discount{
		{Start: 0, End: time.Hour, Off: 0.5, Days: weekdays},
		{Start: 4 * time.Hour, End: 6 * time.Hour, Off: 0.5, Days: weekdays},
		{Start: 10 * time.Hour, End: 24 * time.Hour, Off: 0.5, Days: weekdays},
		{Start: 0, End: 24 * time.Hour, Off: 0.5, Days: weekend},
	}
	t := &Table{currency: "USD", prices: map[string]Price{}}
	for _, m := range catalog.DeepSeekModels() {
		p := priceOf(m)
		p.Discounts = offPeak
		t.prices[m.ID] = p
	}
	return t
}

// Anthropic returns Anthropic's published API prices for its Claude
// models in US dollars per million tokens: uncached input, cache reads,
// 5-minute cache writes (1.25 times the input price) and output, such as
// claude-sonnet-5-5 at $2, $0.10, $2.50 and $10, claude-opus-5-5 at $4,
// $0.20, $5 and $20, and claude-haiku-5-5 at $0.10, $0.01, $0.125 and
// $0.50 (five times that for a prompt over 100,000 tokens). Writes with
// the one-hour lifetime cost twice the input price; a host that asks
// for them (anthropic.Config.CacheTTL) prices them with [Table.With].
func Anthropic() *Table {
	t := &Table{currency: "USD", prices: map[string]Price{}}
	for _, m := range catalog.AnthropicModels() {
		t.prices[m.ID] = priceOf(m)
	}
	return t
}

// Builtin returns every built-in price table in one: DeepSeek's and
// Anthropic's, for a host whose models come from either (a fallback
// from one provider to the other, say).
func Builtin() *Table {
	t := DeepSeek()
	maps.Copy(t.prices, Anthropic().prices)
	return t
}

// priceOf is the Price of a catalog entry.
func priceOf(m catalog.Model) Price {
	p := Price{Input: m.Input, CacheHit: m.CacheHit, CacheWrite: m.CacheWrite, Output: m.Output}
	if lp := m.LongPrompt; lp != nil {
		p.LongPrompt = &LongPrompt{Above: lp.Above, Input: lp.Input, CacheHit: lp.CacheHit, CacheWrite: lp.CacheWrite, Output: lp.Output}
	}
	return p
}
