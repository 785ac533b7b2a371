package permission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-harness/harness/tools"
)

// NarrowRecord is the name under which a tool records a Narrowing
// through tools.Env.Record (the skill tool does, for a skill's
// allowed-tools). The loop (package agent) applies every narrowing
// recorded in a turn to the rest of that turn, on top of its policy,
// and rebuilds them from the log when a paused turn is resumed.
const NarrowRecord = "permission_narrowing"

// Narrowing limits what a turn may call from some point on to what its
// rules allow, whatever the policy allows: a call must match one of
// Allow (in the rules' syntax: Read, Bash(git status:*), mcp__github)
// or be one of the Exempt tools. It never allows anything the policy
// does not. Several narrowings of a turn all apply.
type Narrowing struct {
	// By names what narrowed, for the denial's reason ("the skill
	// pdf").
	By string `json:"by"`
	// Allow are the rules a call must match.
	Allow []string `json:"allow"`
	// Exempt are tool names that stay callable (the skill tool itself).
	Exempt []string `json:"exempt,omitempty"`
}

// Permits reports whether the narrowing lets call run, and when it does
// not, the reason a denial gives. A rule that does not parse permits
// nothing (the narrowing fails closed); the reason says which.
func (n Narrowing) Permits(call *tools.Call) (bool, string) {
	if slices.Contains(n.Exempt, call.Name) {
		return true, ""
	}
	by := n.By
	if by == "" {
		by = "a narrowing of this turn"
	}
	p, err := New(Rules{Allow: n.Allow, Home: "/"})
	if err != nil {
		return false, fmt.Sprintf("%s limits the tools of this turn, and its rules do not parse (%v), so no call outside %s is allowed", by, err, strings.Join(n.Exempt, ", "))
	}
	if d := p.Decide(call); d.List == "allow" {
		return true, ""
	}
	allowed := "nothing"
	if len(n.Allow) > 0 {
		allowed = strings.Join(n.Allow, ", ")
	}
	return false, fmt.Sprintf("%s limits the tools of this turn to %s; the %s call is not among them", by, allowed, call.Name)
}
