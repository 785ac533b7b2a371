package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// /rewind on a real pseudo-terminal: the turns are listed, the turn and
// the confirmation are typed at the program's own questions between
// turns, and the file the turn wrote is gone.
func TestRewindOnTerminal(t *testing.T) {
	p := newProvider(t, call(writeCall("call_w", "new.txt", "made\n")), say("Wrote new.txt."))
	ws := workspace(t, nil)
	ctl, tty := openPTY(t, 80, 24)
	screen := screenReader(ctl)
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"-C", ws, "-sessions", t.TempDir(), "-permission-mode", "bypass", "-diagnostics=false"},
			p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	typed := func(s string) { _, err := ctl.Write([]byte(s)); require.NoError(t, err) }
	require.True(t, screen.waitFor("› "), screen.String())
	typed("make the file\r")
	require.True(t, screen.waitFor("── completed"), screen.String())
	require.FileExists(t, filepath.Join(ws, "new.txt"))

	typed("/rewind\r")
	require.True(t, screen.waitFor("rewind to before turn [1-1], Enter cancels › "), screen.String())
	assert.Contains(t, screen.String(), "  1  ")
	assert.Contains(t, screen.String(), "make the file  (1 created)")
	typed("1\r")
	require.True(t, screen.waitFor("rewind? [y/N] › "), screen.String())
	assert.Contains(t, screen.String(), "delete    new.txt  +1 -0")
	typed("y\r")
	require.True(t, screen.waitFor("rewound to before turn 1: 1 path taken back"), screen.String())
	assert.NoFileExists(t, filepath.Join(ws, "new.txt"))

	time.Sleep(50 * time.Millisecond)
	typed("\x04")
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code)
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-D at the prompt did not exit")
	}
	assert.Len(t, p.Requests(), 2, "a rewind calls no model")
}
