package agent

import (
	"context"
	"fmt"
	"iter"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// interruption is what a resumed session knows of its last turn when
// that turn was cut off (a crash, a killed worker): the steps it made.
type interruption struct {
	steps int
}

// Continue goes on with the session's last turn when it was interrupted:
// the turn a crash cut off, which ResumeSession logged as interrupted
// (its calls without a result got theirs: not run, or outcome unknown).
// The model is called next with what the log holds, as if the turn had
// not stopped, and the steps go on from the interrupted turn's count; it
// yields the turn's events as RunContent does. A host that runs turns on
// several machines (a durable workflow engine, say) uses it to finish a
// turn whose machine died. When the last turn was not interrupted, or a
// turn ran since the session was resumed, the only event is a TurnEnd
// with an error matching CodeNothingPending, and nothing is logged.
//
// The continuation's TurnEnd counts the steps of the whole turn but the
// usage and cost of the continuation only; a per-turn budget counts the
// continuation's spending.
func (s *Session) Continue(ctx context.Context) iter.Seq2[Event, error] {
	return s.runTurn(ctx, func(t *turn) {
		t.s.mu.Lock()
		in := t.s.interrupted
		t.s.interrupted = nil
		t.s.mu.Unlock()
		if in == nil {
			err := &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf("agent: the last turn of session %s was not interrupted: there is nothing to continue", t.s.Header().ID)}
			t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
			return
		}
		t.steps = in.steps
		t.jobNotices(in.steps)
		t.loop()
	})
}

// Interrupted reports whether the session's last turn was interrupted
// and can go on with Continue.
func (s *Session) Interrupted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interrupted != nil
}

// Turns returns how many turns the session's log holds: its user
// messages, those steered into a running turn aside. The next turn is
// number Turns()+1.
func (s *Session) Turns() int { return s.turns() }

// lastTurnState reads the log's last turn: the highest step it made,
// the reason of its last end (empty when it has none), and whether events
// of a step follow that end (a continuation that was cut off).
func lastTurnState(events []session.Event) (steps int, reason string, after bool, usage harness.Usage) {
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			if !p.Steer {
				steps, reason, after, usage = 0, "", false, harness.Usage{}
			}
		case *session.ModelRequest:
			steps = max(steps, p.Step)
			after = reason != ""
		case *session.AssistantMessage:
			steps = max(steps, p.Step)
			after = reason != ""
			if after && p.Usage != nil {
				usage.Add(*p.Usage)
			}
		case *session.ToolStarted, *session.ToolFinished, *session.PermissionDecided:
			after = reason != ""
		case *session.TurnEnded:
			reason, after, usage = p.Reason, false, harness.Usage{}
		}
	}
	return steps, reason, after, usage
}

// restoreInterrupted notes, after a resume, whether the last turn was
// interrupted. A continuation (Continue, or a resolved pause) that was
// itself cut off has events after its turn's last end and no end of its
// own: it is logged as interrupted here, as ResumeSession does for a turn.
func (s *Session) restoreInterrupted(ctx context.Context, events []session.Event) error {
	steps, reason, after, usage := lastTurnState(events)
	if after && reason == session.ReasonInterrupted {
		if err := s.append(ctx, &session.TurnEnded{Reason: session.ReasonInterrupted, Steps: steps, Usage: usage}); err != nil {
			return err
		}
		s.warnings = append(s.warnings, session.Warning{Message: fmt.Sprintf("the continuation of an interrupted turn stopped in step %d without an end; logged as interrupted", steps)})
		after = false
	}
	if reason == session.ReasonInterrupted && !after {
		s.mu.Lock()
		s.interrupted = &interruption{steps: steps}
		s.mu.Unlock()
	}
	return nil
}
