package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/mcp"
	"github.com/go-harness/harness/tools/shell"
)

// rewindEnv is a workspace on disk with a loop whose sessions take
// checkpoints.
type rewindEnv struct {
	dir   string
	store session.Store
	atts  *attachments.Store
	model *replay.Model
	loop  *agent.Loop
}

// newRewindEnv writes files into a new workspace and builds a loop with
// the file and shell tools (and extra) and checkpoints on.
func newRewindEnv(t *testing.T, files map[string]string, extra ...tools.Tool) *rewindEnv {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return newRewindEnvIn(t, dir, files, extra...)
}

// newRewindEnvIn is newRewindEnv with the workspace in dir.
func newRewindEnvIn(t *testing.T, dir string, files map[string]string, extra ...tools.Tool) *rewindEnv {
	t.Helper()
	writeFiles(t, dir, files)
	e := &rewindEnv{dir: dir, store: session.NewJSONL(t.TempDir(), session.StoreConfig{}), atts: attachments.NewFiles(t.TempDir()), model: replay.NewScripted()}
	e.loop = e.newLoop(t, e.model, extra...)
	return e
}

func (e *rewindEnv) newLoop(t *testing.T, m *replay.Model, extra ...tools.Tool) *agent.Loop {
	t.Helper()
	ws, err := fslocal.New(e.dir)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	loop, err := agent.New(
		agent.WithModel(m),
		agent.WithStores(agent.Stores{Sessions: e.store, Files: ws, Attachments: e.atts}),
		agent.WithTools(slices.Concat(files.Tools(files.Config{}), shell.Tools(shell.Config{}), extra)...),
		agent.WithCheckpoints(checkpoint.Config{}),
	)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	return loop
}

func (e *rewindEnv) session(t *testing.T) *agent.Session {
	t.Helper()
	s, err := e.loop.NewSession(context.Background(), session.Header{Cwd: e.dir})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// tree returns every file, directory and link below dir (without .git)
// with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case fi.Name() == ".git":
			return filepath.SkipDir
		case fi.IsDir():
			out[rel+"/"] = fi.Mode().Perm().String()
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		default:
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = fi.Mode().Perm().String() + " " + string(data)
		}
		return nil
	}))
	return out
}

// turn runs a turn whose model makes the given steps of calls, then
// answers "done".
func (e *rewindEnv) turn(t *testing.T, s *agent.Session, prompt string, steps ...[]harness.ToolCall) []agent.Event {
	t.Helper()
	for _, calls := range steps {
		e.model.Push(replay.Call(calls...))
	}
	e.model.Push(replay.Response{Text: "done"})
	evs, end, err := collect(t, s, context.Background(), prompt)
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	for _, te := range ofType[*agent.ToolCallEnd](evs) {
		require.False(t, te.Result.IsError, "%s: %s", te.Call.Name, te.Result.Text())
	}
	return evs
}

func toolCall(id, name string, args any) harness.ToolCall { return replay.ToolCall(id, name, args) }

// changes returns the plan's changes by path, as "op" or "op skip: why"
// or "op conflict".
func changes(p *checkpoint.Plan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		v := string(c.Op)
		if c.Conflict {
			v += " conflict"
		}
		if c.Skip != "" {
			v += " skip: " + c.Skip
		}
		out[c.Path] = v
	}
	return out
}

// mcpFilesystem connects the reference MCP filesystem server over root,
// or skips.
func mcpFilesystem(t *testing.T, root string) []tools.Tool {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the MCP filesystem server test needs it")
	}
	dir := os.Getenv("HARNESS_MCP_SERVERS")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "harness-ci", "mcp-servers")
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("the MCP filesystem server is not installed in %s: run .ci/run (npm ci from tools/mcp/testdata/npm)", dir)
	}
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{{Name: "fs", Command: node, Args: []string{script, root}}}})
	require.NoError(t, err)
	t.Cleanup(func() { set.Close() })
	return set.Tools()
}

