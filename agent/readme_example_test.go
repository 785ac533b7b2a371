package agent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// embed is the README's "Embedding" code, compiled with the tests so the
// README cannot drift from the API.
func embed(ctx context.Context, model model.Model, myTools []tools.Tool, sessionsDir, workspace string) error {
	loop, err := agent.New(
		agent.WithModel(model), // any model.Model: the OpenAI-compatible adapter, or replay.NewScripted in tests
		agent.WithTools(myTools...),
		agent.WithSystemPrompt("You are a careful coding agent."),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(sessionsDir, session.StoreConfig{})}),
	)
	if err != nil {
		return err
	}
	defer loop.Close()

	sess, err := loop.NewSession(ctx, session.Header{Cwd: workspace})
	if err != nil {
		return err
	}
	for ev, err := range sess.Run(ctx, "make the failing test pass") {
		switch e := ev.(type) {
		case *agent.TextDelta:
			fmt.Print(e.Text)
		case *agent.ToolCallEnd:
			fmt.Printf("\n[%s error=%v] %.80s\n", e.Call.Name, e.Result.IsError, e.Result.Text())
		}
		if err != nil { // only the final *agent.TurnEnd carries an error
			return err
		}
	}
	return nil
}

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// greetTool is the README's "Writing a tool" code.
func greetTool() tools.Tool {
	greet := tools.Define(tools.Spec{
		Name:            "greet",
		Description:     "Greet someone by name.",
		ConcurrencySafe: true,
	}, func(ctx context.Context, call *tools.Call, in greetArgs) (*harness.ToolResult, error) {
		return harness.TextResult("hello, " + in.Name), nil
	})
	return greet
}

// The README's code, run offline with a scripted model.
func Example_readme() {
	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "greet", greetArgs{Name: "Ada"})),
		replay.Response{Text: "Greeted Ada."},
	)
	dir, err := os.MkdirTemp("", "readme-sessions")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := embed(context.Background(), llm, []tools.Tool{greetTool()}, dir, "/"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// [greet error=false] hello, Ada
	// Greeted Ada.
}
