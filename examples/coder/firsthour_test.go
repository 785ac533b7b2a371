package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// Issue 35, item 2: stdin at /dev/null (cron, CI, systemd) is not a
// terminal: a call that needs an answer pauses the turn durably (exit
// 3), in the one-turn mode and in the prompt loop, and is never denied
// for want of an answer.
func TestDevNullStdinPauses(t *testing.T) {
	leakcheck.Check(t)
	for _, prompt := range []bool{true, false} {
		p := newProvider(t, call(writeCall("call_w", "new.txt", "made\n")), say("done"))
		ws := workspace(t, nil)
		null, err := os.Open(os.DevNull)
		require.NoError(t, err)
		args := []string{"-C", ws, "-sessions", t.TempDir(), "-permission-mode", "default"}
		if prompt {
			args = append(args, "-p", "write new.txt")
		}
		stdin := any(null)
		if !prompt {
			// The prompt loop reads its one prompt from a file.
			f := filepath.Join(t.TempDir(), "prompts")
			require.NoError(t, os.WriteFile(f, []byte("write new.txt\n"), 0o600))
			in, err := os.Open(f)
			require.NoError(t, err)
			defer in.Close()
			stdin = in
		}
		r := runWith(t, context.Background(), p.env(), stdin.(*os.File), nil, args...)
		null.Close()
		require.Equal(t, exitPaused, r.code, "prompt %v: %s\n%s", prompt, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "The turn is paused: 1 call(s) wait for approval.")
		assert.NotContains(t, r.stdout+r.stderr, "end of input")
		assert.NoFileExists(t, filepath.Join(ws, "new.txt"))
		assert.Len(t, p.Requests(), 1, "the model is not told of a denial")
	}
}

// Issue 35, item 9: the printed commands keep -sessions, and run as
// printed they finish the turn; -continue without a session names the
// directory it searched.
func TestPauseCommandsKeepSessions(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(writeCall("call_w", "new.txt", "made\n")), say("Wrote it."))
	ws := workspace(t, nil)
	sessions := filepath.Join(t.TempDir(), "my logs")
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-permission-mode", "default", "-p", "write new.txt")
	require.Equal(t, exitPaused, r.code, r.stderr)
	want := "coder -C " + ws + " -sessions '" + sessions + "' -continue -approve all"
	require.Contains(t, r.stdout, "Approve with: "+want)
	assert.Contains(t, r.stdout, "Reject with:  coder -C "+ws+" -sessions '"+sessions+"' -continue -reject all")

	// Run the printed command (its words, unquoted as a shell would).
	args := strings.Fields(strings.TrimPrefix(strings.ReplaceAll(want, "'"+sessions+"'", "SESSIONS"), "coder "))
	for i, a := range args {
		if a == "SESSIONS" {
			args[i] = sessions
		}
	}
	r = runCLI(t, p.env(), "", args...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Wrote it.")

	other := t.TempDir()
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", other, "-continue", "-approve", "all")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "no earlier session of "+ws+" in "+other)
}

// Issue 35, item 5: the prompt loop's commands run here and never reach
// the model: /cost, /model (show and switch), /compact (a summary now),
// /clear (a new session), /help; any other /word is answered with
// "unknown command", while a path is a prompt.
func TestSlashCommands(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t,
		say("first answer"),
		say("second answer"),
		say("Summary: the user said hello and got a first answer."),
		say("third answer"),
		say("fourth answer"))
	ws := workspace(t, nil)
	stdin := strings.Join([]string{
		"/cost", "/model", "hello there " + strings.Repeat("and some more words ", 300), "a second prompt", "/compact", "/model other-model", "/bogus now", "/usr/bin/env is where?",
		"/cost", "/clear", "fresh start", "/help",
	}, "\n") + "\n"
	r := runCLI(t, p.env(), stdin, "-C", ws, "-sessions", t.TempDir())
	require.Equal(t, exitOK, r.code, r.stderr)
	out := r.stdout

	assert.Contains(t, out, "spent so far: 0 in (0 cached), 0 out · no price known for test-model")
	assert.Contains(t, out, "model: test-model · switch with /model NAME")
	assert.Contains(t, out, "model: other-model (http")
	assert.Contains(t, out, "unknown command /bogus, /help lists the commands")
	assert.Contains(t, out, "spent so far: 400 in (0 cached), 40 out")
	assert.Contains(t, out, "⌁ context: 1 earlier message summarized")
	assert.Regexp(t, `new session (\S+) · the previous one is resumable with -resume \S+\n(?s:.*)session (\S+) · resume with -resume`, out)
	m := regexp.MustCompile(`new session (\S+) ·`).FindStringSubmatch(out)
	require.NotNil(t, m)
	assert.Contains(t, out, "session "+m[1]+" · resume with -resume "+m[1], "the last line names the session in use")
	assert.Contains(t, out, "/compact        summarize the older part")

	reqs := p.Requests()
	require.Equal(t, 5, len(reqs), "four prompts and one summary; no command reached the model:\n%s", out)
	for _, q := range reqs {
		assert.NotContains(t, q.Text(t), "/bogus")
		assert.NotContains(t, q.Text(t), "/cost")
	}
	assert.Equal(t, "test-model", reqs[0].JSON(t)["model"])
	assert.Contains(t, reqs[2].Text(t), "hello there", "the summary request carries the conversation")
	third := reqs[3].Text(t)
	assert.NotContains(t, third, "and some more words")
	assert.Equal(t, "other-model", reqs[3].JSON(t)["model"], "/model switched the session's model")
	assert.Contains(t, third, "the user said hello and got a first answer", "the history was compacted")
	assert.Contains(t, third, "/usr/bin/env is where?")
	fresh := reqs[4].Text(t)
	assert.Contains(t, fresh, "fresh start")
	assert.NotContains(t, fresh, "hello there", "/clear started a new session")
	assert.Equal(t, "other-model", reqs[4].JSON(t)["model"], "the switch carries over /clear")
}
