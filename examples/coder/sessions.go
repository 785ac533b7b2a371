package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/session"
)

// histFlags are the flags about earlier sessions: checkpoints, rewinding,
// forking and listing.
type histFlags struct {
	noCheckpoints bool
	rewind        string
	target        agent.RewindTarget
	scope         string
	dryRun        bool
	force         bool
	fork          string
	list          bool
}

func (h *histFlags) register(fset *flag.FlagSet) {
	fset.BoolVar(&h.noCheckpoints, "no-checkpoints", false, "record no workspace checkpoints (then /undo, /rewind and -rewind cannot bring files back)")
	fset.StringVar(&h.rewind, "rewind", "", "with -continue or -resume: take the workspace and the conversation back to before turn `n` (last: the last turn; @SEQ: a checkpoint); the conversation goes on in a fork")
	fset.StringVar(&h.scope, "rewind-scope", "all", "what -rewind takes back: all, files or conversation")
	fset.BoolVar(&h.dryRun, "dry-run", false, "with -rewind: print what it would do and change nothing")
	fset.BoolVar(&h.force, "force", false, "with -rewind: overwrite files changed outside the agent since the checkpoint (their content is kept first)")
	fset.StringVar(&h.fork, "fork", "", "start a new session as a copy of session `id` (id@SEQ: up to its event SEQ) and go on in it; the original stays")
	fset.BoolVar(&h.list, "list", false, "list the sessions of the workspace (id, time, title) and exit")
}

// check validates the flags once they are parsed.
func (h *histFlags) check(o *options, set map[string]bool) error {
	if h.rewind != "" {
		t, err := agent.ParseRewindTarget(h.rewind)
		if err != nil {
			return usagef("-rewind %q: give a turn number, last, or @SEQ", h.rewind)
		}
		h.target = t
		if o.resume == "" && !o.cont {
			return usagef("-rewind goes back in an earlier session: give -continue (or -resume ID) too")
		}
		if o.perm.approve != "" || o.perm.reject != "" {
			return usagef("-rewind and -approve/-reject: answer the waiting calls first, then rewind")
		}
	}
	if _, ok := scopeOf(h.scope); !ok {
		return usagef("-rewind-scope %q: use all, files or conversation", h.scope)
	}
	for _, name := range []string{"dry-run", "force", "rewind-scope"} {
		if set[name] && h.rewind == "" {
			return usagef("-%s goes with -rewind", name)
		}
	}
	if h.dryRun && o.hasPrompt {
		return usagef("-dry-run changes nothing, so it runs no prompt: drop the prompt, or -dry-run")
	}
	if h.fork != "" && (o.resume != "" || o.cont) {
		return usagef("-fork, -resume and -continue each pick a session: give one of them")
	}
	if h.list && (o.hasPrompt || o.resume != "" || o.cont || h.fork != "" || h.rewind != "") {
		return usagef("-list only lists: give it alone (with -C or -sessions)")
	}
	return nil
}

// scopeOf reads a rewind scope as the flag and /rewind write it.
func scopeOf(s string) (agent.RewindScope, bool) {
	switch s {
	case "", "all":
		return agent.RewindAll, true
	case "files":
		return agent.RewindFiles, true
	case "conversation":
		return agent.RewindConversation, true
	}
	return 0, false
}

// checkpointOptions turns on the workspace checkpoints behind /undo,
// /rewind and -rewind, unless -no-checkpoints. Their contents go to
// the attachment store beside the session logs. A sessions directory
// inside the workspace is left out: a rewind must never touch the logs.
func (a *app) checkpointOptions() []agent.Option {
	if a.o.hist.noCheckpoints {
		return nil
	}
	var cfg checkpoint.Config
	if rel, err := filepath.Rel(a.root, a.sessionsDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		cfg.Ignore = []string{"/" + filepath.ToSlash(rel) + "/"}
	} else if err == nil && rel == "." {
		cfg.Ignore = []string{"*"} // the workspace is the sessions directory
	}
	return []agent.Option{agent.WithCheckpoints(cfg)}
}

