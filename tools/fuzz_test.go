package tools_test

import (
	"context"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// FuzzCheck sends arbitrary argument text to a registry: it never panics,
// a refused call gets an invalid_arguments result that names the tool, and
// an accepted call decodes in the tool.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"file_path":"a"}`, `{"file_path":"a","offset":2,"limit":3}`, `{"file_path":`, `[]`, `"x"`, `{"file_path":"a","offset":-1}`, `{"file_path":"\u0000"}`, `{"file_path":"a"}garbage`, `{"file_path":"a","offset":2.0}`, `{"file_path":"a","limit":1e2}`, `{"file_path":"a","limit":1.5e1}`} {
		f.Add(s)
	}
	reg, err := tools.NewRegistry(readTool())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		call := &tools.Call{Name: "read", Arguments: args}
		res := reg.Check(call)
		if res != nil {
			if !res.IsError || res.Code != harness.CodeInvalidArguments {
				t.Fatalf("refusal without the invalid_arguments code: %+v", res)
			}
			return
		}
		out := toolexec.Executor()(context.Background(), call)
		// Values the schema allows but Go cannot hold (an integer beyond
		// int range) are refused by the tool, with the same code.
		if out.IsError && out.Code != harness.CodeInvalidArguments {
			t.Fatalf("accepted arguments %q failed in the tool: %s", args, out.Text())
		}
	})
}
