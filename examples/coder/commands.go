package main

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"strings"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/session"
)

// helpText is /help: the prompt loop's keys and commands.
const helpText = `Type a prompt and press Enter; end a line with \ to continue it on the next. Up and Down recall earlier prompts. Ctrl-C cancels a running turn; Ctrl-D or /exit leaves.
While a turn runs, type a line: Enter steers it into the turn, Tab queues it as the next turn (Enter at an empty prompt runs what waits).
/clear          start a new session in this workspace (the current one stays resumable)
/compact        summarize the older part of the conversation now, to make room
/context        list the instruction files, skills and hooks in use
/cost           what the session has spent so far, in tokens and dollars
/model [NAME]   show the model, or switch to NAME (or provider:NAME)
/undo           take back the last turn: its file changes and the conversation
/rewind [N]     list the turns and pick one, or go back to before turn N (asks first)
/usage          the session's tokens
/help           this text`

// commandWord matches a line that is a command: a slash and a word,
// alone or before arguments. A path such as /usr/bin/env is a prompt.
var commandWord = regexp.MustCompile(`^/[A-Za-z][A-Za-z0-9_-]*(\s|$)`)

// command runs the prompt loop's own commands: handled is true when line
// was one (or empty), leave when it asks to exit. A line that looks like
// a command but is none is answered here and never sent to the model.
func (a *app) command(ctx context.Context, line string) (handled, leave bool) {
	line = strings.TrimSpace(line)
	if line == "" {
		return true, false
	}
	if !commandWord.MatchString(line) {
		return false, false
	}
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/exit", "/quit":
		return true, true
	case "/help":
		a.view.Notice(ui.NoticeInfo, helpText)
	case "/usage":
		u := a.sess.Usage()
		a.view.Notice(ui.NoticeInfo, fmt.Sprintf("session tokens: %s in (%s cached), %s out", ui.Count(u.InputTokens), ui.Count(u.CacheHitTokens), ui.Count(u.OutputTokens)))
	case "/cost":
		a.showCost()
	case "/context":
		a.showContext(ctx)
	case "/clear":
		a.clear(ctx)
	case "/compact":
		a.runTurn(ctx, "", false, func(c context.Context) iter.Seq2[agent.Event, error] { return a.sess.Compact(c) })
	case "/model":
		a.switchModel(arg)
	case "/undo":
		a.undo(ctx)
	case "/rewind":
		a.rewindCommand(ctx, arg)
	default:
		a.view.Notice(ui.NoticeWarn, "unknown command "+name+", /help lists the commands")
	}
	return true, false
}

// showCost is /cost: the session's spend so far.
func (a *app) showCost() {
	u := a.sess.Usage()
	msg := fmt.Sprintf("spent so far: %s in (%s cached), %s out", ui.Count(u.InputTokens), ui.Count(u.CacheHitTokens), ui.Count(u.OutputTokens))
	if c := a.sess.Cost(); c > 0 {
		msg += fmt.Sprintf(" · $%.4f", c)
	} else {
		msg += " · no price known for " + a.sess.Model().Info().Name
	}
	a.view.Notice(ui.NoticeInfo, msg)
}

// clear is /clear: a new session in the workspace; the old one is
// closed and stays resumable.
func (a *app) clear(ctx context.Context) {
	old := a.sess
	s, err := a.loop.NewSession(ctx, session.Header{Cwd: a.root})
	if err != nil {
		a.view.Notice(ui.NoticeError, "a new session: "+err.Error())
		return
	}
	if m := old.Model(); m != nil {
		_ = s.SetModel(m) // a /model switch carries over
	}
	if err := old.Close(); err != nil {
		a.view.Notice(ui.NoticeWarn, "closing the session "+old.Header().ID+": "+err.Error())
	}
	a.sess = s
	a.view.Notice(ui.NoticeInfo, fmt.Sprintf("new session %s · the previous one is resumable with -resume %s", s.Header().ID, old.Header().ID))
}

// switchModel is /model: with no name it shows the model, with one it
// switches the session to it (provider:NAME for another provider).
func (a *app) switchModel(name string) {
	if name == "" {
		info := a.sess.Model().Info()
		msg := "model: " + info.Name
		if info.ContextWindow > 0 {
			msg += fmt.Sprintf(" · context window %s tokens", ui.Count(int64(info.ContextWindow)))
		}
		a.view.Notice(ui.NoticeInfo, msg+" · switch with /model NAME")
		return
	}
	provider, err := a.provider()
	if err != nil {
		a.view.Notice(ui.NoticeError, err.Error())
		return
	}
	id := name
	if p, rest, ok := strings.Cut(name, ":"); ok && knownProvider(p) {
		provider, id = p, rest
	}
	m, shown, err := a.newModel(provider, id, true, a.logger)
	if err == nil {
		err = a.sess.SetModel(m)
	}
	if err != nil {
		a.view.Notice(ui.NoticeError, "/model "+name+": "+err.Error())
		return
	}
	a.view.Notice(ui.NoticeInfo, "model: "+m.Info().Name+" ("+shown+") from the next turn")
}
