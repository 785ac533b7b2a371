package agent

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sync"

	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// WithCheckpoints records the session's workspace files, so that
// Session.Rewind can bring them back: before each turn, before each
// batch of tool calls that may change files (tools.Spec.SideEffects:
// bash, persistent shells, write, edit, MCP tools not marked read-only),
// and when a turn that ran such calls ends. Changes are found by
// comparing trees, not from what tools report, so what bash, a shell or
// an MCP server changed is caught like an edit. Each checkpoint is a
// session.Checkpoint event in the log; the contents live in cfg.Store,
// by default the loop's attachment store (Stores.Attachments), so they
// travel with the sessions. New fails when neither is set or cfg is out
// of range.
//
// The workspace is the session's working directory, on disk through
// the file system's fs.LocalPather when it has one. Paths the permission
// rules deny reading are left out, as are those .gitignore ignores and
// .git. A checkpoint of an unchanged tree costs one lstat per file (a
// stat cache like git's index, primed from the log when a session is
// resumed); the first checkpoint of a session hashes and stores every
// file. A checkpoint that fails is logged (the logger) and the turn goes
// on; the rewind to it is then not possible. Sub-agents take none of
// their own: their parent's checkpoints around the task call hold their
// changes.
func WithCheckpoints(cfg checkpoint.Config) Option {
	return func(c *config) { c.checkpoints = &cfg }
}

// checkpointConfig returns the checkpoint configuration in force, or nil
// when checkpoints are off (or for a sub-agent's loop).
func (l *Loop) checkpointConfig() *checkpoint.Config {
	if l.cfg.checkpoints == nil || l.cfg.depth > 0 {
		return nil
	}
	cfg := *l.cfg.checkpoints
	if cfg.Store == nil && l.cfg.attachments != nil {
		cfg.Store = l.cfg.attachments
	}
	return &cfg
}

// validateCheckpoints checks WithCheckpoints' configuration for New.
func (c *config) validateCheckpoints() error {
	if c.checkpoints == nil {
		return nil
	}
	cfg := *c.checkpoints
	if cfg.Store == nil {
		if c.attachments == nil {
			return optionError("WithCheckpoints: no store for the checkpoints' contents; set checkpoint.Config.Store or Stores.Attachments")
		}
		cfg.Store = c.attachments
	}
	if err := cfg.Validate(); err != nil {
		return optionError("WithCheckpoints: %v", err)
	}
	return nil
}

// recorder is a session's checkpoint state, kept in its tools.State.
type recorder struct {
	mu     sync.Mutex
	ws     *checkpoint.Workspace
	ns     string // the workspace directory in the file system's namespace
	primed bool
	// dirty says calls that may change files ran since the last
	// checkpoint: the turn's end takes one.
	dirty bool
	// err is why the workspace could not be opened: reported once.
	err error
}

type recorderKey struct{}

// recorder returns the session's checkpoint state, or nil when
// checkpoints are off or the session is closing.
func (s *Session) recorder() *recorder {
	if s.loop.checkpointConfig() == nil {
		return nil
	}
	r, err := tools.LoadState(s.state, recorderKey{}, func() *recorder { return &recorder{} })
	if err != nil {
		return nil
	}
	return r
}

// workspace returns the session's checkpoint workspace, opening it on
// first use and priming its stat cache with the log's latest checkpoint
// of the same directory. r.mu must be held.
func (s *Session) workspace(ctx context.Context, r *recorder) (*checkpoint.Workspace, error) {
	if r.ws != nil {
		return r.ws, nil
	}
	if r.err != nil {
		return nil, r.err
	}
	ws, err := s.openWorkspace(ctx, r)
	if err != nil {
		r.err = err
		s.logger.Warn("agent: the session's workspace cannot be checkpointed; no checkpoint is taken in this session", "error", err)
	}
	return ws, err
}

