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

// A rarely used tool is deferred: the first request lists it in
// load_tools' description, and once the model has loaded it, it is sent
// whole.
func ExampleWithDeferredTools() {
	type urlArgs struct {
		URL string `json:"url" jsonschema:"The page to fetch."`
	}
	fetch := tools.Define(tools.Spec{Name: "web_fetch", Description: "Fetch a web page as text. Only http and https."},
		func(ctx context.Context, call *tools.Call, in urlArgs) (*harness.ToolResult, error) {
			return harness.TextResult("<html>…</html>"), nil
		})
	m := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "load_tools", map[string]any{"names": []string{"web_fetch"}})),
		replay.Response{Text: "loaded"})
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(echoTool(), fetch), agent.WithDeferredTools("web_fetch"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	ctx := context.Background()
	s, _ := loop.NewSession(ctx, session.Header{Cwd: "/ws"})
	for range s.Run(ctx, "read the docs page") {
	}
	for i, req := range m.Requests() {
		fmt.Print("request ", i+1, ":")
		for _, t := range req.Tools {
			fmt.Print(" ", t.Name)
		}
		fmt.Println()
	}
	fmt.Println(s.LoadedTools())
	// Output:
	// request 1: echo load_tools
	// request 2: echo load_tools web_fetch
	// [web_fetch]
}
