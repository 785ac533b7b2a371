// Package economy holds the end-to-end measurements of the context
// economy. It has no code of its own: its tests are the measurements.
//
// TestDollars prices scripted long sessions over this module's own Go
// files (a 150-step bug fix, an 80-step exploration in the parent and
// through the explore sub-agent) at DeepSeek's prices: the real loop,
// tools and openai adapter run against an endpoint that emulates
// DeepSeek's prefix cache (openaitest.PrefixCache), under the default
// cost-aware context policy, with pruning and compaction off, with the
// threshold policy and as a naive loop, at a 128k and a 1M window. The
// table goes to the test log (go test -v -run TestDollars); the test
// asserts the targets of issue 29. HARNESS_LONG_TESTS=1 adds
// deepseek-v4-pro's prices.
//
// TestEconomyFigure and TestSubAgentEconomyFigure count the bytes sent:
// a scripted 60-step session with every feature on and with all of them
// off, and a scripted 40-step exploration in the parent and handed to a
// sub-agent, comparing the parent's context.
package economy
