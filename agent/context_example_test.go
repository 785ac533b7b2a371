package agent_test

import (
	"fmt"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/pricing"
)

// The context policy is one option. The default decides in dollars with
// the prices of WithPrices; a host picks fixed shares, no cuts at all,
// or gives the price to decide with (the README's "Context economy in
// money" code).
func ExampleContextPolicy() {
	llm := replay.NewScripted()
	for _, opt := range []agent.Option{
		agent.WithPrices(pricing.DeepSeek()),                                                                            // the default policy prices cuts with the model's price
		agent.WithContextPolicy(agent.ContextPolicy{Strategy: agent.ContextThresholds}),                                 // prune above 0.5, compact above 0.8 of the window
		agent.WithContextPolicy(agent.ContextPolicy{Strategy: agent.ContextOff}),                                        // never prune or compact
		agent.WithContextPolicy(agent.ContextPolicy{Price: &pricing.Price{Input: 1.32, CacheHit: 0.044, Output: 3.96}}), // decide with this price
	} {
		loop, err := agent.New(agent.WithModel(llm), opt)
		if err != nil {
			fmt.Println(err)
			return
		}
		loop.Close()
	}
	fmt.Println(agent.ContextCost, agent.ContextThresholds, agent.ContextOff)
	// Output:
	// cost thresholds off
}
