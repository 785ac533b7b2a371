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
