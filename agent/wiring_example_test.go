package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/session"
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
	model := openai.DeepSeek("sk-...")

	workspace, _ := fslocal.New(dir)
	store := session.NewJSONL(sessionsDir)
	toolset := slices.Concat(files.Tools(), shell.Tools(), sessiontools.Tools(store), []tools.Tool{images.ReadImage()})
	loop := agent.New(
		agent.WithModel(model),
		agent.WithFileSystem(workspace),
		agent.WithSessionStore(store),
		agent.WithAttachments(session.JSONLAttachments(store)),
		agent.WithOutputStore(spill.NewDir(spillDir)),
		agent.WithTools(toolset...),
		agent.WithMiddleware(spill.Middleware(), guard.NewDeadlines().Middleware()),
		agent.WithStepObservers(guard.NewRepeatGuard(), guard.NewFailureGuard()),
	)
	defer loop.Close()
}

func TestFullWiringIsValid(t *testing.T) {
	workspace, err := fslocal.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer workspace.Close()
	store := session.NewJSONL(t.TempDir())
	loop := agent.New(
		agent.WithModel(openai.DeepSeek("sk-test")),
		agent.WithFileSystem(workspace),
		agent.WithSessionStore(store),
		agent.WithAttachments(session.JSONLAttachments(store)),
		agent.WithOutputStore(spill.NewDir(t.TempDir())),
		agent.WithTools(slices.Concat(files.Tools(), shell.Tools(), sessiontools.Tools(store), []tools.Tool{images.ReadImage()})...),
		agent.WithMiddleware(spill.Middleware(), guard.NewDeadlines().Middleware()),
		agent.WithStepObservers(guard.NewRepeatGuard(), guard.NewFailureGuard()),
	)
	defer loop.Close()
	if err := loop.Err(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range loop.Tools() {
		names = append(names, s.Name)
	}
	want := "read write edit bash bash_output bash_kill shell_open shell_send shell_read shell_close session_search session_read read_image"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools %q, want %q", got, want)
	}
}
