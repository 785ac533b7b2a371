package jobs

import (
	"context"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// stateKey is the tools.State key of a session's registry.
type stateKey struct{}

// closeGrace bounds how long closing a session's state waits for its
// live jobs to end.
const closeGrace = time.Minute

// FromState returns the registry of the session whose state st is,
// creating it with cfg the first time (cfg is ignored after that). Every
// tool that starts jobs takes its registry from here, so that one
// registry holds all of a session's jobs. It fails with
// harness.CodeClosed once the session has closed.
func FromState(st *tools.State, cfg Config) (*Registry, error) {
	if st == nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "Background jobs need session state, which this call does not have."}
	}
	return tools.LoadState(st, stateKey{}, func() *Registry { return New(cfg) })
}

// Close stops every live job, waiting up to a minute for them to end, so
// that a session's state closes its registry (see StopAll).
func (r *Registry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	return r.StopAll(ctx)
}
