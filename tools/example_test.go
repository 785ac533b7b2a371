package tools_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

type shoutArgs struct {
	Text string `json:"text" jsonschema:"what to shout"`
}

// Define infers the schema from the argument struct; a Registry checks
// calls against it before they run.
func ExampleDefine() {
	shout := tools.Define(tools.Spec{Name: "shout", Description: "Upper-case text.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in shoutArgs) (*harness.ToolResult, error) {
			return harness.TextResult(strings.ToUpper(in.Text)), nil
		})
	fmt.Println(string(shout.Spec().InputSchema))

	reg, err := tools.NewRegistry(shout)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, args := range []string{`{"text":"hello"}`, `{"txt":"hello"}`} {
		call := &tools.Call{ID: "1", Name: "shout", Arguments: args}
		if res := reg.Check(call); res != nil {
			fmt.Println(res.Code, res.Text()) // the loop sends this to the model
			continue
		}
		res, err := call.Tool().Execute(context.Background(), call)
		fmt.Println(res.Text(), err)
	}
	// Output:
	// {"type":"object","properties":{"text":{"type":"string","description":"what to shout"}},"required":["text"],"additionalProperties":false}
	// HELLO <nil>
	// invalid_arguments The arguments of this shout call do not match its schema: unexpected additional properties ["txt"]. Parameters: text (string, required).
}

// Middleware wraps every call, as net/http middleware wraps handlers.
func ExampleMiddleware() {
	logCalls := func(next tools.Handler) tools.Handler {
		return tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			res := next(ctx, call)
			fmt.Printf("%s -> %q\n", call.Name, res.Text())
			return res
		})
	}
	h := logCalls(tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
		return harness.TextResult("pong")
	}))
	h(context.Background(), &tools.Call{Name: "ping"})
	// Output:
	// ping -> "pong"
}
