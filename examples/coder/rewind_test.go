package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
)

// sessionsOf lists the sessions in dir, newest first.
func sessionsOf(t *testing.T, dir string) []session.Info {
	t.Helper()
	infos, err := session.NewJSONL(dir, session.StoreConfig{}).List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	return infos
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// fixed runs the typo fix as one headless turn in a new workspace and
// returns the provider (for more replies), the workspace and the
// sessions directory.
func fixed(t *testing.T, more ...reply) (*provider, string, string) {
	t.Helper()
	p := newProvider(t, append(fixScript(), more...)...)
	ws := workspace(t, map[string]string{"main.go": buggy})
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "fix the typo in main.go")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, readFile(t, filepath.Join(ws, "main.go")), "Hello, world!")
	return p, ws, sessions
}

// /undo after an edit: the file is as it was before the turn, and the
// conversation goes on in a fork that no longer holds the turn, while the
// original session stays.
func TestUndoAfterEdit(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, append(fixScript(), say("hello again"))...)
	ws := workspace(t, map[string]string{"main.go": buggy})
	sessions := t.TempDir()

	r := runCLI(t, p.env(), "fix the typo in main.go\n/undo\nsay hello\n", "-C", ws, "-sessions", sessions)
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	assert.Equal(t, buggy, readFile(t, filepath.Join(ws, "main.go")), "the edit is undone")
	assert.Contains(t, r.stdout, "the rewind to before turn 1:\n  restore   main.go  +1 -1\n")
	assert.Contains(t, r.stdout, "rewound to before turn 1: 1 path taken back · the conversation goes on in session ")

	infos := sessionsOf(t, sessions)
	require.Len(t, infos, 2, "the original and its fork")
	fork, orig := infos[0].Header, infos[1].Header
	if fork.Parent == "" {
		fork, orig = orig, fork
	}
	assert.Equal(t, orig.ID, fork.Parent, "the fork names the session it came from")
	assert.Contains(t, r.stdout, "(-resume "+orig.ID+")")
	assert.Contains(t, r.stdout, "resume with -resume "+fork.ID, "the session the loop ends in is the fork")

	reqs := p.Requests()
	require.Len(t, reqs, 4)
	last := reqs[3].Text(t)
	assert.Contains(t, last, "say hello")
	assert.NotContains(t, last, "fix the typo", "the undone turn is not in the fork's conversation")

	orig2, err := session.NewJSONL(sessions, session.StoreConfig{}).Load(context.Background(), orig.ID)
	require.NoError(t, err)
	msgs := new(session.History).Add(orig2.Events...).Messages()
	assert.Contains(t, msgs[0].Text(), "fix the typo", "the original session keeps its turn")
}

// -rewind last -dry-run prints what the rewind would do and changes
// nothing: not the file, not the sessions, and no model is called.
func TestRewindDryRun(t *testing.T) {
	leakcheck.Check(t)
	p, ws, sessions := fixed(t)

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-rewind", "last", "-dry-run")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "the rewind to before turn 1:\n  restore   main.go  +1 -1\n")
	assert.Contains(t, r.stdout, "dry run: nothing was changed")
	assert.Contains(t, readFile(t, filepath.Join(ws, "main.go")), "Hello, world!", "the file is as the turn left it")
	assert.Len(t, sessionsOf(t, sessions), 1, "no fork")
	assert.Len(t, p.Requests(), 3, "no model call")

	// The same rewind without -dry-run does what the dry run said.
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-rewind", "1")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, buggy, readFile(t, filepath.Join(ws, "main.go")))
	assert.Len(t, sessionsOf(t, sessions), 2, "the conversation went on in a fork")
	assert.Len(t, p.Requests(), 3, "no model call")
}

// A file changed both by the agent and, after the turn, by the user is a
// conflict: -rewind refuses, changes nothing, and says how to force it;
// -force then restores it.
func TestRewindConflict(t *testing.T) {
	leakcheck.Check(t)
	p, ws, sessions := fixed(t)
	mine := strings.Replace(buggy, "Hello, wrold!", "Hello, mine!", 1)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte(mine), 0o644))

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-rewind", "last")
	require.Equal(t, exitFailed, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "main.go  +1 -1  ! changed outside the agent")
	assert.Contains(t, r.stdout, "a file was changed outside the agent since the checkpoint (main.go); nothing was changed. Run it again with -force")
	assert.Equal(t, mine, readFile(t, filepath.Join(ws, "main.go")), "the user's change is kept")
	assert.Len(t, sessionsOf(t, sessions), 1, "no fork")

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-rewind", "last", "-force")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, buggy, readFile(t, filepath.Join(ws, "main.go")))
}

