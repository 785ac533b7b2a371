package agent

import (
	"context"
	"math/rand/v2"
	"time"
)

// delay returns how long to wait before retry number attempt (1-based)
// after err: exponential from BaseDelay with jitter in [d/2, d], at least
// the provider's Retry-After hint, never more than MaxDelay.
func (p RetryPolicy) delay(attempt int, err *ModelError) time.Duration {
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
	if err != nil && err.RetryAfter > d {
		d = err.RetryAfter
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d
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
