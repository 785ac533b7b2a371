package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/files"
)

const buggy = `package main

import "fmt"

// greeting returns the text main prints.
func greeting() string {
	return "Hello, wrold!"
}

func main() {
	fmt.Println(greeting())
}
`

const prompt = "main.go prints a greeting with a typo in it. Fix the typo."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run runs the quickstart with the command line's arguments: offline
// unless -live is given, whatever keys the environment holds.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	live := flags.Bool("live", false, "run against the model the environment names (DEEPSEEK_API_KEY, or HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL) instead of the offline scripted model")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the only flag is -live", flags.Args())
	}
	workspace, err := os.MkdirTemp("", "harness-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workspace)
	if err := os.WriteFile(filepath.Join(workspace, "main.go"), []byte(buggy), 0o644); err != nil {
		return err
	}
	fsys, err := fslocal.New(workspace)
	if err != nil {
		return err
	}
	defer fsys.Close()

	model, err := pickModel(*live)
	if err != nil {
		return err
	}
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithStores(agent.Stores{Files: fsys}),
		agent.WithTools(files.Tools(files.Config{})...),
		agent.WithSystemPrompt("You are a careful coding agent. Read a file before you change it, and keep changes minimal."),
	)
	if err != nil {
		return err
	}
	defer loop.Close()
	sess, err := loop.NewSession(ctx, session.Header{})
	if err != nil {
		return err
	}

	fmt.Printf("workspace: %s\n\n> %s\n\n", workspace, prompt)
	for ev, err := range sess.Run(ctx, prompt) {
		show(ev)
		if err != nil {
			return err
		}
	}
	fixed, err := os.ReadFile(filepath.Join(workspace, "main.go"))
	if err != nil {
		return err
	}
	fmt.Printf("\nmain.go now says: %s\n", strings.TrimSpace(grep(string(fixed), "return \"")))
	return nil
}

// pickModel returns the model the environment names when live, a
// scripted one otherwise.
func pickModel(live bool) (model.Model, error) {
	if live {
		cfg, err := openai.FromEnv(os.Getenv)
		if errors.Is(err, harness.CodeAuth) {
			return nil, fmt.Errorf("-live needs a key: set DEEPSEEK_API_KEY, or HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL (%w)", err)
		}
		if err != nil {
			return nil, err
		}
		m, err := openai.New(cfg)
		if err != nil {
			return nil, err
		}
		fmt.Printf("Running live against %s (%s).\n", m.Info().Name, cfg.BaseURL)
		return m, nil
	}
	fmt.Println("Running a scripted model, offline: no network, no key used.")
	fmt.Println("(Pass -live to run against DeepSeek with DEEPSEEK_API_KEY, or any endpoint named by HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL.)")
	return replay.NewScripted(
		replay.Response{
			Reasoning: "I should look at main.go before changing anything.",
			ToolCalls: []harness.ToolCall{replay.ToolCall("call_1", "read", map[string]any{"file_path": "main.go"})},
		},
		replay.Call(replay.ToolCall("call_2", "edit", map[string]any{
			"file_path": "main.go", "old_string": `"Hello, wrold!"`, "new_string": `"Hello, world!"`,
		})),
		replay.Response{Text: "Fixed: main.go now greets \"Hello, world!\"."},
	), nil
}

// show prints one event.
func show(ev agent.Event) {
	switch e := ev.(type) {
	case *agent.ReasoningDelta:
		fmt.Printf("(thinking) %s\n", e.Text)
	case *agent.TextDelta:
		fmt.Print(e.Text)
	case *agent.ToolCallStart:
		fmt.Printf("→ %s %s\n", e.Call.Name, e.Call.Arguments)
	case *agent.ToolCallEnd:
		showResult(e.Result)
	case *agent.TurnEnd:
		fmt.Printf("\n\n[turn %s after %d steps", e.Reason, e.Steps)
		if n := e.Usage.InputTokens + e.Usage.OutputTokens; n > 0 {
			fmt.Printf(", %d tokens", n)
		}
		fmt.Println("]")
	}
}

// showResult renders a result by its render intent, never by tool name.
func showResult(r *harness.ToolResult) {
	if r.IsError {
		fmt.Printf("  ✗ %s: %s\n", r.Code, firstLine(r.Text()))
		return
	}
	rd := r.Render
	switch {
	case rd != nil && rd.Kind == harness.RenderDiff && rd.Diff != nil:
		fmt.Printf("  %s (+%d -%d)\n", rd.Diff.Path, rd.Diff.Added, rd.Diff.Removed)
		for _, h := range rd.Diff.Hunks {
			fmt.Printf("  @@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
			for _, l := range h.Lines {
				fmt.Printf("  %s\n", l)
			}
		}
	case rd != nil && rd.Kind == harness.RenderLocations && len(rd.Locations) > 0:
		for _, l := range rd.Locations {
			fmt.Printf("  %s lines %d-%d\n", l.Path, l.StartLine, l.EndLine)
		}
	default:
		fmt.Printf("  %s\n", firstLine(r.Text()))
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func grep(text, word string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			return l
		}
	}
	return ""
}
