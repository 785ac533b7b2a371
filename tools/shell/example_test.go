package shell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell"
)

// call runs a tool the way the agent loop does, for the examples.
func call(t tools.Tool, env *tools.Env, args any) *harness.ToolResult {
	raw, _ := json.Marshal(args)
	c := &tools.Call{ID: "example", Name: t.Spec().Name, Arguments: string(raw), Spec: t.Spec(), Env: env}
	res, err := t.Execute(context.Background(), c)
	return toolexec.Normalize(c, res, err)
}

func ExampleBash() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	env := &tools.Env{SessionID: "demo", Cwd: dir, State: &tools.State{}}
	defer env.State.Close()

	res := call(shell.Bash(shell.Config{}), env, map[string]any{"command": "echo hello; echo oops >&2; exit 3"})
	text := res.Text()
	// Drop the timing and the directory, which vary.
	fmt.Println(text[:strings.Index(text, " · ")])
	fmt.Println(res.IsError, *res.Render.Terminal.ExitCode)
	// Output:
	// hello
	// [stderr]
	// oops
	// [exit code 3
	// false 3
}

// The persistent shells, picked out of Tools by name: cwd and variables
// persist between commands.
func ExampleTools() {
	tmp, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(tmp)
	dir, _ := filepath.EvalSymlinks(tmp)
	os.Mkdir(dir+"/project", 0o755)
	env := &tools.Env{SessionID: "demo", Cwd: dir, State: &tools.State{}}
	// Closing the session state closes every shell it opened.
	defer env.State.Close()

	ts := slices.DeleteFunc(shell.Tools(shell.Config{}), func(t tools.Tool) bool { return !strings.HasPrefix(t.Spec().Name, "shell_") })
	open, send := ts[0], ts[1]
	call(open, env, map[string]any{})
	call(send, env, map[string]any{"session_id": "sh1", "command": "cd project && export STAGE=test"})
	res := call(send, env, map[string]any{"session_id": "sh1", "command": "echo $STAGE in ${PWD##*/}"})
	text := res.Text()
	fmt.Println(text[:strings.Index(text, "\n")])
	fmt.Println(strings.HasSuffix(text, "[cwd "+dir+"/project]"))
	// Output:
	// test in project
	// true
}
