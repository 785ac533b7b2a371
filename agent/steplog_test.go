package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
)

// countingStore counts the writes of its logs: each Append, Sync and
// Close that has something to write is one.
type countingStore struct {
	session.Store
	appends, defers int
}

func (s *countingStore) Create(ctx context.Context, h session.Header) (session.Log, error) {
	l, err := s.Store.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	return &countingLog{Log: l, st: s}, nil
}

type countingLog struct {
	session.Log
	st *countingStore
}

func (l *countingLog) Append(ctx context.Context, p ...session.Payload) ([]session.Event, error) {
	l.st.appends++
	return l.Log.Append(ctx, p...)
}

func (l *countingLog) Defer(ctx context.Context, p ...session.Payload) ([]session.Event, error) {
	l.st.defers++
	return l.Log.(session.Deferrer).Defer(ctx, p...)
}

// A step with one tool call writes the log twice, as a loop written by
// hand does (issue 38): the request's fingerprint and the model's answer
// go to disk with the call's start, before the call runs, and the result
// on its own. Every record is still logged, in order.
func TestStepWritesTwice(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{Store: session.NewJSONL(t.TempDir(), session.StoreConfig{})}
	const steps = 10
	loop, err := agent.New(agent.WithModel(&instantModel{}), agent.WithTools(noopTool()),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithLimits(agent.Limits{MaxSteps: steps}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	for ev, err := range s.Run(ctx, "go") {
		require.NoError(t, err)
		if te, ok := ev.(*agent.TurnEnd); ok {
			assert.Equal(t, session.ReasonStepLimit, te.Reason)
		}
	}
	require.NoError(t, s.Close())
	// The user's message, two writes a step, the turn's end.
	assert.Equal(t, 1+2*steps+1, store.appends, "writes")
	assert.Equal(t, 2*steps, store.defers, "records deferred: each step's request and answer")

	tr, err := store.Load(ctx, s.Header().ID)
	require.NoError(t, err)
	var types []string
	for _, e := range tr.Events[:6] {
		types = append(types, kindOfPayload(e.Data))
	}
	assert.Equal(t, []string{"user", "request", "answer", "start", "finish", "request"}, types)
	assert.Len(t, tr.Events, 1+4*steps+1)
	for i, e := range tr.Events {
		assert.Equal(t, int64(i+1), e.Seq)
	}
}

func kindOfPayload(p session.Payload) string {
	switch p.(type) {
	case *session.UserMessage:
		return "user"
	case *session.ModelRequest:
		return "request"
	case *session.AssistantMessage:
		return "answer"
	case *session.ToolStarted:
		return "start"
	case *session.ToolFinished:
		return "finish"
	case *session.TurnEnded:
		return "end"
	}
	return "other"
}
