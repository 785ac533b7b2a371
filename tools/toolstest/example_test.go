package toolstest_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/toolstest"
)

// Call runs a tool with the model's JSON arguments and returns the result
// the model would see.
func ExampleEnv_Call() {
	ctx := context.Background()
	env := toolstest.NewEnv()
	defer env.Close()
	_ = env.FS.SetFile("/project/notes.txt", []byte("alpha\nbeta\n"), 0o644)

	res, err := env.Call(ctx, files.Read(files.Config{}), `{"file_path":"notes.txt"}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, strings.Contains(res.Text(), "beta"))

	// Arguments the schema refuses give the model an error result.
	res, _ = env.Call(ctx, files.Read(files.Config{}), map[string]any{"path": "notes.txt"})
	fmt.Println(res.IsError, res.Code)
	// Output:
	// false true
	// true invalid_arguments
}

type saveArgs struct {
	Text string `json:"text"`
}

// The Env's output store and logger are in memory, so a test can read
// back what a tool saved and logged.
func ExampleNewEnv() {
	ctx := context.Background()
	env := toolstest.NewEnv()
	defer env.Close()

	save := tools.Define(tools.Spec{Name: "save", Description: "Save text whole."},
		func(ctx context.Context, call *tools.Call, in saveArgs) (*harness.ToolResult, error) {
			owner := tools.Owner{Session: call.Env.SessionID, Tool: call.Name, Call: call.ID}
			st, err := call.Env.Output.Save(ctx, owner, strings.NewReader(in.Text))
			if err != nil {
				return nil, err
			}
			call.Env.Logger.Info("saved", "bytes", st.Size)
			return harness.TextResult(st.Locator), nil
		})
	res, err := env.Call(ctx, save, saveArgs{Text: "everything"})
	if err != nil {
		fmt.Println(err)
		return
	}
	rc, err := env.Output.Open(ctx, res.Text())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	saved, _ := io.ReadAll(rc)
	fmt.Println(string(saved))
	fmt.Print(env.Logs())
	// Output:
	// everything
	// level=INFO msg=saved bytes=10
}
