package retryafter_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/internal/retryafter"
)

func TestRetryAfter(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	assert.Equal(t, 250*time.Millisecond, retryafter.Parse(h("Retry-After-Ms", "250", "Retry-After", "9")))
	assert.Equal(t, 1500*time.Millisecond, retryafter.Parse(h("Retry-After", "1.5")))
	assert.Equal(t, time.Duration(0), retryafter.Parse(h("Retry-After", "-3")))
	assert.Equal(t, time.Duration(0), retryafter.Parse(h("Retry-After", "soon")))
	assert.Equal(t, time.Duration(0), retryafter.Parse(nil))
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	d := retryafter.Parse(h("Retry-After", future))
	assert.Greater(t, d, 50*time.Minute)
	assert.LessOrEqual(t, d, time.Hour)
}
