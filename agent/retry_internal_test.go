package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{model.NewError(harness.CodeRateLimit, "", nil), true},
		{model.NewError(harness.CodeServer, "", nil), true},
		{model.NewError(harness.CodeTransport, "", nil), true},
		{model.NewError(harness.CodeEmptyResponse, "", nil), true},
		{fmt.Errorf("x: %w", model.NewError(harness.CodeTruncatedStream, "", nil)), true},
		{model.NewError(harness.CodeAuth, "", nil), false},
		{model.NewError(harness.CodeContextWindowExceeded, "", nil), false},
		{model.NewError(harness.CodeAborted, "", context.Canceled), false},
		{context.DeadlineExceeded, false},
		{errors.New("plain"), false},
		{nil, false},
	} {
		assert.Equal(t, tc.want, retryable(tc.err), "%v", tc.err)
	}
}
