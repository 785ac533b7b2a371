package guard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/tools"
)

// The model runs the same command three times; the third result is
// followed by a reminder.
func ExampleRepeatGuard() {
	status := tools.Define(tools.Spec{Name: "status", Description: "Show the build status."},
		func(ctx context.Context, call *tools.Call, in struct {
			Verbose bool `json:"verbose,omitempty"`
		}) (*harness.ToolResult, error) {
			return harness.TextResult("build: failing"), nil
		})
	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "status", `{"verbose":true}`)),
		replay.Call(replay.ToolCall("c2", "status", `{ "verbose": true }`)),
		replay.Call(replay.ToolCall("c3", "status", `{"verbose":true}`)),
		replay.Say("the build is failing"),
	)
	loop := agent.New(
		agent.WithModel(model),
		agent.WithTools(status),
		agent.WithStepObservers(guard.NewRepeatGuard(), guard.NewFailureGuard()),
	)
	defer loop.Close()
	sess, _ := loop.NewSession(context.Background(), agent.SessionOptions{})
	for ev := range sess.Run(context.Background(), "is the build green?") {
		if r, ok := ev.(*agent.ReminderAdded); ok {
			fmt.Printf("step %d, %s: %s\n", r.Step, r.Source, r.Text)
		}
	}
	// Output:
	// step 3, repeat_guard: You have called status 3 times in a row with the same arguments. Repeating a call gives the same result: use the one you have, or change your approach.
}

// Backstops by family, per tool, and above a tool's own deadline.
func ExampleDeadlines() {
	ds := guard.NewDeadlines(
		guard.FamilyDeadline(tools.FamilyNetwork, 20*time.Minute),
		guard.ToolDeadline("deploy", time.Hour),
	)
	fmt.Println(ds.Backstop(tools.Spec{Name: "read", Family: tools.FamilyLocal}))
	fmt.Println(ds.Backstop(tools.Spec{Name: "fetch", Family: tools.FamilyNetwork}))
	fmt.Println(ds.Backstop(tools.Spec{Name: "bash", Family: tools.FamilyProcess, Deadline: 10 * time.Minute}))
	fmt.Println(ds.Backstop(tools.Spec{Name: "deploy", Family: tools.FamilyProcess}))
	// Output:
	// 1m0s
	// 20m0s
	// 15m0s
	// 1h0m0s
}
