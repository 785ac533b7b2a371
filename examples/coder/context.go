package main

import "github.com/go-harness/harness/agent"

// contextStrategies are the values of -context.
var contextStrategies = map[string]agent.ContextStrategy{
	"cost":       agent.ContextCost,
	"thresholds": agent.ContextThresholds,
	"off":        agent.ContextOff,
}

// contextPolicy is the loop's context policy for a -context value: cost
// (the default) prunes and compacts only when that saves money at the
// model's prices, or when the window forces it; thresholds prunes above
// half the window and compacts above 0.8 of it; off does neither.
func contextPolicy(name string) (agent.ContextPolicy, error) {
	s, ok := contextStrategies[name]
	if !ok {
		return agent.ContextPolicy{}, usagef("-context is %q; use cost, thresholds or off", name)
	}
	return agent.ContextPolicy{Strategy: s}, nil
}

// contextFlagUsage describes -context for the help text.
const contextFlagUsage = "how the history makes room in the context window: `cost` prunes or compacts only when that saves money at the model's prices " +
	"(a DeepSeek cache hit costs 1/50 of a miss) or when the window forces it; thresholds prunes above half the window and compacts above 0.8; off does neither"

// policyOf is contextPolicy for a value parseFlags accepted.
func policyOf(name string) agent.ContextPolicy {
	p, _ := contextPolicy(name)
	return p
}
