package agent

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// RewindTarget names the point Session.Rewind goes back to: the start of
// a turn, or a checkpoint event of the log.
type RewindTarget struct {
	// Turn is the 1-based turn whose start the rewind goes back to;
	// LastTurn is the last turn (a rewind to it is an undo).
	Turn int
	// Seq, when not zero, names a checkpoint event by its sequence
	// number instead (a point within a turn: before a tool call).
	Seq int64
}

// LastTurn as RewindTarget.Turn names the session's last turn.
const LastTurn = -1

// ParseRewindTarget reads a target as a command line writes it: a turn
// number ("3"), "last" (LastTurn), or "@" and the sequence number of a
// checkpoint event ("@42").
func ParseRewindTarget(s string) (RewindTarget, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "last":
		return RewindTarget{Turn: LastTurn}, nil
	case strings.HasPrefix(s, "@"):
		n, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil || n <= 0 {
			break
		}
		return RewindTarget{Seq: n}, nil
	default:
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			break
		}
		return RewindTarget{Turn: n}, nil
	}
	return RewindTarget{}, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf(
		"agent: %q names no rewind point: give a turn number (1 is the first), \"last\", or @ and a checkpoint's sequence number", s)}
}

// RewindScope says what a rewind takes back.
type RewindScope int

// Rewind scopes.
const (
	// RewindAll takes back the files and the conversation (the zero
	// value).
	RewindAll RewindScope = iota
	// RewindFiles takes back the files only: the conversation goes on,
	// told which files changed.
	RewindFiles
	// RewindConversation takes back the conversation only: it goes on
	// in a fork, the files stay as they are.
	RewindConversation
)

// RewindOptions configure Session.Rewind. The zero value rewinds the
// files and the conversation and refuses to overwrite work done outside
// the agent.
type RewindOptions struct {
	// DryRun computes and returns what the rewind would do, and does
	// nothing: no file is changed, nothing is logged, no fork is made.
	DryRun bool
	// Scope says what to take back.
	Scope RewindScope
	// Everything restores the files changed outside the agent only
	// too (by the user, between turns): each is then a conflict. By
	// default a rewind undoes what the agent's turns changed and leaves
	// the rest as it is.
	Everything bool
	// Force overwrites conflicting files, those changed outside the
	// agent since the checkpoint, after keeping their current content in
	// a checkpoint; a conflicting file too large to keep is still left
	// alone.
	Force bool
	// ForkID names the fork the conversation goes on in; empty makes a
	// new id.
	ForkID string
}

// RewindResult says what a rewind did, or would do.
type RewindResult struct {
	// Seq is the sequence number of the checkpoint event gone back to
	// (the fork point of the conversation), Checkpoint its payload; for
	// a conversation-only rewind of a session without checkpoints, Seq
	// is the last event before the turn and Checkpoint is nil.
	Seq        int64
	Checkpoint *session.Checkpoint
	// Turn is the turn whose start the rewind went back to; 0 for a
	// checkpoint within a turn.
	Turn int
	// Files is what the rewind does to the files: every path changed,
	// created or deleted since the checkpoint, with line counts,
	// conflicts and the paths it leaves alone (Change.Skip). Nil when
	// the files are not rewound.
	Files *checkpoint.Plan
	// Fork is the session the conversation goes on in: open, its
	// history ending at the checkpoint. The original session stays as
	// it is, a branch, and open: close it when done with it. Nil for a
	// dry run and when the conversation is not rewound.
	Fork *Session
}

