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

type addArgs struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

// A loop with one tool, driven by a scripted model, printing the events
// of one turn.
func Example() {
	ctx := context.Background()
	add := tools.Define(tools.Spec{Name: "add", Description: "Add two integers.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in addArgs) (*harness.ToolResult, error) {
			return harness.TextResult(fmt.Sprint(in.A + in.B)), nil
		})
	model := replay.NewScripted(
		replay.Call(replay.ToolCall("call_1", "add", addArgs{A: 2, B: 3})),
		replay.Response{Text: "2 + 3 = 5"},
	)
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(add))
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
	for ev, err := range sess.Run(ctx, "What is 2 + 3?") {
		switch e := ev.(type) {
		case *agent.ToolCallStart:
			fmt.Println("call:", e.Call.Name, e.Call.Arguments)
		case *agent.ToolCallEnd:
			fmt.Println("result:", e.Result.Text())
		case *agent.TextDelta:
			fmt.Println("text:", e.Text)
		case *agent.TurnEnd:
			fmt.Println("end:", e.Reason, "after", e.Steps, "steps")
		}
		if err != nil {
			fmt.Println("error:", err)
		}
	}
	// Output:
	// call: add {"a":2,"b":3}
	// result: 5
	// text: 2 + 3 = 5
	// end: completed after 2 steps
}

// Resuming a session rebuilds its history from the log.
func ExampleLoop_ResumeSession() {
	ctx := context.Background()
	store := sessionStore()
	first, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "Noted: the build uses Go 1.26."})), agent.WithStores(agent.Stores{Sessions: store}))
	if err != nil {
		fmt.Println(err)
		return
	}
	sess, _ := first.NewSession(ctx, session.Header{Cwd: "/src/app"})
	for range sess.Run(ctx, "Remember: we build with Go 1.26.") {
	}
	id := sess.Header().ID
	first.Close()

	second, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "Go 1.26."})), agent.WithStores(agent.Stores{Sessions: store}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Close()
	resumed, err := second.ResumeSession(ctx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range resumed.Messages() {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// user: Remember: we build with Go 1.26.
	// assistant: Noted: the build uses Go 1.26.
}
