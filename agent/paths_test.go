package agent_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/images"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/sessiontools"
)

// The secret of the path-policy tests: no tool result may contain it.
const secretText = "TOPSECRET-7f3a9c"

// pathsWorkspace makes the workspace of issue 27's attack: a denied
// secrets directory, a protected .git, and names elsewhere that lead to
// them (symbolic and hard links).
func pathsWorkspace(t *testing.T) string {
	ws := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var pngData bytes.Buffer
	require.NoError(t, png.Encode(&pngData, img))
	for p, data := range map[string]string{
		"secrets/key.txt": secretText + "\n",
		"secrets/key.png": pngData.String(),
		".git/config":     "[core]\n\tbare = false\n",
		"src/main.go":     "package main\n\nfunc main() {}\n",
	} {
		full := filepath.Join(ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(data), 0o644))
	}
	require.NoError(t, os.Link(filepath.Join(ws, "secrets/key.txt"), filepath.Join(ws, "src/notes.txt")))
	require.NoError(t, os.Link(filepath.Join(ws, "secrets/key.png"), filepath.Join(ws, "src/logo.png")))
	require.NoError(t, os.Link(filepath.Join(ws, ".git/config"), filepath.Join(ws, "src/gitconfig")))
	require.NoError(t, os.Symlink("../secrets", filepath.Join(ws, "src/vault")))
	return ws
}

// pathsLoop runs scripted calls in a session of a loop with the issue's
// rules (in bypass mode, so nothing but deny rules stops a call) and
// returns the results by call id.
func pathsLoop(t *testing.T, ws string, store session.Store, extra []agent.Option, calls ...harness.ToolCall) map[string]*harness.ToolResult {
	t.Helper()
	fsys, err := fslocal.New(ws)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	pol, err := permission.New(permission.Rules{
		Mode:  permission.ModeBypass,
		Allow: []string{"Bash(ls:*)", "Bash(git status)", "Bash(npm test:*)"},
		Deny:  []string{"Bash(rm:*)", "Bash(curl:*)", "Read(./secrets/**)", "Edit(./.git/**)", "Read(./.harness/**)"},
	})
	require.NoError(t, err)
	var script []replay.Response
	for _, c := range calls {
		script = append(script, replay.Call(c))
	}
	script = append(script, replay.Response{Text: "done"})
	m := replay.NewScripted(script...).WithInfo(model.Info{Name: "scripted", Input: []harness.Modality{harness.ModalityText, harness.ModalityImage}})
	ts := append(files.Tools(files.Config{}), images.ReadImage(images.Config{}), codesearch.Glob(codesearch.Config{}), codesearch.Grep(codesearch.Config{}))
	ts = append(ts, sessiontools.Tools(store, sessiontools.Config{})...)
	ts = append(ts, bigTool())
	opts := append([]agent.Option{
		agent.WithModel(m),
		agent.WithPermissions(pol),
		agent.WithTools(ts...),
		agent.WithStores(agent.Stores{Sessions: store, Files: fsys, Attachments: attachments.NewMemory()}),
	}, extra...)
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: fsys.Root()})
	require.NoError(t, err)
	defer s.Close()
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	out := map[string]*harness.ToolResult{}
	reqs := m.Requests()
	for _, r := range toolResults(reqs[len(reqs)-1]) {
		out[r.CallID] = r
	}
	require.Len(t, out, len(calls))
	return out
}

type repeatIn struct {
	Text string `json:"text" jsonschema:"text to repeat"`
}

// bigTool returns its text repeated past the spill threshold.
func bigTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "repeat", Description: "Repeat text."},
		func(ctx context.Context, call *tools.Call, in repeatIn) (*harness.ToolResult, error) {
			return harness.TextResult(strings.Repeat(in.Text+"\n", 40000/(len(in.Text)+1)+1)), nil
		})
}

func call(id, name string, args map[string]any) harness.ToolCall {
	return replay.ToolCall(id, name, args)
}

// assertHidden checks that a result shows nothing of the secret and
// reads as for a file that is not there.
func assertHidden(t *testing.T, r *harness.ToolResult, what string) {
	t.Helper()
	text := resultText(r)
	assert.NotContains(t, text, secretText, what)
	assert.NotContains(t, text, "secrets", "%s: the denied directory is not named", what)
	for _, b := range r.Content {
		assert.Nil(t, b.Image, "%s: no image", what)
	}
}

