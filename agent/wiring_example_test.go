package agent_test

import (
	"errors"
	"log"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/images"
	"github.com/go-harness/harness/tools/sessiontools"
	"github.com/go-harness/harness/tools/shell"
)

// The wiring the README shows, with every context-economy feature on. It
// is compiled with the tests, so the README cannot drift from the API.
func ExampleNew_everything() {
	dir, sessionsDir, spillDir := "/src/app", "/var/lib/agent/sessions", "/var/lib/agent/spill"
	model, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "sk-...", Model: "deepseek-flash"})
	if err != nil {
		log.Fatal(err)
	}

	workspace, _ := fslocal.New(dir)
	store := session.NewJSONL(sessionsDir, session.StoreConfig{})
	toolset := slices.Concat(files.Tools(files.Config{}), shell.Tools(shell.Config{}), sessiontools.Tools(store, sessiontools.Config{}), []tools.Tool{images.ReadImage(images.Config{})})
	spillStore, err1 := spill.NewDir(spillDir, spill.StoreConfig{})
	spilling, err2 := spill.Middleware(spill.Config{})
	deadlines, err3 := guard.Deadlines(guard.DeadlineConfig{})
	repeats, err4 := guard.RepeatGuard(guard.RepeatConfig{})
	failures, err5 := guard.FailureGuard(guard.FailureConfig{})
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		log.Fatal(err)
	}
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithStores(agent.Stores{
			Sessions:    store,
			Files:       workspace,
			Output:      spillStore,
			Attachments: attachments.NewFiles(filepath.Join(sessionsDir, "attachments")),
		}),
		agent.WithTools(toolset...),
		agent.WithHooks(agent.Hooks{
			Tools: []tools.Middleware{spilling, deadlines}, // spill outermost: output cut short by a deadline is still saved
			Steps: []tools.StepObserver{repeats, failures},
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer loop.Close()
}

func TestFullWiringIsValid(t *testing.T) {
	workspace, err := fslocal.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer workspace.Close()
	sessionsDir := t.TempDir()
	store := session.NewJSONL(sessionsDir, session.StoreConfig{})
	spillStore, err1 := spill.NewDir(t.TempDir(), spill.StoreConfig{})
	spilling, err2 := spill.Middleware(spill.Config{})
	deadlines, err3 := guard.Deadlines(guard.DeadlineConfig{})
	repeats, err4 := guard.RepeatGuard(guard.RepeatConfig{})
	failures, err5 := guard.FailureGuard(guard.FailureConfig{})
	model, err6 := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "sk-test", Model: "deepseek-flash"})
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		t.Fatal(err)
	}
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithStores(agent.Stores{
			Sessions:    store,
			Files:       workspace,
			Output:      spillStore,
			Attachments: attachments.NewFiles(filepath.Join(sessionsDir, "attachments")),
		}),
		agent.WithTools(slices.Concat(files.Tools(files.Config{}), shell.Tools(shell.Config{}), sessiontools.Tools(store, sessiontools.Config{}), []tools.Tool{images.ReadImage(images.Config{})})...),
		agent.WithHooks(agent.Hooks{
			Tools: []tools.Middleware{spilling, deadlines}, // spill outermost: output cut short by a deadline is still saved
			Steps: []tools.StepObserver{repeats, failures},
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	var names []string
	for _, s := range loop.Tools() {
		names = append(names, s.Name)
	}
	want := "read write edit bash bash_output bash_kill shell_open shell_send shell_read shell_close session_search session_read read_image"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools %q, want %q", got, want)
	}
}
