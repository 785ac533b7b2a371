// Package callid holds the one rule that gives a model's tool calls ids
// new to their session, shared by the agent loop and hosts that run model
// calls themselves (the durable-turn example). It imports harness only.
package callid

import (
	"fmt"

	"github.com/go-harness/harness"
)

// Fix gives every call of msg an id new to the session. A call without an
// id, or with an id that an earlier call of the session (used) or of this
// message has, gets "call_t<turn>_s<step>_<n>" (with a further suffix if
// even that is taken): providers reuse ids across steps (call_0 in every
// step), and a result, a pruning or a search hit must name one call. The
// new id depends only on turn, step, the message and used, so replaying
// the same log gives the same ids. Fix changes msg's calls in place.
func Fix(msg harness.Message, turn, step int, used func(id string) bool) {
	seen := map[string]bool{}
	taken := func(id string) bool { return seen[id] || used(id) }
	n := 0
	for _, b := range msg.Content {
		if b.Type != harness.BlockToolCall || b.ToolCall == nil {
			continue
		}
		if id := b.ToolCall.ID; id == "" || taken(id) {
			base := fmt.Sprintf("call_t%d_s%d_%d", turn, step, n)
			id = base
			for k := 2; taken(id); k++ {
				id = fmt.Sprintf("%s_%d", base, k)
			}
			b.ToolCall.ID = id
		}
		seen[b.ToolCall.ID] = true
		n++
	}
}
