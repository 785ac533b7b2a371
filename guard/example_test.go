package guard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/session"
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
		replay.Response{Text: "the build is failing"},
	)
	repeats, err := guard.RepeatGuard(guard.RepeatConfig{})
	if err != nil {
		panic(err)
	}
	failures, err := guard.FailureGuard(guard.FailureConfig{})
	if err != nil {
		panic(err)
	}
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithTools(status),
		agent.WithHooks(agent.Hooks{Steps: []tools.StepObserver{repeats, failures}}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	sess, _ := loop.NewSession(context.Background(), session.Header{})
	for ev := range sess.Run(context.Background(), "is the build green?") {
		if r, ok := ev.(*agent.ReminderAdded); ok {
			fmt.Printf("step %d, %s: %s\n", r.Step, r.Source, r.Text)
		}
	}
	// Output:
	// step 3, repeat_guard: You have called status 3 times in a row with the same arguments. Repeating a call gives the same result: use the one you have, or change your approach.
}

// Backstops by family, per tool, and above a tool's own deadline: the
// time a call has, as the tool sees it on its context.
func ExampleDeadlines() {
	mw, err := guard.Deadlines(guard.DeadlineConfig{
		Families: map[tools.Family]time.Duration{tools.FamilyNetwork: 20 * time.Minute},
		Tools:    map[string]time.Duration{"deploy": time.Hour},
	})
	if err != nil {
		panic(err)
	}
	show := mw(tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
		deadline, _ := ctx.Deadline()
		fmt.Println(call.Name, time.Until(deadline).Round(time.Minute))
		return harness.TextResult("ok")
	}))
	for _, spec := range []tools.Spec{
		{Name: "read", Family: tools.FamilyLocal},
		{Name: "fetch", Family: tools.FamilyNetwork},
		{Name: "bash", Family: tools.FamilyProcess, Deadline: 10 * time.Minute},
		{Name: "deploy", Family: tools.FamilyProcess},
	} {
		show(context.Background(), &tools.Call{Name: spec.Name, Spec: spec})
	}
	_, err = guard.Deadlines(guard.DeadlineConfig{CancelWait: -time.Second})
	fmt.Println(err)
	// Output:
	// read 1m0s
	// fetch 20m0s
	// bash 15m0s
	// deploy 1h0m0s
	// guard: DeadlineConfig.CancelWait is -1s: it must not be negative (zero means the default)
}
