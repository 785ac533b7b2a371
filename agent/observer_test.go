package agent_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
)

type ctxKey struct{}

// turnRecorder is a turn observer that puts a value in the turn's context
// and records the kinds of the events it sees, with that value.
type turnRecorder struct {
	name   string
	kinds  []string
	values []any
	panics bool
}

func (r *turnRecorder) observe(ctx context.Context, info agent.TurnInfo) (context.Context, func(agent.Event)) {
	r.kinds = append(r.kinds, "begin:"+info.Model)
	ctx = context.WithValue(ctx, ctxKey{}, r.name)
	return ctx, func(ev agent.Event) {
		r.kinds = append(r.kinds, agent.KindOf(ev))
		r.values = append(r.values, ctx.Value(ctxKey{}))
		if r.panics {
			panic("observer broke")
		}
	}
}

func TestTurnObserversAndModelMiddleware(t *testing.T) {
	var order []string
	var seen []any
	mw := func(name string) model.Middleware {
		return func(next model.Model) model.Model {
			return model.Wrap(next, func(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
				order = append(order, name)
				seen = append(seen, ctx.Value(ctxKey{}))
				return next.Stream(ctx, req)
			})
		}
	}
	for _, tc := range []struct {
		name      string
		stopEarly bool
		panics    bool
	}{{"whole turn", false, false}, {"host stops after the first event", true, false}, {"observer panics", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			order, seen = nil, nil
			rec := &turnRecorder{name: "traced", panics: tc.panics}
			loop, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "hello"})),
				agent.WithHooks(agent.Hooks{Turns: []agent.TurnObserver{rec.observe, nil}}), agent.WithHooks(agent.Hooks{Model: []model.Middleware{mw("outer"), nil, mw("inner")}}))
			require.NoError(t, err)
			defer loop.Close()
			sess, err := loop.NewSession(t.Context(), session.Header{})
			require.NoError(t, err)
			var got []string
			for ev := range sess.Run(t.Context(), "hi") {
				got = append(got, agent.KindOf(ev))
				if tc.stopEarly {
					break
				}
			}
			assert.Equal(t, "begin:scripted", rec.kinds[0])
			assert.Equal(t, "turn_end", rec.kinds[len(rec.kinds)-1], "the observer sees the end even when the host stopped")
			for _, v := range rec.values {
				assert.Equal(t, "traced", v, "the events are seen by the observer that began the turn")
			}
			assert.Equal(t, []string{"outer", "inner"}, order)
			assert.Equal(t, []any{"traced", "traced"}, seen, "the model call runs in the turn's context")
			if tc.stopEarly {
				assert.Len(t, got, 1)
			} else {
				assert.Equal(t, "turn_end", got[len(got)-1])
				assert.Equal(t, rec.kinds[1:], got, "the observer sees what the host sees")
			}
		})
	}
}
