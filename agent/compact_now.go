package agent

import (
	"context"
	"iter"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// Compact summarizes the older part of the session's history now, as
// the context policy does when the window fills, keeping the recent part
// verbatim (ContextPolicy.KeepRecent of the window; a quarter of the
// history when the window is unknown). It runs as a turn without a
// prompt: it yields ModelUsage for the summarizing call, ContextCompacted
// when the history was compacted (nothing when there was too little to
// compact or the summary would not be smaller), and a TurnEnd, whose
// error is set when the session is busy, closed, or waits for approval.
func (s *Session) Compact(ctx context.Context) iter.Seq2[Event, error] {
	if len(s.Pending()) > 0 {
		return func(yield func(Event, error) bool) {
			err := &harness.Error{Code: harness.CodeBusy, Message: "agent: the session waits for approval; resolve the paused turn before compacting"}
			yield(&TurnEnd{Reason: session.ReasonError, Err: err}, err)
		}
	}
	return s.runTurn(ctx, func(t *turn) {
		req := t.request()
		window := int64(t.model.Info().ContextWindow)
		keep := int64(t.l.cfg.context.withDefaults().KeepRecent * float64(window))
		if window <= 0 {
			keep = t.s.context.estimate(req) / 4
		}
		t.compactAndPrune(0, req, keep, window)
		t.finish(session.ReasonCompleted, nil)
	})
}
