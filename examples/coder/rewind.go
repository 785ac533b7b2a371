package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/examples/coder/internal/ui"
)

// rewindFlag is -rewind: the dry run is shown, and then, unless -dry-run,
// the rewind is done and the session goes on in its fork. A conflict
// refuses the rewind, changing nothing, unless -force.
func (a *app) rewindFlag(ctx context.Context) int {
	h := &a.o.hist
	scope, _ := scopeOf(h.scope)
	opts := agent.RewindOptions{Scope: scope, Force: h.force}
	dry, err := a.sess.Rewind(ctx, h.target, agent.RewindOptions{Scope: scope, Force: h.force, DryRun: true})
	if err != nil {
		a.rewindFailed(err)
		return exitFailed
	}
	a.showPlan(dry)
	if h.dryRun {
		a.view.Notice(ui.NoticeInfo, "dry run: nothing was changed")
		return exitOK
	}
	if conflicts := conflictsOf(dry); len(conflicts) > 0 && !h.force {
		a.view.Notice(ui.NoticeError, conflictText(conflicts)+"; nothing was changed. Run it again with -force to overwrite them (their current content is kept in a checkpoint first).")
		return exitFailed
	}
	if err := a.rewind(ctx, h.target, opts); err != nil {
		return exitFailed
	}
	return exitOK
}

// undo is /undo: the last turn taken back, files and conversation. The
// dry run is shown first; only files changed outside the agent ask for
// a confirmation.
func (a *app) undo(ctx context.Context) {
	a.interactiveRewind(ctx, agent.RewindTarget{Turn: agent.LastTurn}, agent.RewindAll, false)
}

// rewindCommand is /rewind [N|last|@SEQ] [all|files|conversation]:
// without a target it lists the turns and asks which; it shows the dry
// run and asks before it changes anything.
func (a *app) rewindCommand(ctx context.Context, arg string) {
	target, pick, scope, err := parseRewindArgs(arg)
	if err != nil {
		a.view.Notice(ui.NoticeWarn, err.Error())
		return
	}
	if pick {
		var ok bool
		if target, ok = a.pickTurn(ctx); !ok {
			return
		}
	}
	a.interactiveRewind(ctx, target, scope, true)
}

// parseRewindArgs reads the arguments of /rewind: an optional target
// (pick is true without one: the user picks a turn) and an optional
// scope after it.
func parseRewindArgs(arg string) (target agent.RewindTarget, pick bool, scope agent.RewindScope, err error) {
	words := strings.Fields(arg)
	if len(words) > 0 {
		if s, ok := scopeOf(words[len(words)-1]); ok {
			scope, words = s, words[:len(words)-1]
		}
	}
	switch len(words) {
	case 0:
		return target, true, scope, nil
	case 1:
		if target, err = agent.ParseRewindTarget(words[0]); err != nil {
			return target, false, scope, fmt.Errorf("/rewind %s: give a turn number, last, or @SEQ", words[0])
		}
		return target, false, scope, nil
	}
	return target, false, scope, errors.New("usage: /rewind [N|last|@SEQ] [all|files|conversation]")
}

// pickTurn lists the session's turns and asks which one to go back to.
func (a *app) pickTurn(ctx context.Context) (agent.RewindTarget, bool) {
	pts, err := a.sess.RewindPoints(ctx)
	if err != nil {
		a.rewindFailed(err)
		return agent.RewindTarget{}, false
	}
	if len(pts) == 0 {
		a.view.Notice(ui.NoticeInfo, "no turn to go back to yet")
		return agent.RewindTarget{}, false
	}
	var b strings.Builder
	b.WriteString("turns of this session (rewinding to one goes back to just before it):")
	for _, p := range pts {
		b.WriteString("\n" + pointLine(p))
	}
	a.view.Notice(ui.NoticeInfo, b.String())
	line, ok := a.ask(ctx, fmt.Sprintf("rewind to before turn [1-%d], Enter cancels › ", len(pts)))
	n, err := strconv.Atoi(strings.TrimSpace(line))
	switch {
	case !ok || strings.TrimSpace(line) == "":
		a.view.Notice(ui.NoticeInfo, "nothing was changed")
		return agent.RewindTarget{}, false
	case err != nil || n < 1 || n > len(pts):
		a.view.Notice(ui.NoticeWarn, fmt.Sprintf("%q is not a turn of this session; nothing was changed", strings.TrimSpace(line)))
		return agent.RewindTarget{}, false
	}
	return agent.RewindTarget{Turn: n}, true
}