// TestRewindUndoesAnyChange: whatever tool changed the files (the file
// tools, a one-shot bash, a persistent shell, an MCP server), a rewind
// to before the turn brings them back exactly, the dry run says what it
// then does, and the conversation goes on in a fork.
func TestRewindUndoesAnyChange(t *testing.T) {
	start := map[string]string{
		"a.go":         "package a\n\nfunc A() int { return 1 }\n",
		"b.txt":        "old line\nsecond\n",
		"c.txt":        "to be removed\n",
		"sub/keep.txt": "kept\n",
		".gitignore":   "*.log\n",
		"build.log":    "ignored, never touched\n",
	}
	for _, tc := range []struct {
		name  string
		mcp   bool
		steps func(root string) [][]harness.ToolCall
		want  map[string]string // path → op in the plan
	}{
		{"edit", false, func(string) [][]harness.ToolCall {
			return [][]harness.ToolCall{
				{toolCall("r1", "read", map[string]any{"file_path": "a.go"})},
				{toolCall("e1", "edit", map[string]any{"file_path": "a.go", "old_string": "return 1", "new_string": "return 2"})},
			}
		}, map[string]string{"a.go": "modified"}},
		{"write", false, func(string) [][]harness.ToolCall {
			return [][]harness.ToolCall{
				{toolCall("w1", "write", map[string]any{"file_path": "new/dir/n.go", "content": "package n\n"})},
				{toolCall("r1", "read", map[string]any{"file_path": "b.txt"})},
				{toolCall("w2", "write", map[string]any{"file_path": "b.txt", "content": "rewritten\n"})},
			}
		}, map[string]string{"new": "created", "new/dir": "created", "new/dir/n.go": "created", "b.txt": "modified"}},
		{"bash sed -i", false, func(string) [][]harness.ToolCall {
			return [][]harness.ToolCall{{toolCall("b1", "bash", map[string]any{"command": "sed -i 's/old/new/' b.txt"})}}
		}, map[string]string{"b.txt": "modified"}},
		{"bash rm", false, func(string) [][]harness.ToolCall {
			return [][]harness.ToolCall{{toolCall("b1", "bash", map[string]any{"command": "rm c.txt sub/keep.txt && rmdir sub"})}}
		}, map[string]string{"c.txt": "deleted", "sub": "deleted", "sub/keep.txt": "deleted"}},
		{"created directory", false, func(string) [][]harness.ToolCall {
			return [][]harness.ToolCall{{toolCall("b1", "bash", map[string]any{"command": "mkdir -p gen/deep && printf 'x\\ny\\n' > gen/deep/f.txt && chmod +x a.go && ln -s a.go link && echo noise > run.log"})}}
		}, map[string]string{"gen": "created", "gen/deep": "created", "gen/deep/f.txt": "created", "a.go": "modified", "link": "created"}},
		{"persistent shell", false, func(string) [][]harness.ToolCall {
			return [][]harness.ToolCall{
				{toolCall("s1", "shell_open", map[string]any{})},
				{toolCall("s2", "shell_send", map[string]any{"session_id": "sh1", "command": "cd sub && echo from the shell > shell.txt && mv keep.txt moved.txt"})},
				{toolCall("s3", "shell_close", map[string]any{"session_id": "sh1"})},
			}
		}, map[string]string{"sub/shell.txt": "created", "sub/keep.txt": "deleted", "sub/moved.txt": "created"}},
		{"mcp filesystem server", true, func(root string) [][]harness.ToolCall {
			return [][]harness.ToolCall{
				{toolCall("m1", "mcp__fs__write_file", map[string]any{"path": filepath.Join(root, "c.txt"), "content": "written by the server\n"})},
				{toolCall("m2", "mcp__fs__create_directory", map[string]any{"path": filepath.Join(root, "made")})},
			}
		}, map[string]string{"c.txt": "modified", "made": "created"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			var extra []tools.Tool
			root, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			if tc.mcp {
				extra = mcpFilesystem(t, root)
			}
			e := newRewindEnvIn(t, root, start, extra...) // the MCP server's root is the workspace
			s := e.session(t)
			before := tree(t, e.dir)

			e.turn(t, s, "change things", tc.steps(e.dir)...)
			require.NotEqual(t, before, tree(t, e.dir), "the turn changed the files")
			changed := tree(t, e.dir)

			dry, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{DryRun: true})
			require.NoError(t, err)
			assert.Equal(t, 1, dry.Turn)
			assert.Nil(t, dry.Fork, "a dry run makes no fork")
			got := changes(dry.Files)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, changed, tree(t, e.dir), "a dry run changes nothing")

			res, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{})
			require.NoError(t, err)
			after := tree(t, e.dir)
			if ignored, ok := changed["run.log"]; ok {
				assert.Equal(t, ignored, after["run.log"], "an ignored file is never touched")
				delete(after, "run.log")
			}
			assert.Equal(t, before, after, "the files are as before the turn")
			assert.Equal(t, public(dry.Files), public(res.Files), "the dry run said what the rewind did")
			require.NotNil(t, res.Fork)
			defer res.Fork.Close()
			assert.Equal(t, s.Header().ID, res.Fork.Header().Parent)
			assert.Equal(t, res.Seq, res.Fork.Header().ForkSeq)
			assert.Empty(t, res.Fork.Messages(), "the conversation is back before its first turn")
			assert.Len(t, s.Messages(), 2+2*len(tc.steps(e.dir)), "the original conversation stays")
		})
	}
}

