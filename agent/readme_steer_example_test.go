package agent_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
)

// supervise is the README's "Questions, plans, budgets and steering"
// code, compiled with the tests. ask answers the model's questions (a
// terminal prompt, say); more says whether to spend more when a budget
// is reached.
func supervise(ctx context.Context, model model.Model, sessionsDir string,
	ask func(harness.Question) string, more func(session.Spend) bool) error {
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(sessionsDir, session.StoreConfig{})}),
		agent.WithAskUser(func(ctx context.Context, req agent.InputRequest) ([]string, error) {
			answers := make([]string, len(req.Questions))
			for i, q := range req.Questions {
				answers[i] = ask(q) // free text, or one of q.Choices
			}
			return answers, nil
		}),
		agent.WithTodo(),
		agent.WithLimits(agent.Limits{Budget: agent.Budgets{
			Session: agent.Budget{Tokens: 2_000_000}, // input plus output; Cost needs agent.WithPrices
		}}),
	)
	if err != nil {
		return err
	}
	defer loop.Close()
	sess, err := loop.NewSession(ctx, session.Header{})
	if err != nil {
		return err
	}
	events := sess.Run(ctx, "add a -json flag to the CLI")
	for events != nil {
		next := events
		events = nil
		for ev, err := range next {
			switch e := ev.(type) {
			case *agent.TodoUpdated:
				for _, it := range e.Items {
					fmt.Printf("  %-11s %s\n", it.Status, it.Content)
				}
			case *agent.StepEnd:
				if e.Step == 1 {
					// From any goroutine; read before the next model call.
					sess.Steer(ctx, "keep the output stable for scripts")
				}
			case *agent.TurnEnd:
				if e.Reason == session.ReasonAwaitingBudget && more(*sess.Paused().Spend) {
					raised := agent.Budgets{Session: agent.Budget{Tokens: 4_000_000}}
					events = sess.Answer(ctx, agent.Answers{Budget: &raised}) // the same turn goes on
				}
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// The README's supervising code, run offline with a scripted model.
func Example_readmeSupervise() {
	llm := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("t1", "todo", map[string]any{"items": []harness.TodoItem{
			{Content: "add the flag", Status: harness.TodoInProgress}, {Content: "test it", Status: harness.TodoPending}}})},
			Usage: &harness.Usage{InputTokens: 1_500_000, OutputTokens: 600_000}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("q1", "ask_user", map[string]any{"questions": []harness.Question{
			{Question: "Indent the JSON?", Choices: []string{"yes", "no"}}}})}},
		replay.Response{Text: "Done."},
	)
	dir, err := os.MkdirTemp("", "readme-sessions")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ask := func(q harness.Question) string {
		fmt.Printf("asked: %s (%s)\n", q.Question, strings.Join(q.Choices, "/"))
		return "no"
	}
	more := func(sp session.Spend) bool {
		fmt.Printf("budget reached at %d tokens\n", sp.SessionTokens)
		return true
	}
	if err := supervise(context.Background(), llm, dir, ask, more); err != nil {
		fmt.Println(err)
	}
	for _, m := range llm.Requests()[2].Messages[3:] { // after the plan's result
		switch m.Role {
		case harness.RoleUser:
			fmt.Println(m.Text())
		case harness.RoleTool:
			fmt.Println(m.Content[0].ToolResult.Text())
		}
	}
	// Output:
	//   in_progress add the flag
	//   pending     test it
	// budget reached at 2100000 tokens
	// asked: Indent the JSON? (yes/no)
	// keep the output stable for scripts
	// The user answered:
	// 1. Indent the JSON?
	//    no
}
