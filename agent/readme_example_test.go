package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell"
)

// embed is the README's "Embedding" code, compiled with the tests; the
// code between the readme markers must equal the README's blocks
// (TestReadmeEmbeddingIsTheTestedCode), so the README cannot drift from
// the API.
func embed(ctx context.Context, model model.Model, approve permission.Approver, sessionsDir, dir string) error {
	// readme:begin
	workspace, err := fslocal.New(dir) // the file tools and bash work here, confined to dir
	if err != nil {
		return err
	}
	defer workspace.Close()
	policy, err := permission.New(permission.Rules{ // default mode: reads run, edits and other commands ask
		Allow: []string{"Bash(go test:*)"},
		Deny:  []string{"Read(.env)", "Bash(git push:*)"},
	})
	if err != nil {
		return err
	}
	loop, err := agent.New(
		agent.WithModel(model), // any model.Model: the OpenAI-compatible adapter, or replay.NewScripted in tests
		agent.WithTools(slices.Concat(files.Tools(files.Config{}), []tools.Tool{shell.Bash(shell.Config{})})...),
		agent.WithSystemPrompt("You are a careful coding agent."),
		agent.WithStores(agent.Stores{
			Sessions: session.NewJSONL(sessionsDir, session.StoreConfig{}),
			Files:    workspace, // required by the file tools: New says so without it
		}),
		agent.WithPermissions(policy),
		agent.WithApprover(approve), // without one, a call that asks pauses the turn (Session.Resolve)
	)
	if err != nil {
		return err // a configuration error: no model, an invalid option value, tools the registry refuses
	}
	defer loop.Close()

	sess, err := loop.NewSession(ctx, session.Header{Cwd: workspace.Root()})
	if err != nil {
		return err
	}
	for ev, err := range sess.Run(ctx, "make the failing test pass") {
		switch e := ev.(type) {
		case *agent.TextDelta:
			fmt.Print(e.Text)
		case *agent.ToolCallEnd:
			first, _, _ := strings.Cut(e.Result.Text(), "\n")
			fmt.Printf("\n[%s error=%v] %.80s\n", e.Call.Name, e.Result.IsError, first)
		}
		if err != nil { // only the final *agent.TurnEnd carries an error
			return err
		}
	}
	// readme:end
	return nil
}

// readme:begin

// approve asks at the terminal: y runs the call; a runs it and allows
// calls like it for the rest of the session (the policy's suggestion).
func approve(ctx context.Context, req permission.Request) (permission.Answer, error) {
	fmt.Printf("%s: %s\nallow? [y/N/a] ", req.Decision.Preview, req.Decision.Reason)
	var answer string
	fmt.Scanln(&answer)
	switch answer {
	case "y":
		return permission.Answer{Allow: true}, nil
	case "a":
		return permission.Answer{Allow: true, Remember: req.Decision.Suggest}, nil
	}
	return permission.Answer{Feedback: "the user said no"}, nil
}

// readme:end

var _ permission.Approver = approve

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// greetTool is the README's "Writing a tool" code.
func greetTool() tools.Tool {
	greet := tools.Define(tools.Spec{
		Name:            "greet",
		Description:     "Greet someone by name.",
		ConcurrencySafe: true,
	}, func(ctx context.Context, call *tools.Call, in greetArgs) (*harness.ToolResult, error) {
		return harness.TextResult("hello, " + in.Name), nil
	})
	return greet
}

// The README's code, run offline with a scripted model and an approver
// that says yes: the command asks, the approver allows it, and the file is
// on disk in the workspace.
func Example_readme() {
	llm := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "bash", map[string]string{"command": "echo hello | tee notes.txt"})),
		replay.Response{Text: "Wrote notes.txt."},
	)
	sessions, err1 := os.MkdirTemp("", "readme-sessions")
	dir, err2 := os.MkdirTemp("", "readme-workspace")
	if err1 != nil || err2 != nil {
		fmt.Println(err1, err2)
		return
	}
	defer os.RemoveAll(sessions)
	defer os.RemoveAll(dir)
	yes := func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		fmt.Printf("asked: %s\n", req.Call.Name)
		return permission.Answer{Allow: true}, nil
	}
	if err := embed(context.Background(), llm, yes, sessions, dir); err != nil {
		fmt.Println(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	fmt.Printf("\nnotes.txt: %q\n", data)
	// Output:
	// asked: bash
	//
	// [bash error=false] hello
	// Wrote notes.txt.
	// notes.txt: "hello\n"
}

// readmeSection returns the go code blocks of the README section under
// heading, in order.
func readmeSection(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	text = text[start+len(heading)+2:]
	if end := strings.Index(text, "\n## "); end >= 0 {
		text = text[:end]
	}
	var blocks []string
	for {
		i := strings.Index(text, "```go\n")
		if i < 0 {
			return blocks
		}
		text = text[i+len("```go\n"):]
		j := strings.Index(text, "```\n")
		if j < 0 {
			t.Fatal("README: a go block is not closed")
		}
		blocks = append(blocks, text[:j])
		text = text[j:]
	}
}

// markedCode returns the regions of a source file between
// "// readme:begin" and "// readme:end" lines, each with the indentation
// of its begin marker taken off every line.
func markedCode(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var regions []string
	var cur *strings.Builder
	var indent string
	for line := range strings.Lines(string(data)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "// readme:begin":
			cur, indent = &strings.Builder{}, line[:strings.Index(line, "//")]
		case trimmed == "// readme:end":
			regions = append(regions, strings.Trim(cur.String(), "\n")+"\n")
			cur = nil
		case cur != nil:
			cur.WriteString(strings.TrimPrefix(line, indent))
		}
	}
	return regions
}

// The README's embedding code is this file's marked code, byte for
// byte, so what the README shows is what compiles and runs above.
func TestReadmeEmbeddingIsTheTestedCode(t *testing.T) {
	got := readmeSection(t, "## Embedding")
	want := markedCode(t, "readme_example_test.go")
	if len(got) != len(want) {
		t.Fatalf("README's Embedding section has %d go blocks, the test marks %d regions", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("README's Embedding block %d differs from the tested code; the tested code is:\n%s", i+1, want[i])
		}
	}
}
