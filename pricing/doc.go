// Package pricing turns token usage into money: a [Table] of prices per
// model (uncached input, cache-hit input and output tokens, per million,
// with time-of-day discounts as data) and [Table.Cost], the cost of one
// model call at the time it was made.
//
// [DeepSeek] is the built-in table, DeepSeek's published prices; a host
// adds its own models with [Table.With]. The loop (agent.WithPrices)
// puts the cost of each model call and turn on its events, and sums it
// per session; because a call is priced from its logged usage, model and
// time, the same sums come out when a session is resumed.
//
// It imports harness only.
package pricing
