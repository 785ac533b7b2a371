package model

import (
	"fmt"

	"github.com/go-harness/harness"
)

// FixCallIDs gives every tool call of msg, an assembled answer, an id
// new to its session, in place. It is the rule the agent loop applies to
// every answer, for hosts that run model calls themselves.
//
// Providers reuse ids across steps (call_0 in every step), and a result,
// a pruning or a search hit must name one call. So a call without an id,
// or with one that an earlier call of the session (used) or of this
// message has, gets "call_t<turn>_s<step>_<n>", with a further suffix if
// even that is taken. The new id depends only on turn, step, the message
// and used: replaying the same log gives the same ids.
func FixCallIDs(msg harness.Message, turn, step int, used func(id string) bool) {
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
