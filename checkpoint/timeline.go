package checkpoint

import (
	"context"
	"path/filepath"

	"github.com/go-harness/harness/session"
)

// Point is a checkpoint event of a session log.
type Point struct {
	// Seq is the event's sequence number.
	Seq int64
	// Checkpoint is its payload.
	Checkpoint *session.Checkpoint
}

// Points returns the checkpoint events of a log, in log order.
func Points(events []session.Event) []Point {
	var out []Point
	for _, e := range events {
		if c, ok := e.Data.(*session.Checkpoint); ok && c.Manifest != "" {
			out = append(out, Point{Seq: e.Seq, Checkpoint: c})
		}
	}
	return out
}

// outsideEnds reports whether the interval that ends at a checkpoint of
// this kind lies outside the agent's turns and rewinds.
func outsideEnds(kind string) bool {
	switch kind {
	case session.CheckpointBeforeCall, session.CheckpointTurnEnd, session.CheckpointRewindEnd:
		return false
	}
	return true // turn and rewind starts, and kinds this build does not know
}

// OutsideChanges returns the paths changed outside the agent since a
// checkpoint. points are the session's checkpoints from that one to the
// latest, in log order; now is the workspace as it is.
//
// A path changed outside the agent when its content (kind, permissions,
// bytes or link target) differs between two consecutive checkpoints of
// which the later starts a turn or a rewind (the change happened while no
// turn ran: the user's work, another program's, another session's), or
// between the latest checkpoint and now (a rewind runs between turns).
// A change between checkpoints within one turn is the agent's, even when
// someone else made it while the turn ran; a turn cut short by a crash
// has no end checkpoint, so its last changes count as outside, which
// errs on the side of asking. Checkpoints of another directory are left
// out.
func (w *Workspace) OutsideChanges(ctx context.Context, points []Point, now *Tree) (map[string]bool, error) {
	out := map[string]bool{}
	var prev *Tree
	prevDigest := ""
	for _, p := range points {
		if filepath.Clean(filepath.FromSlash(p.Checkpoint.Dir)) != w.dir {
			continue
		}
		if p.Checkpoint.Manifest == prevDigest {
			continue
		}
		t, err := w.objs.load(ctx, p.Checkpoint.Manifest)
		if err != nil {
			return nil, err
		}
		if prev != nil && outsideEnds(p.Checkpoint.Kind) {
			for _, path := range Changed(prev, t) {
				out[path] = true
			}
		}
		prev, prevDigest = t, p.Checkpoint.Manifest
	}
	if prev != nil {
		for _, path := range Changed(prev, now) {
			out[path] = true
		}
	}
	return out, nil
}
