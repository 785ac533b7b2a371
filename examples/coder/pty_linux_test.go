package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of the given size: the controller side
// (what a terminal emulator holds) and the terminal side (the program's
// stdin and stdout).
func openPTY(t *testing.T, cols, rows int) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	require.NoError(t, unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	setSize(t, ctl, cols, rows)
	t.Cleanup(func() { tty.Close(); ctl.Close() })
	return ctl, tty
}

func setSize(t *testing.T, f *os.File, cols, rows int) {
	require.NoError(t, unix.IoctlSetWinsize(int(f.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}))
}

// screenReader collects what the program wrote to the terminal.
func screenReader(ctl *os.File) *lockedBuffer {
	var b lockedBuffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ctl.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	return &b
}

// slowly replies after a pause, so keys can be typed during the turn.
func slowly(d time.Duration, r reply) reply {
	return reply{Handler: func(w http.ResponseWriter, req *http.Request) {
		time.Sleep(d)
		r.ServeHTTP(w, req)
	}}
}

// The prompt loop on a real pseudo-terminal: arrow keys edit the line,
// Up recalls the last prompt (from the history file of an earlier run in
// the same workspace too), a line typed during a turn without Enter comes
// back as the next prompt's text without being sent, a resize is followed, and Ctrl-C at
// the prompt exits.
func TestPromptLoopOnTerminal(t *testing.T) {
	p := newProvider(t, slowly(300*time.Millisecond, say("one")), say("two"), say("three"))
	ws := workspace(t, nil)
	sessions := t.TempDir()
	ctl, tty := openPTY(t, 80, 24)
	screen := screenReader(ctl)
	interrupts := make(chan os.Signal, 1)
	resize := make(chan os.Signal, 1)
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"-C", ws, "-sessions", sessions}, p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: interrupts, resize: resize})
	}()
	typed := func(s string) { _, err := ctl.Write([]byte(s)); require.NoError(t, err) }
	require.True(t, screen.waitFor("› "), screen.String())

	// "helo", Left, "l", End, " world", Enter: the model gets the edited line.
	typed("helo" + keyLeft + "l\x05 world\r")
	require.True(t, screen.waitFor("thinking"), screen.String())
	// Typed during the turn without Enter: shown below the output while
	// typed, not sent, and gone from the output once the turn ends.
	typed("next one")
	require.True(t, screen.waitFor("── completed"), screen.String())
	require.True(t, screen.waitFor("typed during the turn, not sent"), screen.String())
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, p.Requests(), 1, "typed-ahead text is never sent by itself")
	before := emulate(screen.String(), 80)
	assert.NotContains(t, before[:strings.Index(before, "── completed")], "next one", "the line typed during a turn does not stay in the output")

	// Enter sends the kept text.
	typed("\r")
	require.True(t, screen.waitFor("two"), screen.String())
	require.Eventually(t, func() bool { return strings.Count(screen.String(), "── completed") == 2 }, time.Minute, 10*time.Millisecond)

	// Up twice recalls the first prompt.
	setSize(t, ctl, 120, 30)
	resize <- unix.SIGWINCH
	typed(keyUp + keyUp + "!\r")
	require.Eventually(t, func() bool { return strings.Count(screen.String(), "── completed") == 3 }, time.Minute, 10*time.Millisecond)

	// Ctrl-C at the prompt leaves.
	time.Sleep(50 * time.Millisecond)
	interrupts <- os.Interrupt
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code)
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-C at the prompt did not exit")
	}

	reqs := p.Requests()
	require.Len(t, reqs, 3)
	last := reqs[2].Messages(t)
	assert.Equal(t, "hello world", last[1]["content"], "the arrow keys moved the cursor")
	assert.Equal(t, "next one", last[3]["content"], "the typed-ahead text, sent with Enter")
	assert.Equal(t, "hello world!", last[5]["content"], "Up recalled the first prompt")
	assert.NotContains(t, screen.String(), "^[[", "no arrow key shows up as text")

	// The terminal was given back as it was: echo and line mode on.
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	require.NoError(t, err)
	assert.NotZero(t, tio.Lflag&unix.ECHO)
	assert.NotZero(t, tio.Lflag&unix.ICANON)

	// A later coder in the same workspace has the history.
	files, err := filepath.Glob(filepath.Join(sessions, "history", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one history file for the workspace")
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var entries []string
	for line := range strings.Lines(string(data)) {
		var s string
		require.NoError(t, json.Unmarshal([]byte(line), &s))
		entries = append(entries, s)
	}
	assert.Equal(t, []string{"hello world", "next one", "hello world!"}, entries)
}

// Keys as a terminal sends them.
const (
	keyUp   = "\x1b[A"
	keyLeft = "\x1b[D"
)

// An approval question during a turn is answered on the terminal through
// the one key reader: the answer is edited like a prompt, keys typed
// before the question stay typed ahead, and the call runs once approved.
func TestApprovalOnTerminal(t *testing.T) {
	p := newProvider(t, call(writeCall("call_w", "new.txt", "made\n")), say("Wrote new.txt."))
	ws := workspace(t, nil)
	ctl, tty := openPTY(t, 80, 24)
	screen := screenReader(ctl)
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"-C", ws, "-sessions", t.TempDir()}, p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	typed := func(s string) { _, err := ctl.Write([]byte(s)); require.NoError(t, err) }
	require.True(t, screen.waitFor("› "), screen.String())
	typed("make the file\r")
	require.True(t, screen.waitFor("or type feedback › "), screen.String())
	// The question shows what is approved: the content's size and head.
	assert.Contains(t, screen.String(), "content: 1 line, 5 bytes")
	assert.Contains(t, screen.String(), "│ made")
	typed("yx" + "\x7f" + "\r")
	require.True(t, screen.waitFor("── completed"), screen.String())
	got, err := os.ReadFile(filepath.Join(ws, "new.txt"))
	require.NoError(t, err, "the approved write ran")
	assert.Equal(t, "made\n", string(got))
	require.True(t, screen.waitFor("› "), screen.String())
	typed("\x04")
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code)
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-D at the prompt did not exit")
	}
	assert.Len(t, p.Requests(), 2)
}