// Rewind takes the workspace files, the conversation, or both back to
// how they were at a checkpoint: before turn to.Turn, or at the
// checkpoint event to.Seq. No model is called.
//
// The files come back from the checkpoint's contents: what was
// modified, deleted or created since is restored, recreated or deleted,
// whatever tool (or program) did it; ignored paths (.gitignore, .git,
// what the permission rules deny reading) are never touched. A file
// changed outside the agent since the checkpoint (see
// checkpoint.Workspace.OutsideChanges: changed while no turn ran, by the
// user or another program) is a conflict: the rewind is refused with an
// error matching harness.CodeConflict, and nothing changes, unless
// opts.Force is set. Before it changes any file, a rewind records the
// files as they are (a rewind_start checkpoint, which a later rewind can
// go back to), and after, as it left them (rewind_end). Files it
// restored count as changed for the read-before-edit ledger: the model
// must read them again before editing them.
//
// The conversation is never rewritten: it goes on in a fork of the
// session at the checkpoint (Store.Fork), returned open in
// RewindResult.Fork; the session Rewind was called on stays as it was.
// A files-only rewind instead tells the model, in the same session,
// which files changed.
//
// A dry run (opts.DryRun) returns the same result and changes nothing:
// the plan it returns is the one the rewind then carries out, unless
// the files change in between. Rewind fails with harness.CodeBusy while
// a turn runs, and with harness.CodeNotFound when the target names no
// checkpoint (checkpoints were off, or the turn does not exist).
func (s *Session) Rewind(ctx context.Context, to RewindTarget, opts RewindOptions) (res *RewindResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, internalError(s.logger, "rewind", p)
		}
	}()
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, errClosed()
	case s.running:
		s.mu.Unlock()
		return nil, errBusy()
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()

	tr, err := s.loop.cfg.store.Load(ctx, s.Header().ID)
	if err != nil {
		return nil, fmt.Errorf("agent: rewind: reading the log: %w", err)
	}
	res, idx, err := resolveRewind(tr.Events, to, opts.Scope)
	if err != nil {
		return nil, err
	}
	if opts.Scope != RewindConversation {
		if err := s.rewindFiles(ctx, tr.Events, idx, res, opts); err != nil {
			return res, err
		}
	}
	if opts.DryRun || opts.Scope == RewindFiles {
		return res, nil
	}
	fork, err := s.fork(ctx, res, opts)
	if err != nil {
		return res, err
	}
	res.Fork = fork
	return res, nil
}

// resolveRewind finds the checkpoint a target names: its result and its
// index in events (-1 for a conversation-only rewind without one).
func resolveRewind(events []session.Event, to RewindTarget, scope RewindScope) (*RewindResult, int, error) {
	notFound := func(format string, args ...any) (*RewindResult, int, error) {
		return nil, 0, &harness.Error{Code: harness.CodeNotFound, Message: "agent: rewind: " + fmt.Sprintf(format, args...)}
	}
	if to.Seq != 0 {
		for i, e := range events {
			if e.Seq != to.Seq {
				continue
			}
			cp, ok := e.Data.(*session.Checkpoint)
			if !ok || cp.Manifest == "" {
				return notFound("event %d is a %s event, not a checkpoint", to.Seq, e.Type())
			}
			res := &RewindResult{Seq: e.Seq, Checkpoint: cp}
			if cp.Kind == session.CheckpointTurnStart && nextIsTurn(events, i) {
				res.Turn = cp.Turn + 1
			}
			return res, i, nil
		}
		return notFound("the session has no event %d", to.Seq)
	}
	var starts []int // the index of each turn's user message
	for i, e := range events {
		if _, ok := e.Data.(*session.UserMessage); ok {
			starts = append(starts, i)
		}
	}
	n := to.Turn
	if n == LastTurn {
		n = len(starts)
	}
	if n < 1 || n > len(starts) {
		if len(starts) == 0 {
			return notFound("the session has no turn yet")
		}
		return notFound("no turn %d: the session has turns 1 to %d", to.Turn, len(starts))
	}
	user := starts[n-1]
	floor := -1
	if n > 1 {
		floor = starts[n-2]
	}
	for i := user - 1; i > floor; i-- {
		if cp, ok := events[i].Data.(*session.Checkpoint); ok && cp.Manifest != "" {
			return &RewindResult{Seq: events[i].Seq, Checkpoint: cp, Turn: n}, i, nil
		}
	}
	if scope == RewindConversation {
		// No checkpoint: the conversation alone goes back to the last
		// event before the turn's first.
		i := user - 1
		if i >= 0 {
			if _, ok := events[i].Data.(*session.SystemPrompt); ok {
				i--
			}
		}
		if i < 0 {
			return notFound("nothing comes before turn %d to fork from; start a new session instead", n)
		}
		return &RewindResult{Seq: events[i].Seq, Turn: n}, -1, nil
	}
	return notFound("no checkpoint was recorded before turn %d (checkpoints were off: agent.WithCheckpoints)", n)
}

