package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
	"github.com/go-harness/harness/tools/permission"
)

// TestServerNamesKeepRulesApart: permission rules name a server's tools
// by the prefix mcp__<server>__, so a server name that holds "__" (server
// "a__b", tool "c" and server "a", tool "b__c" are both mcp__a__b__c) or
// ends with "_" is refused, in a file and in a Config, and so is a pair
// of names that read the same in tool names; the names that are left
// keep every rule for one server off the other servers' tools.
func TestServerNamesKeepRulesApart(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"a__b", `the server name "a__b" cannot be used: it contains "__", and "__" separates the server from the tool`},
		{"a.-_.b", `it contains "__" once written as in tool names ("a_-__b"`},
		{"a_", `it ends with "_"`},
		{"a.", `it ends with "_" once written as in tool names ("a_"`},
		{strings.Repeat("s", 41), "is longer than 40 characters"},
	} {
		_, err := mcp.ParseConfig([]byte(`{"mcpServers": {"` + tc.name + `": {"command": "x"}}}`))
		assert.ErrorIs(t, err, harness.Code("invalid_config"), tc.name)
		assert.ErrorContains(t, err, "mcpServers."+tc.name+`: the server name "`+tc.name+`"`)
		assert.ErrorContains(t, err, tc.want)
		set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{{Name: tc.name, Command: "x"}}})
		assert.Nil(t, set)
		assert.ErrorIs(t, err, harness.Code("invalid_config"), tc.name)
		assert.ErrorContains(t, err, tc.want)
	}
	_, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{{Name: "a.b", Command: "x"}, {Name: "a_b", Command: "y"}}})
	assert.ErrorContains(t, err, `the servers "a.b" and "a_b" have the same name in tool names (mcp__a_b__...)`)

	// The names that are left: a rule for server a matches a's tools
	// and nothing of a_b's or a-b's, whatever their tools are called.
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("a"), p.server("a_b"), p.server("a-b"), p.server("_a")})
	ts := set.Tools()
	_, err = tools.NewRegistry(ts...)
	require.NoError(t, err)
	for _, rule := range []string{"mcp__a", "mcp__a__*"} {
		pol, err := permission.New(permission.Rules{Deny: []string{rule}, Mode: permission.ModeBypass})
		require.NoError(t, err)
		denied := 0
		for _, tool := range ts {
			name := tool.Spec().Name
			d := pol.Decide(&tools.Call{Name: name, Spec: tool.Spec(), Env: env(false)})
			ofA := strings.HasPrefix(name, "mcp__a__")
			assert.Equal(t, ofA, d.Outcome == permission.Deny, "%s under %s: %s", name, rule, d.Outcome)
			if ofA {
				denied++
			}
		}
		assert.Equal(t, 12, denied, "every tool of a, and only those")
	}
}