// pickOrFork is pickSession, and for -fork ID[@SEQ] the fork it makes of
// that session: the id returned is the new session's.
func (a *app) pickOrFork(ctx context.Context) (string, error) {
	if a.o.hist.fork == "" {
		return a.pickSession(ctx)
	}
	id, at := a.o.hist.fork, int64(0)
	if i := strings.LastIndexByte(id, '@'); i >= 0 {
		n, err := strconv.ParseInt(id[i+1:], 10, 64)
		if err != nil || n <= 0 {
			return "", usagef("-fork %s: after @ comes the number of an event of the session", id)
		}
		id, at = id[:i], n
	}
	// The session to fork is checked and its workspace taken as -resume
	// does it.
	a.o.resume = id
	_, err := a.pickSession(ctx)
	a.o.resume = ""
	if err != nil {
		return "", err
	}
	h, err := a.store.Fork(ctx, id, session.ForkOptions{At: at})
	if errors.Is(err, harness.CodeNotFound) {
		return "", usagef("session %s has no event %d to fork at", id, at)
	}
	if err != nil {
		return "", err
	}
	return h.ID, nil
}

// listSessions is -list: the sessions of the workspace, newest first,
// one a line: id, time, title. It needs no model.
func (a *app) listSessions(ctx context.Context) (int, error) {
	if _, err := a.openStore(ctx); err != nil {
		return 0, err
	}
	infos, err := a.store.List(ctx, session.ListOptions{Workspace: filepath.ToSlash(a.root), Limit: listLimit})
	if err != nil {
		return 0, err
	}
	if len(infos) == 0 {
		fmt.Fprintf(a.stderr, "coder: no sessions in %s yet\n", a.root)
		return exitOK, nil
	}
	for _, in := range infos {
		fmt.Fprintln(a.stdout, listLine(in, a.root))
	}
	if len(infos) == listLimit {
		fmt.Fprintf(a.stderr, "coder: the newest %d shown\n", listLimit)
	}
	return exitOK, nil
}

// listLimit is how many sessions -list shows.
const listLimit = 50

// listLine is one session as -list shows it: its id, when it was last
// written, and its title; a sub-agent's session, a fork and a session in
// a directory below the workspace say so.
func listLine(in session.Info, root string) string {
	t := in.Updated
	if t.IsZero() {
		t = in.Header.Created
	}
	title := oneLine(in.Title, 60)
	if title == "" {
		title = "(no prompt yet)"
	}
	var notes []string
	if in.Header.ParentCall != "" {
		notes = append(notes, "sub-agent of "+in.Header.Parent)
	} else if in.Header.Parent != "" {
		notes = append(notes, "fork of "+in.Header.Parent)
	}
	if rel, err := filepath.Rel(root, filepath.FromSlash(in.Header.Cwd)); err == nil && rel != "." {
		notes = append(notes, "in "+filepath.ToSlash(rel))
	}
	if len(notes) > 0 {
		title += "  (" + strings.Join(notes, ", ") + ")"
	}
	return fmt.Sprintf("%s  %s  %s", in.Header.ID, t.Local().Format(time.DateTime), title)
}

// oneLine is s on one line, cut to at most n runes: runs of white space
// and control characters (a terminal's escapes among them) become one
// space.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// showRecap is the short recap -continue and -fork show: the last thing
// the user asked and the start of the answer.
func (a *app) showRecap() {
	if a.o.hist.fork != "" {
		a.view.Notice(ui.NoticeInfo, fmt.Sprintf("a fork of session %s, which stays as it was", a.sess.Header().Parent))
	}
	if (!a.o.cont && a.o.hist.fork == "") || a.o.perm.approve != "" || a.o.perm.reject != "" {
		return
	}
	if s := recap(a.sess.Messages()); s != "" {
		a.view.Notice(ui.NoticeInfo, s)
	}
}

// recap is the last exchange of msgs, short: the last user prompt and the
// last text the assistant wrote after it. It is empty when there was none.
func recap(msgs []harness.Message) string {
	var user, answer string
	for i := len(msgs) - 1; i >= 0 && user == ""; i-- {
		m := msgs[i]
		switch t := strings.TrimSpace(m.Text()); {
		case t == "":
		case m.Role == harness.RoleAssistant && answer == "":
			answer = t
		case m.Role == harness.RoleUser:
			user = t
		}
	}
	if user == "" {
		return ""
	}
	s := "last time › " + oneLine(user, 100)
	if answer != "" {
		s += "\n          ‹ " + oneLine(answer, 200)
	}
	return s
}
