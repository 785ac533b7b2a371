package session_test

import (
	"context"
	"fmt"
	"os"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// A JSONL store keeps one file per session; loading derives the history.
func ExampleNewJSONL() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	store := session.NewJSONL(dir, session.StoreConfig{})

	log, err := store.Create(ctx, session.Header{ID: "demo", Cwd: "/src/app"})
	if err != nil {
		fmt.Println(err)
		return
	}
	log.Append(ctx,
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("hello")}},
		&session.AssistantMessage{Step: 1, Finish: "stop", Content: []harness.Block{harness.TextBlock("hi there")}},
		&session.TurnEnded{Reason: session.ReasonCompleted, Steps: 1},
	)
	log.Close()

	tr, err := store.Load(ctx, "demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range tr.Events {
		fmt.Println(e.Seq, e.Type())
	}
	for _, m := range new(session.History).Add(tr.Events...).Messages() {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// 1 user
	// 2 assistant
	// 3 turn_end
	// user: hello
	// assistant: hi there
}