// /undo with a conflict asks before overwriting: "n" leaves the file.
func TestUndoConflictAsks(t *testing.T) {
	leakcheck.Check(t)
	p, ws, sessions := fixed(t)
	mine := strings.Replace(buggy, "Hello, wrold!", "Hello, mine!", 1)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte(mine), 0o644))

	r := runCLI(t, p.env(), "/undo\nn\n", "-C", ws, "-sessions", sessions, "-continue")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "overwrite them and rewind?")
	assert.Contains(t, r.stdout, "nothing was changed")
	assert.Equal(t, mine, readFile(t, filepath.Join(ws, "main.go")))

	r = runCLI(t, p.env(), "/undo\ny\n", "-C", ws, "-sessions", sessions, "-continue")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, buggy, readFile(t, filepath.Join(ws, "main.go")))
}

// /rewind lists the turns, asks which, shows the dry run and asks again.
func TestRewindCommandPicksATurn(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(writeCall("call_a", "a.txt", "one\n")), say("made a"),
		call(writeCall("call_b", "b.txt", "two\n")), say("made b"))
	ws := workspace(t, nil)
	sessions := t.TempDir()

	r := runCLI(t, p.env(), "make a\nmake b\n/rewind\n1\ny\n", "-C", ws, "-sessions", sessions)
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "  1  ")
	assert.Contains(t, r.stdout, "make a  (1 created)")
	assert.Contains(t, r.stdout, "make b  (1 created)")
	assert.Contains(t, r.stdout, "  delete    a.txt  +1 -0\n  delete    b.txt  +1 -0")
	assert.Contains(t, r.stdout, "rewound to before turn 1: 2 paths taken back")
	assert.NoFileExists(t, filepath.Join(ws, "a.txt"))
	assert.NoFileExists(t, filepath.Join(ws, "b.txt"))

	// A turn that is not there changes nothing.
	r = runCLI(t, p.env(), "/rewind 7\n", "-C", ws, "-sessions", sessions, "-continue")
	assert.Contains(t, r.stdout, "nothing to rewind to")
}

// -list shows the sessions of the workspace, newest first, and needs no
// model; -fork copies a session and goes on in the copy; -continue
// recaps the last exchange.
func TestListForkAndRecap(t *testing.T) {
	leakcheck.Check(t)
	p, ws, sessions := fixed(t, say("forked answer"), say("continued"))
	orig := sessionsOf(t, sessions)[0].Header.ID

	r := runCLI(t, envOf(), "", "-C", ws, "-sessions", sessions, "-list")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `^`+orig+`  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  fix the typo in main.go\n$`, r.stdout)

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-fork", orig, "and now?")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "a fork of session "+orig+", which stays as it was")
	reqs := p.Requests()
	require.Len(t, reqs, 4)
	assert.Contains(t, reqs[3].Text(t), "fix the typo", "the fork carries the conversation")
	assert.Contains(t, reqs[3].Text(t), "and now?")

	r = runCLI(t, envOf(), "", "-C", ws, "-sessions", sessions, "-list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2, r.stdout)
	assert.Contains(t, lines[0], "(fork of "+orig+")")

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "thanks")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "last time › and now?\n          ‹ forked answer\n")

	r = runCLI(t, envOf(), "", "-C", workspace(t, nil), "-sessions", sessions, "-list")
	assert.Equal(t, exitOK, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "no sessions in ")
}

