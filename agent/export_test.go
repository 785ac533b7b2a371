package agent

import "github.com/go-harness/harness/tools"

// State returns the per-session state, for the tests.
func (s *Session) State() *tools.State { return s.state }

// Abandoned returns the abandoned calls still running, for the tests.
func (s *Session) Abandoned() []abandonedCall { return s.abandonedCalls() }