// TestRewindToAnEarlierTurn: going back to the start of turn 2 keeps
// turn 1's changes, and the fork continues from turn 1.
func TestRewindToAnEarlierTurn(t *testing.T) {
	e := newRewindEnv(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
	s := e.session(t)
	e.turn(t, s, "one", []harness.ToolCall{toolCall("b1", "bash", map[string]any{"command": "echo a1 > a.txt"})})
	afterOne := tree(t, e.dir)
	e.turn(t, s, "two", []harness.ToolCall{toolCall("b2", "bash", map[string]any{"command": "echo b2 > b.txt && echo a2 > a.txt"})})
	e.turn(t, s, "three", []harness.ToolCall{toolCall("b3", "bash", map[string]any{"command": "touch c.txt"})})

	points, err := s.RewindPoints(context.Background())
	require.NoError(t, err)
	require.Len(t, points, 3)
	assert.Equal(t, "two", points[1].Prompt)
	assert.NotZero(t, points[1].Seq)
	assert.Equal(t, 2, points[1].Modified, "turn two changed a.txt and b.txt")
	assert.Equal(t, []string{"a.txt", "b.txt"}, points[1].Paths)

	res, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: 2}, agent.RewindOptions{ForkID: "branch-2"})
	require.NoError(t, err)
	assert.Equal(t, afterOne, tree(t, e.dir))
	assert.Equal(t, map[string]string{"a.txt": "modified", "b.txt": "modified", "c.txt": "created"}, changes(res.Files))
	fork := res.Fork
	require.NotNil(t, fork)
	defer fork.Close()
	assert.Equal(t, "branch-2", fork.Header().ID)
	msgs := fork.Messages()
	require.NotEmpty(t, msgs)
	assert.Equal(t, "one", msgs[0].Content[0].Text, "the fork's history holds turn one only")
	for _, m := range msgs {
		for _, b := range m.Content {
			assert.NotEqual(t, "two", b.Text)
		}
	}

	// The fork goes on like any session; the original is untouched.
	e.turn(t, fork, "two, again", []harness.ToolCall{toolCall("b4", "bash", map[string]any{"command": "echo other > b.txt"})})
	tr, err := e.store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	users := 0
	for _, ev := range tr.Events {
		if _, ok := ev.Data.(*session.UserMessage); ok {
			users++
		}
	}
	assert.Equal(t, 3, users, "the original keeps its three turns")
	infos, err := e.store.List(context.Background(), session.ListOptions{Workspace: e.dir})
	require.NoError(t, err)
	assert.Len(t, infos, 2, "the original and its branch")

	// Undo in the fork: back to before "two, again", where the rewind
	// left the files.
	res2, err := fork.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{Scope: agent.RewindFiles})
	require.NoError(t, err)
	assert.Equal(t, afterOne, tree(t, e.dir))
	assert.Nil(t, res2.Fork)
}

