package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/internal/leakcheck"
)

// tickCommand prints a line every interval for about the given time:
// 3 s under HARNESS_LONG_TESTS=1, a fraction of a second by default.
func tickCommand() (cmd string, ticks int) {
	ticks, pause := 4, "0.15"
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		ticks, pause = 10, "0.3"
	}
	return fmt.Sprintf("for i in $(seq 1 %d); do echo tick $i; sleep %s; done", ticks, pause), ticks
}

// Piped, a running command's lines are appended as they arrive, before
// its card, and the card does not print them again.
func TestLiveOutputPiped(t *testing.T) {
	leakcheck.Check(t)
	cmd, ticks := tickCommand()
	p := newProvider(t, call(toolCall(0, "c1", "bash", map[string]any{"command": cmd})), say("done"))
	ws := workspace(t, nil)
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	res := make(chan result, 1)
	go func() {
		res <- runTo(context.Background(), out, errOut, p.env(), strings.NewReader(""), nil, "-C", ws, "-sessions", t.TempDir(), "-permission-mode", "bypass", "tick")
	}()
	require.True(t, out.waitFor("│ tick 1\n"), out.String())
	assert.NotContains(t, out.String(), "● $ ", "the first line shows while the command still runs")
	r := <-res
	require.Equal(t, exitOK, r.code, errOut.String())
	got := out.String()
	for i := 1; i <= ticks; i++ {
		assert.Equal(t, 1, strings.Count(got, fmt.Sprintf("│ tick %d\n", i)), "tick %d is printed once", i)
	}
	assert.Contains(t, got, fmt.Sprintf("│ tick %d\n● $ %s", ticks, cmd), "the card follows the live lines")
	assert.Contains(t, got, fmt.Sprintf("│ (%d lines of output above)\n  exit 0\n", ticks))
}

// On a terminal the last lines are redrawn in place while the command
// runs, and erased before the final card, which shows them once.
func TestLiveOutputOnTerminal(t *testing.T) {
	leakcheck.Check(t)
	cmd, ticks := tickCommand()
	p := newProvider(t, call(toolCall(0, "c1", "bash", map[string]any{"command": cmd})), say("done"))
	ws := workspace(t, nil)
	ctl, tty := openPTY(t, 80, 24)
	screen := screenReader(ctl)
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"-C", ws, "-sessions", t.TempDir(), "-permission-mode", "bypass", "tick"},
			p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	require.True(t, screen.waitFor("│ tick 2"), screen.String())
	assert.NotContains(t, screen.String(), "● $ ")
	select {
	case code := <-done:
		require.Equal(t, exitOK, code, screen.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not end")
	}
	// The run has written everything, but the reader of the terminal may
	// not have read it all yet: wait for the card's last line.
	require.True(t, screen.waitFor("exit 0"), screen.String())
	raw := screen.String()
	assert.Regexp(t, regexp.MustCompile(`\x1b\[\d+A\r\x1b\[J`), raw, "the live block is redrawn in place")
	final := raw[strings.LastIndex(raw, "\x1b[J")+len("\x1b[J"):]
	assert.Contains(t, final, "● $ "+cmd)
	for i := max(1, ticks-ui.CardTerminalLines+1); i <= ticks; i++ {
		assert.Equal(t, 1, strings.Count(final, fmt.Sprintf("│ tick %d\r\n", i)), "the final card shows tick %d once", i)
	}
	assert.Contains(t, final, "exit 0")
}
