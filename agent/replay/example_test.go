package replay_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
)

// A scripted model answers each request with the next response and keeps
// the requests, for tests that need no network and no key.
func ExampleNewScripted() {
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("call_1", "read", map[string]any{"file_path": "main.go"})),
		replay.Response{Text: "The file is fine."},
	)
	ctx := context.Background()
	for range 2 {
		for c, err := range m.Stream(ctx, &model.Request{}) {
			if err != nil {
				fmt.Println("error:", err)
				break
			}
			switch c.Type {
			case model.ChunkText:
				fmt.Println("text:", c.Text)
			case model.ChunkFinish:
				fmt.Println("finish:", c.Finish)
			}
		}
	}
	fmt.Println(len(m.Requests()), "requests")
	// Output:
	// finish: tool_calls
	// text: The file is fine.
	// finish: stop
	// 2 requests
}

// A response streams as a model's answer would: a tool call comes in two
// pieces (its id and name, then its arguments), and the finish reason
// comes last.
func ExampleResponse() {
	m := replay.NewScripted(replay.Call(replay.ToolCall("call_1", "bash", `{"command":"go test ./..."}`)))
	for c, err := range m.Stream(context.Background(), &model.Request{}) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		switch c.Type {
		case model.ChunkToolCall:
			fmt.Printf("tool call id=%q name=%q arguments=%q\n", c.ToolCall.ID, c.ToolCall.Name, c.ToolCall.Arguments)
		case model.ChunkFinish:
			fmt.Println("finish:", c.Finish)
		}
	}
	// Output:
	// tool call id="call_1" name="bash" arguments="{\"command\":\"g"
	// tool call id="" name="" arguments="o test ./...\"}"
	// finish: tool_calls
}
