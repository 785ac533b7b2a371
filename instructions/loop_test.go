package instructions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/instructions"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/permission"
)

// run runs a turn and returns its events and its end.
func run(t *testing.T, s *agent.Session, prompt string) ([]agent.Event, *agent.TurnEnd) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	for ev := range s.Run(context.Background(), prompt) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	return evs, end
}

// contextEvents returns the ContextLoaded payloads of a session's log.
func contextEvents(t *testing.T, store session.Store, id string) []*session.ContextLoaded {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	var out []*session.ContextLoaded
	for _, e := range tr.Events {
		if c, ok := e.Data.(*session.ContextLoaded); ok {
			out = append(out, c)
		}
	}
	return out
}

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func TestTheLoopLogsTheContextAndNoticesAChange(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "Run the tests with make test.")
	ws, err := fslocal.New(dir)
	require.NoError(t, err)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(replay.Response{Text: "one"}, replay.Response{Text: "two"}, replay.Response{Text: "three"})
	loop, err := agent.New(agent.WithModel(m), agent.WithSystemPrompt("You are careful."),
		agent.WithStores(agent.Stores{Sessions: store, Files: ws}), agent.WithContext(instructions.New(instructions.Config{})))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: dir})
	require.NoError(t, err)

	evs, end := run(t, s, "first")
	require.NoError(t, end.Err)
	want := "You are careful.\n\nInstructions from " + dir + "/AGENTS.md, for work in " + dir + " and below:\n\nRun the tests with make test."
	assert.Equal(t, want, m.Requests()[0].System, "the files follow the system prompt")
	var loaded *agent.ContextLoaded
	for _, ev := range evs {
		if c, ok := ev.(*agent.ContextLoaded); ok {
			loaded = c
		}
	}
	require.NotNil(t, loaded, "the host is told which files were loaded")
	assert.Equal(t, dir+"/AGENTS.md", loaded.Files[0].Path)

	_, end = run(t, s, "second")
	require.NoError(t, end.Err)
	assert.Equal(t, want, m.Requests()[1].System)
	require.Len(t, contextEvents(t, store, s.Header().ID), 1, "an unchanged set is not logged again")

	writeFile(t, filepath.Join(dir, "AGENTS.md"), "Run the tests with go test.")
	_, end = run(t, s, "third")
	require.NoError(t, end.Err)
	assert.Contains(t, m.Requests()[2].System, "Run the tests with go test.")
	logged := contextEvents(t, store, s.Header().ID)
	require.Len(t, logged, 2, "a file edited between turns is noticed and logged")
	assert.NotEqual(t, logged[0].Files[0].Digest, logged[1].Files[0].Digest)
	assert.Equal(t, session.DigestText(logged[1].Files[0].Text), logged[1].Files[0].Digest)
	assert.Equal(t, logged[1].Files, s.Context())
}

func TestNestedFilesAreAnnouncedOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "root rules")
	writeFile(t, filepath.Join(dir, "pkg", "AGENTS.md"), "pkg rules")
	writeFile(t, filepath.Join(dir, "pkg", "a.go"), "package pkg\n")
	writeFile(t, filepath.Join(dir, "pkg", "b.go"), "package pkg\n")
	ws, err := fslocal.New(dir)
	require.NoError(t, err)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "read", map[string]any{"file_path": "pkg/a.go"})}},
		replay.Response{Text: "read a"},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c2", "read", map[string]any{"file_path": "pkg/b.go"})}},
		replay.Response{Text: "read b"},
	)
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(files.Tools(files.Config{})...),
		agent.WithStores(agent.Stores{Sessions: store, Files: ws}), agent.WithContext(instructions.New(instructions.Config{})))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: dir})
	require.NoError(t, err)
	evs, end := run(t, s, "read a")
	require.NoError(t, end.Err)
	var nested []*agent.ContextLoaded
	for _, ev := range evs {
		if c, ok := ev.(*agent.ContextLoaded); ok && c.Nested {
			nested = append(nested, c)
		}
	}
	require.Len(t, nested, 1)
	assert.Equal(t, dir+"/pkg/AGENTS.md", nested[0].Files[0].Path)
	_, end = run(t, s, "read b")
	require.NoError(t, end.Err)

	reqs := m.Requests()
	require.Len(t, reqs, 4)
	count := func(r int) int {
		n := 0
		for _, msg := range reqs[r].Messages {
			n += strings.Count(msg.Text(), "pkg rules")
		}
		return n
	}
	assert.Equal(t, 0, count(0), "before the agent reached pkg")
	assert.Equal(t, 1, count(1), "announced after the step that read pkg/a.go")
	assert.Equal(t, 1, count(3), "not sent again when the agent returns to pkg")
	assert.NotContains(t, reqs[3].System, "pkg rules", "nested files stay out of the prefix")
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, harness.RoleUser, last.Role)
	assert.True(t, strings.HasPrefix(last.Text(), "<system-reminder>\nInstructions from "+dir+"/pkg/AGENTS.md"), "announced after the step's results")

	// A resumed session knows what was announced.
	require.NoError(t, loop.Close())
	m2 := replay.NewScripted(replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c3", "read", map[string]any{"file_path": "pkg/a.go"})}}, replay.Response{Text: "again"})
	loop2, err := agent.New(agent.WithModel(m2), agent.WithTools(files.Tools(files.Config{})...),
		agent.WithStores(agent.Stores{Sessions: store, Files: ws}), agent.WithContext(instructions.New(instructions.Config{})))
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(context.Background(), s.Header().ID)
	require.NoError(t, err)
	_, end = run(t, s2, "read a again")
	require.NoError(t, end.Err)
	n := 0
	for _, msg := range m2.Requests()[1].Messages {
		n += strings.Count(msg.Text(), "pkg rules")
	}
	assert.Equal(t, 1, n, "a resumed session does not announce again")
	nestedLogged := 0
	for _, c := range contextEvents(t, store, s.Header().ID) {
		if c.Nested {
			nestedLogged++
		}
	}
	assert.Equal(t, 1, nestedLogged)
}

