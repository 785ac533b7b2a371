package agent

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// Delivery says what became of a message sent with Session.Steer.
type Delivery string

const (
	// Steered: a turn is running and will read the message at its next
	// safe point, before its next model call.
	Steered Delivery = "steered"
	// Queued: no turn was running (or it was ending), so the message
	// waits as the next turn: run it with Session.RunQueued.
	Queued Delivery = "queued"
)

// Steer sends a user message into the running turn, safe from any
// goroutine: the turn reads it at the next safe point, after the
// current step's tool results and before its next model call (a turn
// whose model just answered without calls takes one more step for it).
// The message is logged as a user event of that turn with the step it
// landed in (session.UserMessage Steer and Step), so a resumed session
// and a strict replay see it where the live turn did; the host sees a
// SteerDelivered event. When no turn is running, or the turn is ending,
// the message is queued as the next turn instead (see Queue), and the
// result says which. A message steered into a turn that then stops
// before reading it (cancelled, paused, out of steps) is queued too,
// and that turn's SteerDelivered event says so.
func (s *Session) Steer(ctx context.Context, text string) (Delivery, error) {
	if strings.TrimSpace(text) == "" {
		return "", &harness.Error{Code: harness.CodeInvalidArguments, Message: "agent: Steer: the message is empty"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed()
	}
	if s.accepting {
		s.steers = append(s.steers, text)
		return Steered, nil
	}
	s.queue = append(s.queue, text)
	return Queued, nil
}

// Queue adds a user message to run as a turn after the current one,
// safe from any goroutine. Queued messages run in order, each as its own
// turn, when the host calls RunQueued; TurnEnd.Queued says how many
// wait. The queue lives in memory: a message is logged when its turn
// runs.
func (s *Session) Queue(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: "agent: Queue: the message is empty"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed()
	}
	s.queue = append(s.queue, text)
	return nil
}

// Queued returns the messages waiting to run as turns, oldest first.
func (s *Session) Queued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queue...)
}

// RunQueued runs the oldest queued message as a turn, as Run does.
// When nothing is queued the only event is a TurnEnd with an error
// matching CodeNothingPending.
func (s *Session) RunQueued(ctx context.Context) iter.Seq2[Event, error] {
	return s.runTurn(ctx, func(t *turn) {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			err := &harness.Error{Code: CodeNothingPending, Message: "agent: RunQueued: no message is queued"}
			t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
			return
		}
		text := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		t.run([]harness.Block{harness.TextBlock(text)})
	})
}

// takeSteers logs the messages steered into the turn since its last
// safe point, for the model call of step, and yields SteerDelivered for
// each. With last set (the model answered without calls and the turn
// would end), finding none stops the turn taking more in the same step,
// so a later Steer is queued, never lost. It reports whether it
// delivered any; false with an error means logging failed.
func (t *turn) takeSteers(step int, last bool) (bool, error) {
	t.s.mu.Lock()
	texts := t.s.steers
	t.s.steers = nil
	if len(texts) == 0 && last {
		t.s.accepting = false
	}
	t.s.mu.Unlock()
	if len(texts) == 0 {
		return false, nil
	}
	msgs := make([]session.Payload, len(texts))
	for i, text := range texts {
		msgs[i] = &session.UserMessage{Content: []harness.Block{harness.TextBlock(text)}, Steer: true, Step: step}
	}
	if err := t.s.append(t.ctx, msgs...); err != nil {
		return false, fmt.Errorf("agent: logging a steered message: %w", err)
	}
	for _, text := range texts {
		t.emit(&SteerDelivered{Step: step, Text: text})
	}
	return true, nil
}

// stopSteering ends the turn's taking of steered messages as it ends:
// the ones it did not read wait as queued turns, before those queued
// already, and the host is told. It returns how many messages are
// queued.
func (t *turn) stopSteering() int {
	t.s.mu.Lock()
	t.s.accepting = false
	late := t.s.steers
	t.s.steers = nil
	if len(late) > 0 {
		t.s.queue = append(late, t.s.queue...)
	}
	n := len(t.s.queue)
	t.s.mu.Unlock()
	for _, text := range late {
		t.emit(&SteerDelivered{Step: t.steps, Text: text, Queued: true})
	}
	return n
}
