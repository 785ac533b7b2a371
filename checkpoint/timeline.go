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

// Attribution says who changed which paths since a checkpoint.
type Attribution struct {
	// Agent holds the paths changed within the agent's turns and
	// rewinds.
	Agent map[string]bool
	// Outside holds the paths changed outside them: while no turn ran,
	// by the user, another program or another session.
	Outside map[string]bool
}

// Attribute says who changed which paths since a checkpoint. points are
// the session's checkpoints from that one to the latest, in log order;
// now is the workspace as it is.
//
// A change of a path's content (kind, permissions, bytes or link
// target) between two consecutive checkpoints is the agent's when the
// later one was taken within a turn or a rewind (before a call, at a
// turn's end, at a rewind's end), and outside the agent when the later
// one starts a turn or a rewind: it happened while no turn ran. A change
// since the latest checkpoint is outside the agent too (a rewind runs
// between turns). A change someone else made while a turn ran counts as
// the agent's; a turn cut short by a crash has no end checkpoint, so its
// last changes count as outside, which leaves them alone rather than
// undo what may be someone's work. Checkpoints of another directory are
// left out.
func (w *Workspace) Attribute(ctx context.Context, points []Point, now *Tree) (*Attribution, error) {
	a := &Attribution{Agent: map[string]bool{}, Outside: map[string]bool{}}
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
		if prev != nil {
			to := a.Agent
			if outsideEnds(p.Checkpoint.Kind) {
				to = a.Outside
			}
			for _, path := range Changed(prev, t) {
				to[path] = true
			}
		}
		prev, prevDigest = t, p.Checkpoint.Manifest
	}
	if prev != nil {
		for _, path := range Changed(prev, now) {
			a.Outside[path] = true
		}
	}
	return a, nil
}
