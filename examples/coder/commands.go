package main

import (
	"fmt"
	"strings"

	"github.com/go-harness/harness/examples/coder/internal/ui"
)

// command runs the prompt loop's own commands: handled is true when line
// was one (or empty), leave when it asks to exit.
func (a *app) command(line string) (handled, leave bool) {
	switch strings.TrimSpace(line) {
	case "":
		return true, false
	case "/exit", "/quit":
		return true, true
	case "/help":
		a.view.Notice(ui.NoticeInfo, "Type a prompt and press Enter; end a line with \\ to continue it. Up and Down recall earlier prompts. /usage shows the session's tokens, /exit (or Ctrl-D) leaves. Ctrl-C cancels a running turn.")
		return true, false
	case "/usage":
		u := a.sess.Usage()
		a.view.Notice(ui.NoticeInfo, fmt.Sprintf("session tokens: %s in (%s cached), %s out", ui.Count(u.InputTokens), ui.Count(u.CacheHitTokens), ui.Count(u.OutputTokens)))
		return true, false
	}
	return false, false
}