// TestPathPolicyFileTools is issue 27's file-tool attack: each call
// reaches a denied file some way the dispatcher's rules do not see (a hard
// link, a listing, a search), and each must come back empty.
func TestPathPolicyFileTools(t *testing.T) {
	ws := pathsWorkspace(t)
	res := pathsLoop(t, ws, session.NewMemory(session.StoreConfig{}), nil,
		call("read-hardlink", "read", map[string]any{"file_path": "src/notes.txt"}),
		call("read-dir", "read", map[string]any{"file_path": "."}),
		call("read-typo", "read", map[string]any{"file_path": "secret"}),
		call("image-hardlink", "read_image", map[string]any{"file_path": "src/logo.png"}),
		call("glob-all", "glob", map[string]any{"pattern": "**/*"}),
		call("glob-link", "glob", map[string]any{"pattern": "*", "path": "src/vault"}),
		call("grep-all", "grep", map[string]any{"pattern": "TOPSECRET", "output_mode": "content"}),
		call("grep-files", "grep", map[string]any{"pattern": ".", "output_mode": "files_with_matches"}),
		call("grep-link", "grep", map[string]any{"pattern": "TOPSECRET", "path": "src/notes.txt"}),
		call("write-denied-dir", "write", map[string]any{"file_path": "secrets/new.txt", "content": "planted\n"}),
		call("write-over-secret", "write", map[string]any{"file_path": "secrets/key.txt", "content": "x\n"}),
		call("read-gitconfig-link", "read", map[string]any{"file_path": "src/gitconfig"}),
		call("edit-gitconfig-link", "edit", map[string]any{"file_path": "src/gitconfig", "old_string": "bare = false", "new_string": "bare = true"}),
		call("write-gitconfig-link", "write", map[string]any{"file_path": "src/gitconfig", "content": "[core]\n"}),
		call("read-allowed", "read", map[string]any{"file_path": "src/main.go"}),
	)
	for _, id := range []string{"read-hardlink", "read-typo", "image-hardlink", "grep-link"} {
		r := res[id]
		assertHidden(t, r, id)
		assert.True(t, r.IsError, id)
		assert.Equal(t, harness.CodeNotFound, r.Code, "%s: %s", id, resultText(r))
	}
	assertHidden(t, res["read-dir"], "read of the workspace directory lists it")
	assert.Contains(t, resultText(res["read-dir"]), "src/", "the listing shows the rest")
	for _, id := range []string{"glob-all", "grep-all", "grep-files"} {
		assertHidden(t, res[id], id)
		assert.NotContains(t, resultText(res[id]), "notes.txt", "%s: the hard link is left out too", id)
	}
	assert.Contains(t, resultText(res["glob-all"]), "src/main.go")
	assert.Contains(t, resultText(res["grep-files"]), "src/main.go")
	// The dispatcher resolves the link and denies the call itself.
	assert.True(t, res["glob-link"].IsError, resultText(res["glob-link"]))
	assert.NotContains(t, resultText(res["glob-link"]), "key.txt")

	for _, id := range []string{"write-denied-dir", "write-over-secret"} {
		r := res[id]
		require.True(t, r.IsError, id)
		assert.Equal(t, harness.CodeDenied, r.Code, "%s: %s", id, resultText(r))
		assert.Contains(t, resultText(r), "Read(./secrets/**)", "%s names the rule", id)
		assert.NotContains(t, resultText(r), "already exists", "%s: the refusal says nothing of whether the file exists", id)
	}
	assert.NoFileExists(t, filepath.Join(ws, "secrets/new.txt"))
	b, err := os.ReadFile(filepath.Join(ws, "secrets/key.txt"))
	require.NoError(t, err)
	assert.Equal(t, secretText+"\n", string(b))

	assert.False(t, res["read-gitconfig-link"].IsError, ".git is only edit-denied: %s", resultText(res["read-gitconfig-link"]))
	for _, id := range []string{"edit-gitconfig-link", "write-gitconfig-link"} {
		r := res[id]
		require.True(t, r.IsError, id)
		assert.Equal(t, harness.CodeDenied, r.Code, "%s: %s", id, resultText(r))
		assert.Contains(t, resultText(r), "Edit(./.git/**)", id)
	}
	b, err = os.ReadFile(filepath.Join(ws, ".git/config"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "bare = false")
	b, err = os.ReadFile(filepath.Join(ws, "src/gitconfig"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "bare = false", "the link is not replaced either")

	assert.False(t, res["read-allowed"].IsError)
	assert.Contains(t, resultText(res["read-allowed"]), "func main()")
}

// TestPathPolicySessionTools: an earlier session of the workspace read the
// secret before the rules existed; the session tools of a session under
// the rules do not show it.
func TestPathPolicySessionTools(t *testing.T) {
	ws := pathsWorkspace(t)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	// The earlier session: no rules.
	fsys, err := fslocal.New(ws)
	require.NoError(t, err)
	defer fsys.Close()
	m := replay.NewScripted(replay.Call(call("old-read", "read", map[string]any{"file_path": "secrets/key.txt"})), replay.Response{Text: "read it"})
	old, err := agent.New(agent.WithModel(m), agent.WithTools(files.Tools(files.Config{})...), agent.WithStores(agent.Stores{Sessions: store, Files: fsys}))
	require.NoError(t, err)
	s, err := old.NewSession(context.Background(), session.Header{Cwd: fsys.Root()})
	require.NoError(t, err)
	_, _, err = collect(t, s, context.Background(), "read the key")
	require.NoError(t, err)
	oldID := s.Header().ID
	require.NoError(t, s.Close())
	require.NoError(t, old.Close())
	// And a session that ran inside the denied directory.
	inside, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "the key is " + secretText})), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	s2, err := inside.NewSession(context.Background(), session.Header{Cwd: filepath.Join(ws, "secrets")})
	require.NoError(t, err)
	_, _, err = collect(t, s2, context.Background(), "what is the key?")
	require.NoError(t, err)
	insideID := s2.Header().ID
	require.NoError(t, s2.Close())
	require.NoError(t, inside.Close())

	seq := func(id string) int64 {
		tr, err := store.Load(context.Background(), id)
		require.NoError(t, err)
		for _, e := range tr.Events {
			if _, ok := e.Data.(*session.ToolFinished); ok {
				return e.Seq
			}
		}
		return 1
	}
	res := pathsLoop(t, ws, store, nil,
		call("search", "session_search", map[string]any{"query": secretText}),
		call("read-old", "session_read", map[string]any{"session_id": oldID, "seq": seq(oldID)}),
		call("read-inside", "session_read", map[string]any{"session_id": insideID}),
	)
	assert.Contains(t, resultText(res["search"]), "No matches", "the query itself is echoed, nothing else: %s", resultText(res["search"]))
	assert.NotContains(t, resultText(res["search"]), "seq ")
	r := res["read-old"]
	assert.False(t, r.IsError, resultText(r))
	assert.NotContains(t, resultText(r), secretText)
	assert.Contains(t, resultText(r), "withheld")
	assert.Contains(t, resultText(r), "read it", "the rest of the session shows")
	assert.True(t, res["read-inside"].IsError)
	assert.Equal(t, harness.CodeNotFound, res["read-inside"].Code)
	assertHidden(t, res["read-inside"], "a session run in the denied directory")
}

