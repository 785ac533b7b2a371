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

// Chunks shows the stream a response becomes: a tool call comes in two
// pieces (its id and name, then its arguments), and the finish reason
// comes last.
func ExampleChunks() {
	chunks := replay.Chunks(replay.Call(replay.ToolCall("call_1", "bash", `{"command":"go test ./..."}`)))
	last := chunks[len(chunks)-1]
	fmt.Println(len(chunks), "chunks, finish:", last.Finish)
	// Output:
	// 3 chunks, finish: tool_calls
}
