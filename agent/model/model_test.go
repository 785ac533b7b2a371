package model_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

func TestNewError(t *testing.T) {
	cause := errors.New("connection reset")
	for name, tc := range map[string]struct {
		err  *harness.Error
		want string
	}{
		"message":            {model.NewError(harness.CodeAuth, "bad key", nil), "model: auth: bad key"},
		"status":             {model.NewError(harness.CodeRateLimit, "slow down", &model.ProviderError{Status: 429}), "model: rate_limit (HTTP 429): slow down"},
		"status, no message": {model.NewError(harness.CodeServer, "", &model.ProviderError{Status: 503}), "model: server (HTTP 503)"},
		"cause text":         {model.NewError(harness.CodeTransport, "", cause), "model: transport: connection reset"},
		"provider cause":     {model.NewError(harness.CodeTransport, "", &model.ProviderError{Err: cause}), "model: transport: connection reset"},
		"nothing":            {model.NewError(harness.CodeEmptyResponse, "", nil), "model: empty_response"},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.err.Error()) })
	}

	err := fmt.Errorf("turn: %w", model.NewError(harness.CodeRateLimit, "slow down",
		&model.ProviderError{Status: 429, RetryAfter: 3 * time.Second, Err: cause}))
	assert.ErrorIs(t, err, harness.CodeRateLimit)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, harness.CodeRateLimit, harness.CodeOf(err))
	var pe *model.ProviderError
	if assert.ErrorAs(t, err, &pe) {
		assert.Equal(t, 429, pe.Status)
		assert.Equal(t, 3*time.Second, pe.RetryAfter)
	}
	assert.Equal(t, "HTTP 429: connection reset", pe.Error())
	assert.Equal(t, "the provider failed", (&model.ProviderError{}).Error())
}

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
		assert.Equal(t, tc.want, model.Retryable(tc.err), "%v", tc.err)
	}
}

func TestInfoImageInput(t *testing.T) {
	textOnly := model.Info{Name: "m"}
	assert.False(t, slices.Contains(textOnly.Input, harness.ModalityImage))
	vision := model.Info{Name: "v", Input: []harness.Modality{harness.ModalityImage}}
	assert.True(t, slices.Contains(vision.Input, harness.ModalityImage))
}
