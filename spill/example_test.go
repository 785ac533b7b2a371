package spill_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// A tool prints 2,000 lines; the model is sent a preview and the whole
// output stays readable through the store.
func ExampleMiddleware() {
	dir, _ := os.MkdirTemp("", "spill-example")
	defer os.RemoveAll(dir)
	store, err := spill.NewDir(dir, spill.StoreConfig{})
	if err != nil {
		panic(err)
	}
	spilling, err := spill.Middleware(spill.Config{Threshold: 2000})
	if err != nil {
		panic(err)
	}

	var output strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&output, "test %d ok\n", i)
	}
	runTests := tools.Define(tools.Spec{Name: "run_tests", Description: "Run the test suite."},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			return harness.TextResult(output.String()), nil
		})
	model := replay.NewScripted(replay.Call(replay.ToolCall("c1", "run_tests", nil)), replay.Response{Text: "all green"})
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithTools(runTests),
		agent.WithStores(agent.Stores{Output: store}),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling}}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	sess, _ := loop.NewSession(context.Background(), session.Header{})
	for ev := range sess.Run(context.Background(), "run the tests") {
		if end, ok := ev.(*agent.ToolCallEnd); ok {
			preview := end.Result.Text()
			fmt.Println("preview bytes <= 2000:", len(preview) <= 2000)
			fmt.Println("starts with:", strings.SplitN(preview, "\n", 2)[0])
			fmt.Println("ends with:", strings.TrimSpace(preview[strings.LastIndex(strings.TrimSpace(preview), "\n"):]))
			// The notice names the locator as read's file_path.
			_, rest, _ := strings.Cut(preview, `file_path "`)
			locator, _, _ := strings.Cut(rest, `"`)
			rc, _ := store.Open(context.Background(), locator)
			whole, _ := io.ReadAll(rc)
			rc.Close()
			fmt.Println("saved bytes:", len(whole))
		}
	}
	// Output:
	// preview bytes <= 2000: true
	// starts with: test 1 ok
	// ends with: test 2000 ok
	// saved bytes: 24893
}
