package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/examples/coder/internal/ui"
)

// undoFlags turn the workspace checkpoints off.
type undoFlags struct {
	noCheckpoints bool
}

func (u *undoFlags) register(fset *flag.FlagSet) {
	fset.BoolVar(&u.noCheckpoints, "no-checkpoints", false, "record no workspace checkpoints (then /undo and /rewind cannot bring files back)")
}

// checkpointOptions records the workspace before each turn and each
// batch of calls that may change files, for /undo and /rewind. The
// contents go in the attachment store beside the session logs.
func (a *app) checkpointOptions() []agent.Option {
	if a.o.undo.noCheckpoints {
		return nil
	}
	return []agent.Option{agent.WithCheckpoints(checkpoint.Config{})}
}

// undo is /undo: the last turn's file changes and conversation are
// taken back; the conversation goes on in a fork.
func (a *app) undo(ctx context.Context) {
	a.rewindTo(ctx, agent.RewindTarget{Turn: agent.LastTurn}, false)
}

// rewind is /rewind: without an argument it lists the turns to go back
// to; with one (a turn number, last, or @seq) it shows the dry run and,
// once confirmed, rewinds.
func (a *app) rewind(ctx context.Context, arg string) {
	if arg == "" {
		points, err := a.sess.RewindPoints(ctx)
		if err != nil {
			a.view.Notice(ui.NoticeError, "/rewind: "+err.Error())
			return
		}
		if len(points) == 0 {
			a.view.Notice(ui.NoticeInfo, "no turn to rewind to yet")
			return
		}
		var b strings.Builder
		b.WriteString("turns to rewind to (/rewind N goes back to before turn N):")
		for _, p := range points {
			fmt.Fprintf(&b, "\n  %d  %s  %q", p.Turn, p.Time.Local().Format("15:04:05"), p.Prompt)
			if n := p.Added + p.Modified + p.Deleted; n > 0 {
				fmt.Fprintf(&b, "  +%d ~%d -%d: %s", p.Added, p.Modified, p.Deleted, strings.Join(p.Paths, ", "))
			}
			if p.Seq == 0 {
				b.WriteString("  (no checkpoint: the conversation only)")
			}
		}
		a.view.Notice(ui.NoticeInfo, b.String())
		return
	}
	to, err := agent.ParseRewindTarget(arg)
	if err != nil {
		a.view.Notice(ui.NoticeError, "/rewind "+arg+": "+err.Error())
		return
	}
	a.rewindTo(ctx, to, true)
}

// rewindTo shows what a rewind to `to` does, asks when confirm is set,
// and carries it out.
func (a *app) rewindTo(ctx context.Context, to agent.RewindTarget, confirm bool) {
	dry, err := a.sess.Rewind(ctx, to, agent.RewindOptions{DryRun: true})
	if err != nil {
		a.view.Notice(ui.NoticeError, rewindError(err))
		return
	}
	a.view.Notice(ui.NoticeInfo, planText(dry))
	if dry.Files != nil && len(dry.Files.Conflicts()) > 0 {
		a.view.Notice(ui.NoticeWarn, "refused: files changed outside the agent since then would be overwritten; nothing was changed")
		return
	}
	if confirm {
		line, ok, err := a.console.Ask(ctx, "rewind? [y/N] › ")
		if err != nil || !ok || !strings.EqualFold(strings.TrimSpace(line), "y") {
			a.view.Notice(ui.NoticeInfo, "not rewound")
			return
		}
	}
	res, err := a.sess.Rewind(ctx, to, agent.RewindOptions{})
	if err != nil {
		a.view.Notice(ui.NoticeError, rewindError(err))
		return
	}
	if res.Fork != nil {
		old := a.sess
		a.sess = res.Fork
		if err := old.Close(); err != nil {
			a.view.Notice(ui.NoticeWarn, "closing the session "+old.Header().ID+": "+err.Error())
		}
		a.view.Notice(ui.NoticeInfo, fmt.Sprintf("rewound; the conversation goes on in %s (the previous one stays as %s)", res.Fork.Header().ID, old.Header().ID))
		return
	}
	a.view.Notice(ui.NoticeInfo, "rewound")
}

// planText says what a rewind does to the files.
func planText(r *agent.RewindResult) string {
	where := fmt.Sprintf("before turn %d", r.Turn)
	if r.Turn == 0 {
		where = fmt.Sprintf("checkpoint @%d", r.Seq)
	}
	if r.Files == nil || len(r.Files.Changes) == 0 {
		return "rewind to " + where + ": no file changes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rewind to %s: %s", where, ui.Plural(len(r.Files.Changes), "path", "paths"))
	for _, c := range r.Files.Changes {
		fmt.Fprintf(&b, "\n  %s %s", c.Op, c.Path)
		if !c.Binary && (c.Added > 0 || c.Removed > 0) {
			fmt.Fprintf(&b, "  +%d -%d", c.Added, c.Removed)
		}
		if c.Conflict {
			b.WriteString("  (changed outside the agent: conflict)")
		}
		if c.Skip != "" {
			b.WriteString("  (left alone: " + c.Skip + ")")
		}
	}
	return b.String()
}

func rewindError(err error) string {
	switch {
	case harness.CodeOf(err) == harness.CodeNotFound:
		return "nothing to rewind to: " + err.Error()
	case harness.CodeOf(err) == harness.CodeBusy:
		return "a turn is running; rewind when it ends"
	}
	return "rewind: " + err.Error()
}
