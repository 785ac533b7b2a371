// Command quickstart runs one agent turn and streams its events to the
// terminal. With no API key it runs offline against a scripted model, so
// it works on any machine with Go installed:
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type countIn struct {
	Text string `json:"text" jsonschema:"the text to count words in"`
}

// countWords is the demo tool the scripted model calls.
func countWords() tools.Tool {
	return tools.Define(tools.Spec{
		Name:            "count_words",
		Description:     "Count the words of a text.",
		ConcurrencySafe: true,
	}, func(ctx context.Context, call *tools.Call, in countIn) (*tools.Result, error) {
		n := len(strings.Fields(in.Text))
		return tools.TextResult(fmt.Sprintf("%d words", n)), nil
	})
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	const prompt = "How many words are in the first line of the Go proverbs, \"Don't communicate by sharing memory, share memory by communicating\"?"
	fmt.Println("No API key configured: running a scripted model, offline.")
	model := replay.NewScripted(
		replay.Response{
			Reasoning: "I will count the words with the tool rather than by eye.",
			ToolCalls: []session.ToolCall{replay.ToolCall("call_1", "count_words",
				map[string]any{"text": "Don't communicate by sharing memory, share memory by communicating"})},
		},
		replay.Say("The first Go proverb has 9 words."),
	)
	loop := agent.New(
		agent.WithModel(model),
		agent.WithTools(countWords()),
		agent.WithSystemPrompt("You are a careful assistant. Use tools to check facts."),
	)
	defer loop.Close()
	sess, err := loop.NewSession(ctx, agent.SessionOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("\n> %s\n\n", prompt)
	for ev, err := range sess.Run(ctx, prompt) {
		switch e := ev.(type) {
		case *agent.ReasoningDelta:
			fmt.Printf("(thinking) %s\n", e.Text)
		case *agent.TextDelta:
			fmt.Print(e.Text)
		case *agent.ToolCallStart:
			fmt.Printf("→ %s %s\n", e.Call.Name, e.Call.Arguments)
		case *agent.ToolCallEnd:
			fmt.Printf("← %s\n", e.Result.Text())
		case *agent.TurnEnd:
			fmt.Printf("\n\n[turn %s after %d steps]\n", e.Reason, e.Steps)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
