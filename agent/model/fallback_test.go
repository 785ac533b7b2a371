package model_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/model/modeltest"
	"github.com/go-harness/harness/agent/replay"
)

// failure is a model failure as an adapter reports it: a code, and the
// HTTP status as its provider detail.
func failure(code harness.Code, status int, cause error) error {
	return model.NewError(code, "", &model.ProviderError{Status: status, Err: cause})
}

// failureClasses are the failures the issue names, with whether another
// model should answer the request instead.
func failureClasses() []struct {
	name      string
	err       error
	fallsBack bool
} {
	timeout := &harness.Error{Code: harness.CodeTimeout, Message: "no content for 3m"}
	return []struct {
		name      string
		err       error
		fallsBack bool
	}{
		{"408", failure(harness.CodeTransport, 408, errors.New("request timeout")), true},
		{"429", failure(harness.CodeRateLimit, 429, errors.New("slow down")), true},
		{"500", failure(harness.CodeServer, 500, errors.New("internal")), true},
		{"503", failure(harness.CodeServer, 503, errors.New("unavailable")), true},
		{"529 overloaded", failure(harness.CodeServer, 529, errors.New("Overloaded")), true},
		{"overloaded mid-stream", failure(harness.CodeServer, 0, errors.New("overloaded_error")), true},
		{"timeout", model.NewError(harness.CodeTransport, "stalled", timeout), true},
		{"connection refused", model.NewError(harness.CodeTransport, "", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
		{"connection reset", model.NewError(harness.CodeTransport, "", io.ErrUnexpectedEOF), true},
		{"empty answer", model.NewError(harness.CodeEmptyResponse, "", nil), true},
		{"400", failure(harness.CodeInvalidRequest, 400, errors.New("bad")), false},
		{"401", failure(harness.CodeAuth, 401, errors.New("key")), false},
		{"403", failure(harness.CodeAuth, 403, errors.New("forbidden")), false},
		{"404", failure(harness.CodeInvalidRequest, 404, errors.New("no such model")), false},
		{"413", failure(harness.CodeInvalidRequest, 413, errors.New("too large")), false},
		{"422", failure(harness.CodeInvalidRequest, 422, errors.New("unprocessable")), false},
		{"context overflow", failure(harness.CodeContextWindowExceeded, 400, errors.New("prompt is too long")), false},
		{"content filter", model.NewError(harness.CodeContentFilter, "", nil), false},
		{"cancelled", model.NewError(harness.CodeAborted, "", context.Canceled), false},
	}
}

func request() *model.Request {
	return &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("hi")}}}}
}

func drain(m model.Model) ([]model.Chunk, error) {
	var out []model.Chunk
	for c, err := range m.Stream(context.Background(), request()) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Called directly, a chain falls back at once on a failure of the
// model, and names the model that answered; a failure of the request
// ends the call.
func TestFallbackStreamedDirectly(t *testing.T) {
	for _, tc := range failureClasses() {
		t.Run(tc.name, func(t *testing.T) {
			primary := replay.NewScripted(replay.Response{Err: tc.err}).WithInfo(model.Info{Name: "primary"})
			backup := replay.NewScripted(replay.Response{Text: "from backup"}).WithInfo(model.Info{Name: "backup"})
			m := model.Fallback(primary, backup)
			chunks, err := drain(m)
			assert.Equal(t, tc.fallsBack, model.FallsBack(tc.err))
			if !tc.fallsBack {
				require.Error(t, err)
				assert.Same(t, tc.err, err, "the failure is yielded as it is")
				assert.Empty(t, backup.Requests(), "the fallback is not asked")
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, chunks)
			assert.Equal(t, model.Chunk{Type: model.ChunkModel, Text: "backup"}, chunks[0])
			assert.Equal(t, model.Chunk{Type: model.ChunkText, Text: "from backup"}, chunks[1])
			require.Len(t, backup.Requests(), 1)
			assert.Equal(t, primary.Requests()[0], backup.Requests()[0], "the same request")
		})
	}
}

func TestFallbackChain(t *testing.T) {
	overloaded := failure(harness.CodeServer, 529, errors.New("Overloaded"))
	a := replay.NewScripted(replay.Response{Err: overloaded}).WithInfo(model.Info{Name: "a", ContextWindow: 7})
	b := replay.NewScripted(replay.Response{Err: overloaded}).WithInfo(model.Info{Name: "b"})
	c := replay.NewScripted(replay.Response{Err: overloaded}).WithInfo(model.Info{Name: "c"})
	m := model.Fallback(a, nil, b, c)
	assert.Equal(t, model.Info{Name: "a", ContextWindow: 7}, m.Info(), "the primary's info")
	ch, ok := m.(model.Chain)
	require.True(t, ok)
	models := ch.Models()
	require.Len(t, models, 3, "nil models are skipped")
	models[0] = nil
	assert.NotNil(t, ch.Models()[0], "Models returns a copy")

	_, err := drain(m)
	assert.Same(t, overloaded, err, "when every model fails, the last failure")
	assert.Len(t, c.Requests(), 1)

	// A failure after the answer began is not retried elsewhere.
	mid := replay.NewScripted(replay.Response{Text: "partial", Err: overloaded}).WithInfo(model.Info{Name: "mid"})
	backup := replay.NewScripted(replay.Response{Text: "x"}).WithInfo(model.Info{Name: "backup"})
	chunks, err := drain(model.Fallback(mid, backup))
	assert.Same(t, overloaded, err)
	assert.Equal(t, []model.Chunk{{Type: model.ChunkText, Text: "partial"}}, chunks)
	assert.Empty(t, backup.Requests())

	_, err = drain(model.Fallback(nil))
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
}

// A chain passes the conformance suite, the primary failing each time.
func TestFallbackConforms(t *testing.T) {
	modeltest.TestModel(t, func(t *testing.T) model.Model {
		var fails, answers []replay.Response
		for range 4 {
			fails = append(fails, replay.Response{Err: failure(harness.CodeServer, 503, fmt.Errorf("down"))})
			answers = append(answers, replay.Response{Text: "hello"})
		}
		return model.Fallback(replay.NewScripted(fails...).WithInfo(model.Info{Name: "down"}),
			replay.NewScripted(answers...).WithInfo(model.Info{Name: "up"}))
	})
}