// TestRewindFilesOnly: the conversation stays and is told; the ledger
// forgets the restored files, so the model must read them again.
func TestRewindFilesOnly(t *testing.T) {
	e := newRewindEnv(t, map[string]string{"a.go": "package a\n"})
	s := e.session(t)
	e.turn(t, s, "edit", []harness.ToolCall{toolCall("r1", "read", map[string]any{"file_path": "a.go"})},
		[]harness.ToolCall{toolCall("w1", "write", map[string]any{"file_path": "a.go", "content": "package a // changed\n"})})
	res, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{Scope: agent.RewindFiles})
	require.NoError(t, err)
	assert.Nil(t, res.Fork)
	data, _ := os.ReadFile(filepath.Join(e.dir, "a.go"))
	assert.Equal(t, "package a\n", string(data))
	msgs := s.Messages()
	last := msgs[len(msgs)-1]
	assert.Equal(t, harness.RoleUser, last.Role)
	assert.Contains(t, last.Content[0].Text, "rewound the workspace files to how they were before turn 1")
	assert.Contains(t, last.Content[0].Text, "a.go (restored)")

	// Editing without reading again is refused.
	e.model.Push(replay.Call(toolCall("e1", "edit", map[string]any{"file_path": "a.go", "old_string": "package a", "new_string": "package b"})), replay.Response{Text: "ok"})
	evs, _, err := collect(t, s, context.Background(), "edit it again")
	require.NoError(t, err)
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 1)
	assert.True(t, ends[0].Result.IsError)
	assert.Equal(t, harness.CodeNotObserved, ends[0].Result.Code, "%s", ends[0].Result.Text())
}

// TestRewindConflicts: a file the user changed after the agent did is a
// conflict: refused, then forced, and the user's version is still in a
// checkpoint. A file only the user changed is left alone.
func TestRewindConflicts(t *testing.T) {
	e := newRewindEnv(t, map[string]string{"shared.txt": "original\n", "mine.txt": "mine\n"})
	s := e.session(t)
	e.turn(t, s, "edit", []harness.ToolCall{toolCall("b1", "bash", map[string]any{"command": "echo agent > shared.txt"})})
	// The user's work, between turns.
	writeFiles(t, e.dir, map[string]string{"shared.txt": "the user's fix on top\n", "mine.txt": "the user's own change\n"})

	dry, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: 1}, agent.RewindOptions{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"shared.txt": "modified conflict", "mine.txt": "modified skip: changed outside the agent only (not by its turns); it is left as it is"}, changes(dry.Files))
	_, err = s.Rewind(context.Background(), agent.RewindTarget{Turn: 1}, agent.RewindOptions{})
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.CodeConflict)
	assert.Contains(t, err.Error(), "shared.txt")
	data, _ := os.ReadFile(filepath.Join(e.dir, "shared.txt"))
	assert.Equal(t, "the user's fix on top\n", string(data), "refused: nothing changed")

	res, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: 1}, agent.RewindOptions{Force: true, Scope: agent.RewindFiles})
	require.NoError(t, err)
	assert.Equal(t, []string{"shared.txt"}, res.Files.Restored())
	data, _ = os.ReadFile(filepath.Join(e.dir, "shared.txt"))
	assert.Equal(t, "original\n", string(data))
	data, _ = os.ReadFile(filepath.Join(e.dir, "mine.txt"))
	assert.Equal(t, "the user's own change\n", string(data), "the user's own file is left alone")

	// Nothing is lost: the rewind's first checkpoint kept the user's
	// version, and a rewind to it brings it back.
	tr, err := e.store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var startSeq int64
	for _, ev := range tr.Events {
		if cp, ok := ev.Data.(*session.Checkpoint); ok && cp.Kind == session.CheckpointRewindStart {
			startSeq = ev.Seq
		}
	}
	require.NotZero(t, startSeq)
	_, err = s.Rewind(context.Background(), agent.RewindTarget{Seq: startSeq}, agent.RewindOptions{Scope: agent.RewindFiles})
	require.NoError(t, err)
	data, _ = os.ReadFile(filepath.Join(e.dir, "shared.txt"))
	assert.Equal(t, "the user's fix on top\n", string(data))
}