// nextIsTurn reports whether the next event after events[i] that is not
// a checkpoint starts a turn.
func nextIsTurn(events []session.Event, i int) bool {
	for _, e := range events[i+1:] {
		switch e.Data.(type) {
		case *session.Checkpoint, *session.SystemPrompt:
			continue
		case *session.UserMessage:
			return true
		}
		return false
	}
	return false
}

// rewindFiles plans the rewind of the files to res's checkpoint (events[idx])
// and, unless it is a dry run, carries it out.
func (s *Session) rewindFiles(ctx context.Context, events []session.Event, idx int, res *RewindResult, opts RewindOptions) error {
	r := s.recorder()
	if r == nil {
		return &harness.Error{Code: harness.CodeInvalidOption, Message: "agent: rewind: checkpoints are off (agent.WithCheckpoints), so the files cannot be rewound; rewind the conversation alone"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ws, err := s.workspace(ctx, r)
	if err != nil {
		return err
	}
	if got, want := res.Checkpoint.Dir, ws.Dir(); pathOS(got) != want {
		return &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("agent: rewind: the checkpoint recorded %s, but the session's workspace is %s", got, want)}
	}
	target, err := ws.Load(ctx, res.Checkpoint.Manifest)
	if err != nil {
		return fmt.Errorf("agent: rewind: reading the checkpoint: %w", err)
	}
	var now *checkpoint.Snapshot
	if opts.DryRun {
		now, err = ws.Scan(ctx)
	} else {
		now, err = ws.Take(ctx) // keeps the files as they are, before any change
	}
	if err != nil {
		return fmt.Errorf("agent: rewind: reading the workspace: %w", err)
	}
	who, err := ws.Attribute(ctx, checkpoint.Points(events[idx:]), now.Tree)
	if err != nil {
		return fmt.Errorf("agent: rewind: reading the checkpoints since: %w", err)
	}
	plan, err := ws.Plan(ctx, target, now, checkpoint.PlanOptions{Changes: who, Everything: opts.Everything, Force: opts.Force})
	if err != nil {
		return err
	}
	res.Files = plan
	if opts.DryRun {
		return nil
	}
	if err := plan.Check(opts.Force); err != nil {
		return err
	}
	start := &session.Checkpoint{Kind: session.CheckpointRewindStart, Target: res.Seq}
	fillCheckpoint(start, ws, now)
	start.Turn = s.turns()
	if _, err := s.appendSeq(ctx, start); err != nil {
		return fmt.Errorf("agent: rewind: logging the files as they were: %w", err)
	}
	done, aerr := ws.Apply(ctx, plan, opts.Force)
	if done != nil {
		res.Files = done
		s.forget(r, done.Restored())
	}
	// Whatever happened, record how the files were left.
	end := &session.Checkpoint{Kind: session.CheckpointRewindEnd, Target: res.Seq}
	if _, _, err := s.takeCheckpoint(context.WithoutCancel(ctx), r, end); err != nil {
		s.logger.Warn("agent: recording the files after a rewind failed", "error", err)
	}
	if aerr != nil {
		return fmt.Errorf("agent: rewind: %w", aerr)
	}
	if opts.Scope == RewindFiles && len(done.Restored()) > 0 {
		if err := s.append(ctx, &session.Reminded{Reminder: harness.Reminder{Source: "rewind", Text: rewindNotice(res, done)}}); err != nil {
			return fmt.Errorf("agent: rewind: telling the model: %w", err)
		}
	}
	return nil
}

// forget makes the read-before-edit ledger forget the paths a rewind
// changed: the model must read them again before editing them.
func (s *Session) forget(r *recorder, rel []string) {
	l := (&tools.Env{State: s.state}).Ledger()
	if l == nil {
		return
	}
	for _, p := range rel {
		l.Observe(path.Join(r.ns, p), "")
	}
}

// rewindNotice tells the model of a files-only rewind.
func rewindNotice(res *RewindResult, done *checkpoint.Plan) string {
	var b strings.Builder
	if res.Turn > 0 {
		fmt.Fprintf(&b, "The user rewound the workspace files to how they were before turn %d; the conversation was not rewound. ", res.Turn)
	} else {
		fmt.Fprintf(&b, "The user rewound the workspace files to the checkpoint at event %d; the conversation was not rewound. ", res.Seq)
	}
	b.WriteString("What you changed since then is undone; read a file again before editing it. Changed:")
	n := 0
	for _, c := range done.Changes {
		if c.Skip != "" {
			continue
		}
		if n == 50 {
			fmt.Fprintf(&b, "\n- and %d more", len(done.Restored())-n)
			break
		}
		verb := map[checkpoint.Op]string{checkpoint.OpModified: "restored", checkpoint.OpCreated: "deleted", checkpoint.OpDeleted: "recreated"}[c.Op]
		fmt.Fprintf(&b, "\n- %s (%s)", textcut.Prefix(c.Path, 300), verb)
		n++
	}
	return b.String()
}

// fork continues the conversation in a fork of the session at res.Seq,
// opened, and records there how the files are.
func (s *Session) fork(ctx context.Context, res *RewindResult, opts RewindOptions) (*Session, error) {
	h, err := s.loop.cfg.store.Fork(ctx, s.Header().ID, session.ForkOptions{ID: opts.ForkID, At: res.Seq})
	if err != nil {
		return nil, fmt.Errorf("agent: rewind: forking the conversation: %w", err)
	}
	f, err := s.loop.ResumeSession(ctx, h.ID)
	if err != nil {
		return nil, fmt.Errorf("agent: rewind: opening the fork %s: %w", h.ID, err)
	}
	if res.Files != nil {
		if r := f.recorder(); r != nil {
			r.mu.Lock()
			_, _, err := f.takeCheckpoint(ctx, r, &session.Checkpoint{Kind: session.CheckpointRewindEnd, Target: res.Seq})
			r.mu.Unlock()
			if err != nil {
				f.logger.Warn("agent: recording the files in the fork failed", "error", err)
			}
		}
	}
	return f, nil
}

// pathOS is a checkpoint's directory as the OS spells it.
func pathOS(dir string) string { return filepath.Clean(filepath.FromSlash(dir)) }

// RewindPoint is a turn a rewind can go back to, for a host that offers a
// choice (Session.RewindPoints).
type RewindPoint struct {
	// Turn is the turn's number, 1-based.
	Turn int
	// Seq is the sequence number of the checkpoint before it; 0 when
	// none was recorded (only the conversation can go back then).
	Seq int64
	// Time is when the turn started.
	Time time.Time
	// Prompt is the start of the turn's user message.
	Prompt string
	// Added, Modified and Deleted count the paths the turn's calls
	// changed, by its checkpoints; Paths names the first of them.
	Added, Modified, Deleted int
	Paths                    []string
}

// RewindPoints lists the session's turns, oldest first, with the
// checkpoint before each and what each changed.
func (s *Session) RewindPoints(ctx context.Context) ([]RewindPoint, error) {
	tr, err := s.loop.cfg.store.Load(ctx, s.Header().ID)
	if err != nil {
		return nil, err
	}
	var out []RewindPoint
	var pending *session.Checkpoint // the last checkpoint before the next turn
	var pendingSeq int64
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.Checkpoint:
			if p.Manifest == "" {
				continue
			}
			if len(out) > 0 && (p.Kind == session.CheckpointBeforeCall || p.Kind == session.CheckpointTurnEnd) {
				last := &out[len(out)-1]
				last.Added += p.Added
				last.Modified += p.Modified
				last.Deleted += p.Deleted
				for _, q := range p.Paths {
					if len(last.Paths) < 32 && !slices.Contains(last.Paths, q) {
						last.Paths = append(last.Paths, q)
					}
				}
			}
			pending, pendingSeq = p, e.Seq
		case *session.UserMessage:
			rp := RewindPoint{Turn: len(out) + 1, Time: e.Time}
			if pending != nil {
				rp.Seq = pendingSeq
			}
			for _, c := range p.Content {
				if c.Text != "" {
					first, _, _ := strings.Cut(strings.TrimSpace(c.Text), "\n")
					rp.Prompt = textcut.Prefix(first, 200)
					break
				}
			}
			out = append(out, rp)
			pending = nil
		}
	}
	return out, nil
}