// pointLine is one turn as /rewind lists it.
func pointLine(p agent.RewindPoint) string {
	s := fmt.Sprintf("%3d  %s  %s", p.Turn, p.Time.Local().Format("15:04"), oneLine(p.Prompt, 50))
	if n := p.Added + p.Modified + p.Deleted; n > 0 {
		s += fmt.Sprintf("  (%s)", countText(p.Added, p.Modified, p.Deleted))
	}
	if p.Seq == 0 {
		s += "  (no checkpoint: the conversation only)"
	}
	return s
}

// countText says how many paths were created, modified and deleted.
func countText(added, modified, deleted int) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{added, "created"}, {modified, "modified"}, {deleted, "deleted"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}

// interactiveRewind shows the dry run of a rewind to target, asks (when
// confirm is set, or when files changed outside the agent would be
// overwritten), and rewinds.
func (a *app) interactiveRewind(ctx context.Context, target agent.RewindTarget, scope agent.RewindScope, confirm bool) {
	dry, err := a.sess.Rewind(ctx, target, agent.RewindOptions{Scope: scope, DryRun: true})
	if err != nil {
		a.rewindFailed(err)
		return
	}
	a.showPlan(dry)
	opts := agent.RewindOptions{Scope: scope}
	question := "rewind? [y/N] › "
	if conflicts := conflictsOf(dry); len(conflicts) > 0 {
		a.view.Notice(ui.NoticeWarn, conflictText(conflicts))
		question, opts.Force, confirm = "overwrite them and rewind? (their content is kept in a checkpoint) [y/N] › ", true, true
	}
	if confirm {
		line, ok := a.ask(ctx, question)
		if ans := strings.ToLower(strings.TrimSpace(line)); !ok || ans != "y" && ans != "yes" {
			a.view.Notice(ui.NoticeInfo, "nothing was changed")
			return
		}
	}
	a.rewind(ctx, target, opts) //nolint:errcheck // shown
}

// rewind does the rewind and goes on in its fork, closing the session it
// was called on (which stays in the store, resumable).
func (a *app) rewind(ctx context.Context, target agent.RewindTarget, opts agent.RewindOptions) error {
	res, err := a.sess.Rewind(ctx, target, opts)
	if err != nil {
		if res != nil && res.Files != nil && errors.Is(err, harness.CodeConflict) {
			a.view.Notice(ui.NoticeError, conflictText(res.Files.Conflicts())+"; nothing was changed")
		}
		a.rewindFailed(err)
		return err
	}
	msg := "rewound to before turn " + strconv.Itoa(res.Turn)
	if res.Turn == 0 {
		msg = fmt.Sprintf("rewound to checkpoint @%d", res.Seq)
	}
	if res.Files != nil {
		n := len(res.Files.Restored())
		msg += fmt.Sprintf(": %d %s taken back", n, plural(n, "path", "paths"))
	}
	if res.Fork != nil {
		old := a.sess
		if m := old.Model(); m != nil {
			_ = res.Fork.SetModel(m) // a /model switch carries over
		}
		a.sess = res.Fork
		if err := old.Close(); err != nil {
			a.view.Notice(ui.NoticeWarn, "closing the session "+old.Header().ID+": "+err.Error())
		}
		msg += fmt.Sprintf(" · the conversation goes on in session %s; the previous one stays as it was (-resume %s)", res.Fork.Header().ID, old.Header().ID)
	}
	a.view.Notice(ui.NoticeInfo, msg)
	return nil
}