func TestRewindErrors(t *testing.T) {
	e := newRewindEnv(t, map[string]string{"a": "a"})
	s := e.session(t)
	_, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{})
	assert.ErrorIs(t, err, harness.CodeNotFound, "no turn yet")
	e.turn(t, s, "hi")
	_, err = s.Rewind(context.Background(), agent.RewindTarget{Turn: 5}, agent.RewindOptions{})
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.Rewind(context.Background(), agent.RewindTarget{Seq: 2}, agent.RewindOptions{})
	assert.ErrorIs(t, err, harness.CodeNotFound, "event 2 is no checkpoint")
	assert.ErrorContains(t, err, "not a checkpoint")

	for in, want := range map[string]agent.RewindTarget{"3": {Turn: 3}, "last": {Turn: agent.LastTurn}, "@17": {Seq: 17}} {
		got, err := agent.ParseRewindTarget(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"", "0", "-1", "@", "@x", "first"} {
		_, err := agent.ParseRewindTarget(bad)
		assert.ErrorIs(t, err, harness.CodeInvalidOption, bad)
	}

	// Without checkpoints only the conversation can go back.
	m := replay.NewScripted(replay.Response{Text: "a"}, replay.Response{Text: "b"})
	loop, err := agent.New(agent.WithModel(m))
	require.NoError(t, err)
	defer loop.Close()
	plain, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	defer plain.Close()
	collect(t, plain, context.Background(), "one")
	collect(t, plain, context.Background(), "two")
	_, err = plain.Rewind(context.Background(), agent.RewindTarget{Turn: 2}, agent.RewindOptions{})
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorContains(t, err, "checkpoints were off")
	res, err := plain.Rewind(context.Background(), agent.RewindTarget{Turn: 2}, agent.RewindOptions{Scope: agent.RewindConversation})
	require.NoError(t, err)
	defer res.Fork.Close()
	assert.Len(t, res.Fork.Messages(), 2, "turn one's question and answer")

	_, err = agent.New(agent.WithModel(m), agent.WithCheckpoints(checkpoint.Config{}))
	assert.ErrorIs(t, err, harness.CodeInvalidOption, "no store for the contents")
	assert.ErrorContains(t, err, "Stores.Attachments")
	_, err = agent.New(agent.WithModel(m), agent.WithCheckpoints(checkpoint.Config{Store: attachments.NewMemory(), MaxEntries: -1}))
	assert.ErrorIs(t, err, harness.CodeInvalidOption, "a limit out of range")

	// A session whose working directory is the file system's root takes
	// no checkpoint (it would walk the whole system), and its turns run.
	store := session.NewMemory(session.StoreConfig{})
	loop2, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "a"})),
		agent.WithStores(agent.Stores{Sessions: store, Attachments: attachments.NewMemory()}), agent.WithCheckpoints(checkpoint.Config{}))
	require.NoError(t, err)
	defer loop2.Close()
	rooted, err := loop2.NewSession(context.Background(), session.Header{Cwd: "/"})
	require.NoError(t, err)
	defer rooted.Close()
	_, end, err := collect(t, rooted, context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	tr, err := store.Load(context.Background(), rooted.Header().ID)
	require.NoError(t, err)
	for _, ev := range tr.Events {
		assert.NotEqual(t, "checkpoint", ev.Type())
	}
}

// rewindHelperEnv makes the test binary act as the first process of the
// cross-process rewind test: it runs a turn that changes files through
// bash, and exits 3.
const rewindHelperEnv = "HARNESS_TEST_REWIND_HELPER"

func TestRewindHelperProcess(t *testing.T) {
	dir := os.Getenv(rewindHelperEnv)
	if dir == "" {
		t.Skip("run by TestRewindAcrossProcesses")
	}
	e := &rewindEnv{dir: filepath.Join(dir, "ws"), store: session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{}),
		atts: attachments.NewFiles(filepath.Join(dir, "attachments")), model: replay.NewScripted()}
	e.loop = e.newLoop(t, e.model)
	s, err := e.loop.NewSession(context.Background(), session.Header{ID: "across", Cwd: e.dir})
	require.NoError(t, err)
	e.turn(t, s, "change", []harness.ToolCall{toolCall("b1", "bash", map[string]any{"command": "sed -i 's/1/2/' a.txt && rm -r d && mkdir n && echo n > n/n.txt"})})
	require.NoError(t, e.loop.Close())
	os.Exit(3)
}