// The flags that go together are checked.
func TestRewindFlagsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-rewind", "last"}, "give -continue (or -resume ID) too"},
		{[]string{"-continue", "-rewind", "x"}, "give a turn number, last, or @SEQ"},
		{[]string{"-dry-run"}, "-dry-run goes with -rewind"},
		{[]string{"-force"}, "-force goes with -rewind"},
		{[]string{"-continue", "-rewind", "last", "-dry-run", "go"}, "runs no prompt"},
		{[]string{"-continue", "-rewind", "last", "-rewind-scope", "both"}, "use all, files or conversation"},
		{[]string{"-fork", "x", "-continue"}, "give one of them"},
		{[]string{"-list", "hello"}, "-list only lists"},
	} {
		r := runCLI(t, envOf(), "", c.args...)
		assert.Equal(t, exitUsage, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
}

// The recap is the last prompt and the last answer after it, on one line
// each.
func TestRecap(t *testing.T) {
	msg := func(role harness.Role, s string) harness.Message {
		return harness.Message{Role: role, Content: []harness.Block{harness.TextBlock(s)}}
	}
	assert.Empty(t, recap(nil))
	assert.Equal(t, "last time › two\n          ‹ answer two", recap([]harness.Message{
		msg(harness.RoleUser, "one"), msg(harness.RoleAssistant, "old"),
		msg(harness.RoleUser, "two"), msg(harness.RoleAssistant, "answer\n two"),
	}))
	assert.Equal(t, "last time › asked", recap([]harness.Message{msg(harness.RoleUser, "asked")}))
}

// parseRewindArgs never panics; what it accepts names a target or asks
// for a pick, and a scope word at the end is read as the scope.
func FuzzParseRewindArgs(f *testing.F) {
	for _, s := range []string{"", "3", "last", "@42", "2 files", "conversation", "last all", "1 2", "@0", "-1", "x files"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		target, pick, scope, err := parseRewindArgs(arg)
		if err != nil {
			require.False(t, pick)
			require.NotContains(t, err.Error(), "\n")
			return
		}
		if pick {
			require.Zero(t, target)
		} else {
			require.True(t, target.Turn > 0 || target.Turn == agent.LastTurn || target.Seq > 0, "%+v", target)
		}
		words := strings.Fields(arg)
		if len(words) > 0 {
			if s, ok := scopeOf(words[len(words)-1]); ok {
				require.Equal(t, s, scope)
			}
		}
	})
}

// oneLine and changeLine keep what they show on one line, without
// control characters, and oneLine within its length.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "fix the typo", "a\nb\tc", "\x1b[31mred\x1b[0m", "日本語のテキスト", "\xff\xfe", strings.Repeat("long ", 40)} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 1 || n > 1000 {
			n = 20
		}
		got := oneLine(s, n)
		require.LessOrEqual(t, utf8.RuneCountInString(got), n)
		require.False(t, strings.ContainsFunc(got, unicode.IsControl), "%q", got)
		require.Equal(t, strings.TrimSpace(got), got)
		line := changeLine(checkpoint.Change{Path: s, Op: checkpoint.OpModified, Skip: s})
		require.False(t, strings.ContainsFunc(line, unicode.IsControl), "%q", line)
	})
}

// What bash changed is taken back too: a sed -i and an rm in one turn,
// undone by -rewind last in another process.
func TestRewindBashChanges(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(toolCall(0, "c1", "bash", map[string]any{"command": "sed -i s/wrold/world/ main.go && rm notes.txt"})), say("done"))
	ws := workspace(t, map[string]string{"main.go": buggy, "notes.txt": "keep me\n"})
	sessions := t.TempDir()
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "fix it with sed")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NoFileExists(t, filepath.Join(ws, "notes.txt"))

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-rewind", "last")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "  restore   main.go  +1 -1\n  recreate  notes.txt  +0 -1\n")
	assert.Equal(t, buggy, readFile(t, filepath.Join(ws, "main.go")))
	assert.Equal(t, "keep me\n", readFile(t, filepath.Join(ws, "notes.txt")))
}

// A sessions directory inside the workspace is never recorded, so a
// rewind leaves the logs and the checkpoints' own contents alone.
func TestRewindLeavesSessionsInWorkspace(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, append(fixScript(), say("still here"))...)
	ws := workspace(t, map[string]string{"main.go": buggy})
	sessions := filepath.Join(ws, "state", "sessions")

	r := runCLI(t, p.env(), "fix the typo\n/undo\nhello\n", "-C", ws, "-sessions", sessions)
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, buggy, readFile(t, filepath.Join(ws, "main.go")))
	assert.NotContains(t, r.stdout, "state/sessions")

	infos := sessionsOf(t, sessions)
	require.Len(t, infos, 2)
	for _, in := range infos {
		tr, err := session.NewJSONL(sessions, session.StoreConfig{}).Load(context.Background(), in.Header.ID)
		require.NoError(t, err)
		if in.Header.Parent == "" {
			assert.Contains(t, new(session.History).Add(tr.Events...).Messages()[0].Text(), "fix the typo", "the original log is whole")
		}
	}
	// The undo can itself be undone: its checkpoint's contents are there.
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-continue", "-rewind", "last", "-dry-run")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}