// ask asks a question between turns and returns the answer; ok is false
// at end of input or on Ctrl-C. The console answers questions while it
// follows a turn, so the question is asked as if in one.
func (a *app) ask(ctx context.Context, question string) (line string, ok bool) {
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		line, ok, err = a.console.Ask(c, question)
		ok = ok && err == nil
	}()
	a.console.WaitTurn(ctx, done, cancel)
	return line, ok
}

// showPlan shows what a rewind does (or would do) to the files: one line
// a path.
func (a *app) showPlan(res *agent.RewindResult) {
	if res.Files == nil {
		a.view.Notice(ui.NoticeInfo, "the files stay as they are; only the conversation goes back")
		return
	}
	if len(res.Files.Changes) == 0 {
		a.view.Notice(ui.NoticeInfo, "no file changed since the checkpoint")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the rewind to %s:", targetText(res))
	for _, c := range res.Files.Changes {
		b.WriteString("\n  " + changeLine(c))
	}
	a.view.Notice(ui.NoticeInfo, b.String())
}

func targetText(res *agent.RewindResult) string {
	if res.Turn > 0 {
		return "before turn " + strconv.Itoa(res.Turn)
	}
	return fmt.Sprintf("checkpoint @%d", res.Seq)
}

// changeLine is one path of a plan: what the rewind does to it, the line
// counts of the change it undoes, and why it is left alone or a conflict.
func changeLine(c checkpoint.Change) string {
	do := map[checkpoint.Op]string{
		checkpoint.OpModified: "restore ",
		checkpoint.OpCreated:  "delete  ",
		checkpoint.OpDeleted:  "recreate",
	}[c.Op]
	if do == "" {
		do = string(c.Op)
	}
	s := do + "  " + shownPath(c.Path)
	switch {
	case c.Binary:
		s += "  (binary or large)"
	case c.Added > 0 || c.Removed > 0:
		s += fmt.Sprintf("  +%d -%d", c.Added, c.Removed) // since the checkpoint
	}
	if c.Conflict {
		s += "  ! changed outside the agent"
	}
	if c.Skip != "" {
		s += "  (left alone: " + oneLine(c.Skip, 200) + ")"
	}
	return s
}

// conflictsOf returns the conflicts of a dry run.
func conflictsOf(res *agent.RewindResult) []checkpoint.Change {
	if res == nil || res.Files == nil {
		return nil
	}
	return res.Files.Conflicts()
}

// conflictText says which files were changed outside the agent.
func conflictText(cs []checkpoint.Change) string {
	paths := make([]string, 0, len(cs))
	for _, c := range cs {
		paths = append(paths, shownPath(c.Path))
	}
	what := "a file was"
	if len(cs) != 1 {
		what = strconv.Itoa(len(cs)) + " files were"
	}
	return fmt.Sprintf("%s changed outside the agent since the checkpoint (%s)", what, strings.Join(paths, ", "))
}

// rewindFailed shows why a rewind was not possible, and what to do.
func (a *app) rewindFailed(err error) {
	switch {
	case errors.Is(err, harness.CodeNotFound):
		a.view.Notice(ui.NoticeError, "nothing to rewind to: "+ui.ErrorText(err)+" (checkpoints are recorded from the first turn run with them on)")
	case errors.Is(err, harness.CodeConflict):
		a.view.Notice(ui.NoticeError, "rewind refused: "+ui.ErrorText(err))
	default:
		a.view.Notice(ui.NoticeError, "rewind: "+ui.ErrorText(err))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// shownPath is a path as a line shows it: quoted when it holds
// characters that are not printable (a newline, a terminal's escape).
func shownPath(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) || !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	return p
}
