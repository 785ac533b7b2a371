package permission_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// argsTool is a tool with a command argument, registered under a
// built-in tool's name so the policy knows what it touches.
func argsTool(name string) tools.Tool {
	type in struct {
		Command string `json:"command"`
	}
	return tools.Define(tools.Spec{Name: name, Description: "A tool.", SideEffects: true},
		func(context.Context, *tools.Call, in) (*harness.ToolResult, error) {
			return harness.TextResult("ok"), nil
		})
}

// TestDecideDoesNotParseAgain: once the registry checked a call, its
// text is not read again: the decision stands on the decoded value.
func TestDecideDoesNotParseAgain(t *testing.T) {
	pol, err := permission.New(permission.Rules{Deny: []string{"Bash(rm:*)"}})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(argsTool("bash"))
	require.NoError(t, err)
	raw, _ := json.Marshal(map[string]string{"command": "rm -rf build"})
	call := &tools.Call{ID: "c1", Name: "bash", Arguments: string(raw), Env: &tools.Env{Cwd: "/w"}}
	require.Nil(t, reg.Check(call))
	call.Arguments = `{"command":"ls"}`
	d := pol.Decide(call)
	assert.Equal(t, permission.Deny, d.Outcome, d.Reason)
	assert.Equal(t, "rm -rf build", d.Preview)
}