// Issue 35, item 6: on a short terminal an edit's question shows the
// lines it removes and adds, within the terminal's height.
func TestEditApprovalOnShortTerminal(t *testing.T) {
	old := strings.Repeat("old line\n", 40)
	p := newProvider(t, call(toolCall(0, "r1", "read", map[string]any{"file_path": "a.txt"})),
		call(toolCall(0, "e1", "edit", map[string]any{"file_path": "a.txt", "old_string": old, "new_string": "new line\n"})),
		say("Edited."))
	ws := workspace(t, map[string]string{"a.txt": old})
	ctl, tty := openPTY(t, 80, 16)
	screen := screenReader(ctl)
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"-C", ws, "-sessions", t.TempDir()}, p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	typed := func(s string) { _, err := ctl.Write([]byte(s)); require.NoError(t, err) }
	require.True(t, screen.waitFor("› "), screen.String())
	typed("edit it\r")
	require.True(t, screen.waitFor("or type feedback › "), screen.String())
	q := screen.String()
	q = q[strings.LastIndex(q, "? edit"):]
	assert.Contains(t, q, "replaces 40 lines with 1 line")
	assert.Contains(t, q, "- old line")
	assert.Contains(t, q, "+ new line")
	assert.LessOrEqual(t, strings.Count(q, "\n"), 16-2, "the question fits the terminal:\n%s", q)
	typed("y\r")
	require.True(t, screen.waitFor("── completed"), screen.String())
	got, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new line\n", string(got))
	require.True(t, screen.waitFor("› "), screen.String())
	typed("\x04")
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code)
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-D at the prompt did not exit")
	}
}