// touchTool is a tool with side effects, which the default mode asks
// about.
func touchTool() tools.Tool {
	type in struct {
		Name string `json:"name"`
	}
	return tools.Define(tools.Spec{Name: "touch", Description: "Touch a file.", SideEffects: true},
		func(ctx context.Context, call *tools.Call, a in) (*harness.ToolResult, error) {
			return harness.TextResult("touched " + a.Name), nil
		})
}

func TestAResumedPauseSendsTheLoggedContextNotTheDisk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "version one")
	ws, err := fslocal.New(dir)
	require.NoError(t, err)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	pol, err := permission.New(permission.Rules{Home: "/home/u"})
	require.NoError(t, err)
	opts := func(m *replay.Model) []agent.Option {
		return []agent.Option{agent.WithModel(m), agent.WithTools(touchTool()), agent.WithPermissions(pol),
			agent.WithStores(agent.Stores{Sessions: store, Files: ws}), agent.WithContext(instructions.New(instructions.Config{}))}
	}
	m1 := replay.NewScripted(replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "touch", map[string]any{"name": "x"})}})
	loop1, err := agent.New(opts(m1)...)
	require.NoError(t, err)
	s1, err := loop1.NewSession(context.Background(), session.Header{Cwd: dir})
	require.NoError(t, err)
	_, end := run(t, s1, "touch x")
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	require.NoError(t, loop1.Close())

	writeFile(t, filepath.Join(dir, "AGENTS.md"), "version two")
	ws, err = fslocal.New(dir) // the first loop closed its file system
	require.NoError(t, err)
	m2 := replay.NewScripted(replay.Response{Text: "done"}, replay.Response{Text: "next"})
	loop2, err := agent.New(opts(m2)...)
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(context.Background(), s1.Header().ID)
	require.NoError(t, err)
	for ev := range s2.Resolve(context.Background(), map[string]permission.Answer{"c1": {Allow: true}}) {
		if te, ok := ev.(*agent.TurnEnd); ok {
			require.NoError(t, te.Err)
		}
	}
	require.Len(t, m2.Requests(), 1)
	assert.Contains(t, m2.Requests()[0].System, "version one", "the paused turn goes on with the context it logged")
	assert.NotContains(t, m2.Requests()[0].System, "version two")

	_, end = run(t, s2, "and now")
	require.NoError(t, end.Err)
	assert.Contains(t, m2.Requests()[1].System, "version two", "the next turn reads the files again")
	assert.Len(t, contextEvents(t, store, s1.Header().ID), 2)
}

func TestStrictReplaySendsTheRecordedContext(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "recorded rules")
	writeFile(t, filepath.Join(dir, "pkg", "AGENTS.md"), "recorded pkg rules")
	writeFile(t, filepath.Join(dir, "pkg", "a.go"), "package pkg\n")
	ws, err := fslocal.New(dir)
	require.NoError(t, err)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	rec := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "read", map[string]any{"file_path": "pkg/a.go"})}},
		replay.Response{Text: "read it"},
		replay.Response{Text: "second turn"},
	)
	loop, err := agent.New(agent.WithModel(rec), agent.WithTools(files.Tools(files.Config{})...), agent.WithSystemPrompt("sys"),
		agent.WithStores(agent.Stores{Sessions: store, Files: ws}), agent.WithContext(instructions.New(instructions.Config{})))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: dir})
	require.NoError(t, err)
	for _, p := range []string{"read pkg/a.go", "again"} {
		_, end := run(t, s, p)
		require.NoError(t, end.Err)
	}
	require.NoError(t, loop.Close())
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)

	// The files change after the recording.
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "edited rules")
	writeFile(t, filepath.Join(dir, "pkg", "AGENTS.md"), "edited pkg rules")

	replayWith := func(src agent.ContextSource) error {
		m, err := replay.NewStrict(tr)
		require.NoError(t, err)
		l, err := agent.New(agent.WithModel(m), agent.WithTools(files.Tools(files.Config{})...), agent.WithSystemPrompt("sys"),
			agent.WithStores(agent.Stores{Files: ws}), agent.WithContext(src))
		require.NoError(t, err)
		defer l.Close()
		rs, err := l.NewSession(context.Background(), session.Header{Cwd: dir})
		require.NoError(t, err)
		for _, p := range []string{"read pkg/a.go", "again"} {
			_, end := run(t, rs, p)
			if end.Err != nil {
				return end.Err
			}
		}
		return nil
	}
	require.NoError(t, replayWith(agent.LoggedContext(tr.Events)), "the logged context replays byte for byte")
	err = replayWith(instructions.New(instructions.Config{}))
	require.Error(t, err, "the files as they are now differ from the recording")
	assert.ErrorIs(t, err, harness.CodeReplayDrift)
}
