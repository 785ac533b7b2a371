package agent_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// A parent hands a search to a read-only sub-agent with the task tool;
// the host sees the child's events tagged with its session and the
// parent's call.
func ExampleWithSubAgents() {
	ctx := context.Background()
	find := tools.Define(tools.Spec{Name: "find", Description: "Find a word.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			return harness.TextResult(in.Text + " is on line 7"), nil
		})
	parent := replay.NewScripted(
		replay.Call(replay.ToolCall("call_1", "task", map[string]string{"agent": "explore", "description": "find it", "prompt": "Where is greet?"})),
		replay.Response{Text: "greet is on line 7."},
	)
	child := replay.NewScripted(
		replay.Call(replay.ToolCall("call_a", "find", echoIn{Text: "greet"})),
		replay.Response{Text: "Line 7."},
	)
	loop, err := agent.New(agent.WithModel(parent), agent.WithTools(find),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{
			Name: "explore", Description: "Searches and reports.", System: "Search, then report in one line.",
			Tools: []string{"find"}, Model: child,
		}}}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	sess, err := loop.NewSession(ctx, session.Header{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range sess.Run(ctx, "Where is greet?") {
		switch e := ev.(type) {
		case *agent.SubAgentEvent:
			if end, ok := e.Event.(*agent.ToolCallEnd); ok {
				fmt.Printf("  %s (under %s): %s -> %s\n", e.Agent, e.Call, end.Call.Name, end.Result.Text())
			}
		case *agent.ToolCallEnd:
			fmt.Printf("%s -> %s\n", e.Call.Name, e.Result.Text())
		case *agent.TurnEnd:
			fmt.Println(e.Reason, e.Steps, "steps")
		}
	}
	// Output:
	//   explore (under call_1): find -> greet is on line 7
	// task -> Line 7.
	// completed 2 steps
}