// TestPathPolicySpillReads: outputs spilled into a directory the rules
// deny are not read back through spill:// either.
func TestPathPolicySpillReads(t *testing.T) {
	ws := pathsWorkspace(t)
	store, err := spill.NewDir(filepath.Join(ws, ".harness", "spill"), spill.StoreConfig{})
	require.NoError(t, err)
	mw, err := spill.Middleware(spill.Config{})
	require.NoError(t, err)
	extra := []agent.Option{
		agent.WithStores(agent.Stores{Output: store}),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{mw}}),
	}
	// The first session learns the locator of its spilled output.
	res := pathsLoop(t, ws, session.NewMemory(session.StoreConfig{}), extra, call("big", "repeat", map[string]any{"text": "hello"}))
	text := resultText(res["big"])
	i := strings.Index(text, tools.OutputScheme)
	require.GreaterOrEqual(t, i, 0, text)
	loc := strings.Fields(text[i:])[0]
	loc = strings.TrimRight(loc, ".,;:)\"'`")
	res = pathsLoop(t, ws, session.NewMemory(session.StoreConfig{}), extra, call("read-spill", "read", map[string]any{"file_path": loc}))
	r := res["read-spill"]
	assert.True(t, r.IsError, resultText(r))
	assert.Equal(t, harness.CodeNotFound, r.Code)
	assert.NotContains(t, resultText(r), "hello\nhello")
}
