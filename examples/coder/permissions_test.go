package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

func writeCall(id, path, content string) string {
	return toolCall(0, id, "write", map[string]any{"file_path": path, "content": content})
}

// Plan mode refuses a write: the file is not created, the model reads
// the denial, and the turn completes.
func TestPlanModeRefusesWrite(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(writeCall("call_w", "new.txt", "x")), say("Here is my plan instead."))
	ws := workspace(t, nil)
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-permission-mode", "plan", "-p", "write new.txt")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(ws, "new.txt"))
	assert.Regexp(t, `✗ write .*  denied\n  the write call on \S+ has side effects, and plan mode is read-only`, r.stdout)
	assert.Equal(t, 1, strings.Count(r.stdout, "plan mode is read-only"), "the reason is said once")
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[0].Text(t), "Plan mode is on")
	assert.Contains(t, reqs[1].Text(t), "plan mode is read-only")
	assert.Contains(t, reqs[1].Text(t), "Do not retry the same call")
}

// Headless, a call that needs an answer pauses the turn: the coder lists
// it and exits 3; -continue -approve all runs it and finishes the same
// turn.
func TestHeadlessPauseAndApprove(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(writeCall("call_w", "new.txt", "made\n")), say("Wrote new.txt."))
	ws := workspace(t, nil)
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-permission-mode", "default", "-p", "write new.txt")
	require.Equal(t, exitPaused, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(ws, "new.txt"))
	assert.Contains(t, r.stdout, "The turn is paused: 1 call(s) wait for approval.")
	assert.Contains(t, r.stdout, "call_w  write  "+filepath.ToSlash(filepath.Join(ws, "new.txt")))
	assert.Contains(t, r.stdout, "-continue -approve all")
	require.Len(t, p.Requests(), 1)

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-approve", "all")
	require.Equal(t, exitOK, r.code, r.stderr)
	b, err := os.ReadFile(filepath.Join(ws, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(b))
	assert.Contains(t, r.stdout, "Wrote new.txt.")
	reqs := p.Requests()
	require.Len(t, reqs, 2, "the model is called once more, to finish the same turn")
	assert.Contains(t, reqs[1].Text(t), "write new.txt")

	infos, err := session.NewJSONL(sessions, session.StoreConfig{}).List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	tr, err := session.NewJSONL(sessions, session.StoreConfig{}).Load(context.Background(), infos[0].Header.ID)
	require.NoError(t, err)
	var users, decided int
	var ends []string
	for _, e := range tr.Events {
		switch d := e.Data.(type) {
		case *session.UserMessage:
			users++
		case *session.PermissionDecided:
			decided++
			assert.Equal(t, "user", d.By)
		case *session.TurnEnded:
			ends = append(ends, d.Reason)
		}
	}
	assert.Equal(t, 1, users, "one turn")
	assert.Equal(t, 1, decided)
	assert.Equal(t, []string{session.ReasonAwaitingApproval, session.ReasonCompleted}, ends)
}

// Two waiting calls, one approved and one rejected with feedback; the
// JSON stream carries the request and the decisions.
func TestHeadlessPauseApproveAndReject(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, sse(role(), writeCall("call_a", "a.txt", "a"), toolCall(1, "call_b", "write", map[string]any{"file_path": "b.txt", "content": "b"}), finish("tool_calls"), usage(100, 10, 0)), say("Done."))
	ws := workspace(t, nil)
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-json", "-permission-mode", "default", "-p", "write both")
	require.Equal(t, exitPaused, r.code, r.stderr)
	var kinds []string
	for _, l := range jsonLines(t, r.stdout) {
		kinds = append(kinds, l["type"].(string))
	}
	assert.Contains(t, kinds, "approval_request")
	assert.Contains(t, r.stderr, "call_a  write")
	assert.Contains(t, r.stderr, "call_b  write")

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-approve", "call_b", "-reject", "call_x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `no call "call_x" waits for approval`)
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-approve", "call_b")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "the call call_a still waits")

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-json", "-continue", "-approve", "call_b", "-reject", "all", "-feedback", "not a.txt")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(ws, "a.txt"))
	assert.FileExists(t, filepath.Join(ws, "b.txt"))
	var decisions []string
	for _, l := range jsonLines(t, r.stdout) {
		if l["type"] == "permission_decision" {
			decisions = append(decisions, l["call"].(map[string]any)["id"].(string)+":"+l["outcome"].(string))
		}
	}
	assert.Equal(t, []string{"call_a:deny", "call_b:allow"}, decisions)
	assert.Contains(t, p.Requests()[1].Text(t), `The user said: \"not a.txt\"`)
}

// Rules come from .harness/settings.json and the flags; deny wins.
func TestSettingsFileAndFlags(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(writeCall("call_w", "src/a.txt", "x")), say("ok"), call(writeCall("call_v", "src/b.txt", "y")), say("ok"))
	ws := workspace(t, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".harness"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".harness/settings.json"), []byte(`{"permissions": {"allow": ["Edit(src/**)"]}}`), 0o644))
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-permission-mode", "default", "-p", "write")
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	assert.FileExists(t, filepath.Join(ws, "src/a.txt"))
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-permission-mode", "default", "-deny", "Edit(src/b.txt)", "-p", "write")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(ws, "src/b.txt"))
	assert.Contains(t, r.stdout, "is denied by the rule Edit(src/b.txt)\n")
	assert.Equal(t, 1, strings.Count(r.stdout, "Edit(src/b.txt)"), "the reason is said once")

	for _, bad := range [][]string{{"-permission-mode", "yolo"}, {"-sandbox", "none"}, {"-allow", "Bash(x"}, {"-approve", "all"}, {"-feedback", "x"}} {
		r := runCLI(t, p.env(), "", append([]string{"-C", ws, "-sessions", sessions}, bad...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", bad, r.stderr)
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".harness/settings.json"), []byte(`{"permissions": {"allow": "x"}}`), 0o644))
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-p", "x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "settings.json")
}

func TestParseAnswer(t *testing.T) {
	for in, want := range map[string]permission.Answer{
		"y":                     {Allow: true},
		"YES":                   {Allow: true},
		"":                      {},
		"n":                     {},
		"a":                     {Allow: true, Remember: "Bash(npm test:*)"},
		"a Bash(go test:*)":     {Allow: true, Remember: "Bash(go test:*)"},
		"use make test instead": {Feedback: "use make test instead"},
	} {
		assert.Equal(t, want, parseAnswer(strings.TrimSpace(in), "Bash(npm test:*)"), in)
	}
}
