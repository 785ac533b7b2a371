package agent

import "github.com/go-harness/harness/tools"

// State returns the per-session state, for the tests.
func (s *Session) State() *tools.State { return s.state }

// Abandoned returns the abandoned calls still running, for the tests.
func (s *Session) Abandoned() []abandonedCall { return s.abandonedCalls() }

// KindOf names the type of ev as MarshalEvent writes it in "type"; "" for
// nil. For the tests.
func KindOf(ev Event) string { return kindOf(ev) }

// OutputAs decodes the structured answer a TurnEnd carries, for the tests.
func OutputAs[T any](end *TurnEnd) (T, error) { return outputAs[T](end) }
