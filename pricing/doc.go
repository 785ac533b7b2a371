// Package pricing turns token usage into money: a [Table] of prices per
// model (uncached input, cache-hit input, cache-write input and output
// tokens, per million, with a band for long prompts and time-of-day
// discounts as data) and [Table.Cost], the cost of one model call at the
// time it was made.
//
// The built-in tables hold the providers' published prices for every id
// they serve: [DeepSeek], [Anthropic], and [Builtin] with both. A host
// adds its own models with [Table.With]. The loop (agent.WithPrices)
// puts the cost of each model call and turn on its events, and sums it
// per session; because a call is priced from its logged usage, model and
// time, the same sums come out when a session is resumed, and a call a
// fallback model answered is priced as that model's.
//
// It imports harness and the module's internal model catalog, the one
// list of served ids that the adapters' catalogs read too.
package pricing