// openWorkspace opens the session's checkpoint workspace. r.mu must be
// held.
func (s *Session) openWorkspace(ctx context.Context, r *recorder) (*checkpoint.Workspace, error) {
	cfg := *s.loop.checkpointConfig()
	ns := path.Clean(s.log.Header().Cwd)
	dir := filepath.FromSlash(ns)
	if lp, ok := s.loop.cfg.fsys.(fs.LocalPather); ok {
		d, err := lp.LocalPath(ns)
		if err != nil {
			return nil, fmt.Errorf("agent: the workspace %s has no directory on disk: %w", ns, err)
		}
		dir = d
	}
	if pol := s.policy(); pol != nil {
		if paths := pol.Paths(ns); !paths.Empty() {
			// The host's own Exclude still applies: a path either leaves
			// out is left out.
			hostExclude := cfg.Exclude
			cfg.Exclude = func(rel string, isDir bool) bool {
				if hostExclude != nil && hostExclude(rel, isDir) {
					return true
				}
				return paths.CheckPath(context.Background(), path.Join(ns, rel), fs.AccessRead, fs.FileID{}) != nil
			}
		}
	}
	ws, err := checkpoint.Open(dir, cfg)
	if err != nil {
		return nil, err
	}
	r.ws, r.ns = ws, ns
	if !r.primed {
		r.primed = true
		if tr, err := s.loop.cfg.store.Load(ctx, s.Header().ID); err == nil {
			pts := checkpoint.Points(tr.Events)
			for i := len(pts) - 1; i >= 0; i-- {
				if c := pts[i].Checkpoint; filepath.Clean(filepath.FromSlash(c.Dir)) == ws.Dir() {
					if err := ws.Prime(ctx, c.Manifest, c.Scanned); err != nil {
						s.logger.Warn("agent: the stat cache could not be primed from the log's last checkpoint; the next checkpoint hashes every file", "error", err)
					}
					break
				}
			}
		}
	}
	return ws, nil
}

// takeCheckpoint records a checkpoint of the given kind and logs it,
// returning the event's payload and sequence number.
func (s *Session) takeCheckpoint(ctx context.Context, r *recorder, cp *session.Checkpoint) (*checkpoint.Snapshot, int64, error) {
	ws, err := s.workspace(ctx, r)
	if err != nil {
		return nil, 0, err
	}
	take := ws.Take
	if cp.Kind == session.CheckpointTurnStart || cp.Kind == session.CheckpointBeforeCall {
		// Made durable at the turn's end, before the log is synced: the
		// log promises nothing of a turn before then.
		take = ws.Stage
	}
	snap, err := take(ctx)
	if err != nil {
		return nil, 0, err
	}
	fillCheckpoint(cp, ws, snap)
	cp.Turn = s.turns()
	seq, err := s.appendSeq(ctx, cp)
	if err != nil {
		return nil, 0, err
	}
	r.dirty = false
	return snap, seq, nil
}

// fillCheckpoint sets the fields of a checkpoint event from a snapshot.
func fillCheckpoint(cp *session.Checkpoint, ws *checkpoint.Workspace, snap *checkpoint.Snapshot) {
	files, bytes, omitted := snap.Tree.Totals()
	cp.Dir = filepath.ToSlash(ws.Dir())
	cp.Manifest = snap.Manifest
	cp.Scanned = snap.Scanned.UTC()
	cp.Files, cp.Bytes, cp.Omitted = files, bytes, omitted
	cp.Added, cp.Modified, cp.Deleted, cp.Paths = snap.Changes.Added, snap.Changes.Modified, snap.Changes.Deleted, snap.Changes.Paths
}

// appendSeq logs one payload and returns its sequence number.
func (s *Session) appendSeq(ctx context.Context, p session.Payload) (int64, error) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	events, err := s.log.Append(context.WithoutCancel(ctx), p)
	if err != nil {
		return 0, err
	}
	for _, e := range events {
		s.hist.Add(e)
	}
	return events[0].Seq, nil
}

// checkpoint is the turn's hook: it records a checkpoint of kind, unless
// checkpoints are off; a failure is logged and the turn goes on. A
// cancelled turn still records how the files were left.
func (t *turn) checkpoint(kind string) {
	r := t.s.recorder()
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if kind == session.CheckpointTurnEnd && !r.dirty {
		// Nothing ran that could change files since the last one; what
		// the turn staged is made durable before the log is synced.
		if r.ws != nil {
			if err := r.ws.Sync(context.WithoutCancel(t.ctx)); err != nil {
				t.s.logger.Warn("agent: syncing the turn's workspace checkpoints failed; a rewind to them may not survive a power loss", "error", err)
			}
		}
		return
	}
	t.record(r, &session.Checkpoint{Kind: kind})
}

// checkpointCalls is the dispatcher's hook: before a batch of calls of
// which one may change files, it records a checkpoint.
func (t *turn) checkpointCalls(step int, calls []*tools.Call) {
	var ids []string
	for _, c := range calls {
		if c.Spec.SideEffects {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	r := t.s.recorder()
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.record(r, &session.Checkpoint{Kind: session.CheckpointBeforeCall, Step: step, Calls: ids})
	r.dirty = true
}

// record takes a checkpoint for the turn. r.mu must be held.
func (t *turn) record(r *recorder, cp *session.Checkpoint) {
	if err := t.ctx.Err(); err != nil && cp.Kind != session.CheckpointTurnEnd {
		return
	}
	if _, _, err := t.s.takeCheckpoint(context.WithoutCancel(t.ctx), r, cp); err != nil && r.err == nil {
		t.s.logger.Warn("agent: a workspace checkpoint failed; a rewind to this point will not be possible", "kind", cp.Kind, "error", err)
	}
}
