package agent

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// delay returns how long to wait before retry number attempt (1-based):
// exponential from BaseDelay with jitter in [d/2, d], at least the
// provider's Retry-After hint (hint), never more than MaxDelay.
func (p RetryPolicy) delay(attempt int, hint time.Duration) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	if d > 0 {
		d = d/2 + rand.N(d/2+1)
	}
	if hint > d {
		d = hint
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d
}

// retryAfter returns the provider's hint for when to try again after
// err (a model.ProviderError in its chain), or 0.
func retryAfter(err error) time.Duration {
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// failureText is what the log says about a failed model call: the text
// of the model error in err's chain, or err's own.
func failureText(err error) string {
	var he *harness.Error
	if errors.As(err, &he) {
		return he.Error()
	}
	return err.Error()
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