// TestRewindAcrossProcesses: one process runs a turn and exits; another
// resumes the session from its JSONL log and file attachments and
// rewinds it.
func TestRewindAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	writeFiles(t, ws, map[string]string{"a.txt": "1\n", "d/e.txt": "e\n"})
	before := tree(t, ws)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRewindHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), rewindHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "output: %s", out)
	require.Equal(t, 3, exit.ExitCode(), "the first process ran its turn: %s", out)
	require.NotEqual(t, before, tree(t, ws))

	e := &rewindEnv{dir: ws, store: session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{}),
		atts: attachments.NewFiles(filepath.Join(dir, "attachments")), model: replay.NewScripted()}
	e.loop = e.newLoop(t, e.model)
	s, err := e.loop.ResumeSession(context.Background(), "across")
	require.NoError(t, err)
	defer s.Close()
	res, err := s.Rewind(context.Background(), agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindOptions{})
	require.NoError(t, err)
	defer res.Fork.Close()
	assert.Equal(t, before, tree(t, ws))
	assert.Equal(t, map[string]string{"a.txt": "modified", "d": "deleted", "d/e.txt": "deleted", "n": "created", "n/n.txt": "created"}, changes(res.Files))
}

// TestCheckpointsInTheLog: where the checkpoints fall in a turn, and that
// an unchanged workspace stores nothing new.
func TestCheckpointsInTheLog(t *testing.T) {
	e := newRewindEnv(t, map[string]string{"a.txt": "a\n"})
	s := e.session(t)
	e.turn(t, s, "look", []harness.ToolCall{toolCall("r1", "read", map[string]any{"file_path": "a.txt"})})
	e.turn(t, s, "change", []harness.ToolCall{toolCall("b1", "bash", map[string]any{"command": "echo b > b.txt"})},
		[]harness.ToolCall{toolCall("r2", "read", map[string]any{"file_path": "b.txt"})})
	tr, err := e.store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var kinds []string
	var cps []*session.Checkpoint
	for _, ev := range tr.Events {
		switch p := ev.Data.(type) {
		case *session.Checkpoint:
			kinds = append(kinds, p.Kind)
			cps = append(cps, p)
		case *session.UserMessage:
			kinds = append(kinds, "user")
		case *session.ToolStarted:
			kinds = append(kinds, p.Name)
		}
	}
	assert.Equal(t, []string{"turn_start", "user", "read", "turn_start", "user", "before_call", "bash", "read", "turn_end"}, kinds,
		"a read-only turn takes one checkpoint; bash gets one before it, and the turn one at its end")
	assert.Equal(t, cps[0].Manifest, cps[1].Manifest, "nothing changed in between")
	assert.Equal(t, cps[1].Manifest, cps[2].Manifest)
	assert.NotEqual(t, cps[2].Manifest, cps[3].Manifest)
	assert.Equal(t, []string{"b.txt"}, cps[3].Paths)
	assert.Equal(t, 1, cps[3].Added)
	assert.Equal(t, 2, cps[3].Files)
	assert.Equal(t, e.dir, cps[3].Dir)
	assert.WithinDuration(t, time.Now(), cps[3].Scanned, time.Minute)
	assert.True(t, strings.HasPrefix(cps[3].Manifest, "sha256:"))
}

// public returns a plan's changes as a caller sees them (their exported
// fields).
func public(p *checkpoint.Plan) []checkpoint.Change {
	out := make([]checkpoint.Change, len(p.Changes))
	for i, c := range p.Changes {
		out[i] = checkpoint.Change{Path: c.Path, Op: c.Op, Kind: c.Kind, Added: c.Added, Removed: c.Removed, Binary: c.Binary, Conflict: c.Conflict, Skip: c.Skip}
	}
	return out
}
