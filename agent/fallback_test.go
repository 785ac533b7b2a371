package agent_test

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
)

// fastRetries retries twice, without waiting long.
var fastRetries = agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})

// fallbackPrices price the primary at 1 and the backup at 100 per
// million tokens of any kind, so a call priced as the wrong model shows.
func fallbackPrices(t *testing.T) agent.Option {
	t.Helper()
	prices, err := pricing.NewTable("USD", map[string]pricing.Price{
		"primary": {Input: 1, CacheHit: 1, Output: 1},
		"backup":  {Input: 100, CacheHit: 100, Output: 100},
	})
	require.NoError(t, err)
	return agent.WithPrices(prices)
}

func failures(err error, n int) []replay.Response {
	out := make([]replay.Response, n)
	for i := range out {
		out[i] = replay.Response{Err: err}
	}
	return out
}

func providerFailure(code harness.Code, status int, msg string) error {
	return model.NewError(code, msg, &model.ProviderError{Status: status, Err: errors.New(msg)})
}

// Each failure class: one of the model (408, 429, 5xx, 529, a timeout,
// a broken connection) is retried on the primary as the retry policy
// says, then the backup answers the same request, and the answer is
// logged and priced as the backup's; one of the request (400, 401, 403,
// 404, 413, 422, context overflow) ends the turn, the backup never
// asked.
func TestFallbackAfterRetriesForEachFailureClass(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		fallsBack bool
	}{
		{"408", providerFailure(harness.CodeTransport, 408, "request timeout"), true},
		{"429", providerFailure(harness.CodeRateLimit, 429, "rate limited"), true},
		{"500", providerFailure(harness.CodeServer, 500, "internal error"), true},
		{"502", providerFailure(harness.CodeServer, 502, "bad gateway"), true},
		{"529 overloaded", providerFailure(harness.CodeServer, 529, "Overloaded"), true},
		{"timeout", model.NewError(harness.CodeTransport, "no content from the model for 3m0s", &harness.Error{Code: harness.CodeTimeout}), true},
		{"connection error", model.NewError(harness.CodeTransport, "connection refused", errors.New("dial tcp: connection refused")), true},
		{"400", providerFailure(harness.CodeInvalidRequest, 400, "bad request"), false},
		{"401", providerFailure(harness.CodeAuth, 401, "invalid key"), false},
		{"403", providerFailure(harness.CodeAuth, 403, "forbidden"), false},
		{"404", providerFailure(harness.CodeInvalidRequest, 404, "model not found"), false},
		{"413", providerFailure(harness.CodeInvalidRequest, 413, "request too large"), false},
		{"422", providerFailure(harness.CodeInvalidRequest, 422, "unprocessable"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usage := &harness.Usage{InputTokens: 1_000_000}
			primary := replay.NewScripted(failures(tc.err, 3)...).WithInfo(model.Info{Name: "primary"})
			backup := replay.NewScripted(replay.Response{Text: "answered", Usage: usage}).WithInfo(model.Info{Name: "backup"})
			store := session.NewMemory(session.StoreConfig{})
			_, s := newSession(t, agent.WithModel(model.Fallback(primary, backup)), agent.WithStores(agent.Stores{Sessions: store}),
				fastRetries, fallbackPrices(t))
			evs, end, err := collect(t, s, context.Background(), "go")
			if !tc.fallsBack {
				require.Error(t, err)
				assert.Equal(t, harness.CodeOf(tc.err), harness.CodeOf(err))
				assert.Len(t, primary.Requests(), 1, "not retried")
				assert.Empty(t, backup.Requests(), "no fallback for a failure of the request")
				assert.Empty(t, ofType[*agent.ModelFallback](evs))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, session.ReasonCompleted, end.Reason)
			assert.Len(t, primary.Requests(), 3, "the primary was retried twice first")
			require.Len(t, backup.Requests(), 1)
			assert.Equal(t, primary.Requests()[2].Messages, backup.Requests()[0].Messages, "the same request")

			// The host sees the switch, then the backup's usage, priced as
			// the backup's.
			fb := ofType[*agent.ModelFallback](evs)
			require.Len(t, fb, 1)
			assert.Equal(t, "primary", fb[0].From)
			assert.Equal(t, "backup", fb[0].To)
			assert.Same(t, tc.err, fb[0].Err)
			assert.Len(t, ofType[*agent.Retry](evs), 2)
			u := ofType[*agent.ModelUsage](evs)
			require.Len(t, u, 1)
			assert.Equal(t, "backup", u[0].Model)
			assert.InDelta(t, 100.0, u[0].Cost, 1e-9)
			assert.InDelta(t, 100.0, end.Cost, 1e-9)
			line, err := agent.MarshalEvent(fb[0])
			require.NoError(t, err)
			assert.Contains(t, string(line), `"type":"fallback"`)
			assert.Contains(t, string(line), `"code":"`+string(harness.CodeOf(tc.err))+`"`)

			// The log says it too: the switch, then the backup's request
			// and answer.
			tr, err := store.Load(context.Background(), s.Header().ID)
			require.NoError(t, err)
			var seq []string
			for _, e := range tr.Events {
				switch p := e.Data.(type) {
				case *session.ModelRequest:
					seq = append(seq, "request "+p.Model)
				case *session.ModelRetry:
					seq = append(seq, "retry "+string(p.Code))
				case *session.ModelFallback:
					seq = append(seq, "fallback "+p.From+" to "+p.To+" "+string(p.Code))
					assert.Equal(t, 1, p.Step)
					assert.Contains(t, p.Message, tc.err.Error())
				case *session.AssistantMessage:
					seq = append(seq, "answer "+p.Model)
				}
			}
			code := string(harness.CodeOf(tc.err))
			assert.Equal(t, []string{"request primary", "retry " + code, "request primary", "retry " + code, "request primary",
				"fallback primary to backup " + code, "request backup", "answer backup"}, seq)
			assert.InDelta(t, 100.0, s.Cost(), 1e-9)
		})
	}
}

// A context overflow is the request's: the loop makes room and tries
// the same model once more, and never falls back.
func TestNoFallbackOnContextOverflow(t *testing.T) {
	overflow := providerFailure(harness.CodeContextWindowExceeded, 400, "prompt is too long")
	primary := replay.NewScripted(failures(overflow, 3)...).WithInfo(model.Info{Name: "primary", ContextWindow: 100_000})
	backup := replay.NewScripted(replay.Response{Text: "x"}).WithInfo(model.Info{Name: "backup"})
	_, s := newSession(t, agent.WithModel(model.Fallback(primary, backup)), fastRetries)
	evs, _, err := collect(t, s, context.Background(), "go")
	assert.ErrorIs(t, err, harness.CodeContextWindowExceeded)
	assert.Len(t, primary.Requests(), 2, "made room and tried once more")
	assert.Empty(t, backup.Requests())
	assert.Empty(t, ofType[*agent.ModelFallback](evs))
}

// The turn keeps the backup for its later steps; the next turn starts
// with the primary again. When the backup fails too, the last failure
// ends the turn.
func TestFallbackStaysForTheTurn(t *testing.T) {
	down := providerFailure(harness.CodeServer, 503, "unavailable")
	primary := replay.NewScripted(append(failures(down, 3), replay.Response{Text: "primary again"})...).WithInfo(model.Info{Name: "primary"})
	backup := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "echo", map[string]string{"text": "x"})),
		replay.Response{Text: "done"},
	).WithInfo(model.Info{Name: "backup"})
	_, s := newSession(t, agent.WithModel(model.Fallback(primary, backup)), agent.WithTools(echoTool()), fastRetries)
	_, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, 2, end.Steps)
	assert.Len(t, primary.Requests(), 3)
	assert.Len(t, backup.Requests(), 2, "step 2 went to the backup directly")

	_, _, err = collect(t, s, context.Background(), "again")
	require.NoError(t, err)
	assert.Len(t, primary.Requests(), 4, "a new turn starts with the primary")

	// Both down: the backup's retries are its own, then its failure ends
	// the turn.
	a := replay.NewScripted(failures(down, 3)...).WithInfo(model.Info{Name: "a"})
	b := replay.NewScripted(failures(providerFailure(harness.CodeRateLimit, 429, "slow down"), 3)...).WithInfo(model.Info{Name: "b"})
	_, s = newSession(t, agent.WithModel(model.Fallback(a, b)), fastRetries)
	evs, _, err := collect(t, s, context.Background(), "go")
	assert.ErrorIs(t, err, harness.CodeRateLimit)
	assert.Len(t, b.Requests(), 3)
	assert.Len(t, ofType[*agent.ModelFallback](evs), 1)
}

// countingMiddleware counts the calls that pass through it by model.
type countingMiddleware struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingMiddleware) wrap(next model.Model) model.Model {
	return model.Wrap(next, func(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
		c.mu.Lock()
		c.calls[next.Info().Name]++
		c.mu.Unlock()
		return next.Stream(ctx, req)
	})
}

// Model middleware wraps each model of the chain, so it sees the calls
// of whichever model answers.
func TestFallbackModelsPassThroughMiddleware(t *testing.T) {
	mw := &countingMiddleware{calls: map[string]int{}}
	primary := replay.NewScripted(failures(providerFailure(harness.CodeServer, 529, "Overloaded"), 3)...).WithInfo(model.Info{Name: "primary"})
	backup := replay.NewScripted(replay.Response{Text: "ok"}).WithInfo(model.Info{Name: "backup"})
	_, s := newSession(t, agent.WithModel(model.Fallback(primary, backup)), fastRetries, agent.WithHooks(agent.Hooks{Model: []model.Middleware{mw.wrap}}))
	_, _, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"primary": 3, "backup": 1}, mw.calls)
}

// A strict replay of a session that fell back reproduces it: no drift,
// each answer logged as the model that gave it, the same costs.
func TestStrictReplayReproducesAFallback(t *testing.T) {
	overloaded := providerFailure(harness.CodeServer, 529, "Overloaded")
	usage := &harness.Usage{InputTokens: 500_000, OutputTokens: 10}
	primary := replay.NewScripted(
		replay.Response{Text: "first turn by the primary", Usage: usage},
		replay.Response{Err: overloaded}, replay.Response{Err: overloaded}, replay.Response{Err: overloaded},
	).WithInfo(model.Info{Name: "primary"})
	backup := replay.NewScripted(
		replay.Response{Chunks: []model.Chunk{
			{Type: model.ChunkReasoning, Text: "signed thought", Signature: "sig-1"},
			{Type: model.ChunkReasoning, Redacted: true, Signature: "encrypted"},
			{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{ID: "c1", Name: "echo", Arguments: `{"text":"x"}`}},
			{Type: model.ChunkReasoning, Text: "thought between calls", Signature: "sig-2"},
			{Type: model.ChunkUsage, Usage: *usage},
			{Type: model.ChunkFinish, Finish: model.FinishToolCalls},
		}},
		replay.Response{Text: "second turn by the backup", Usage: usage},
	).WithInfo(model.Info{Name: "backup"})
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(model.Fallback(primary, backup)), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithTools(echoTool()), fastRetries, fallbackPrices(t))
	for _, prompt := range []string{"one", "two"} {
		_, _, err := collect(t, s, context.Background(), prompt)
		require.NoError(t, err)
	}
	recorded, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)

	rep, err := replay.NewStrict(recorded)
	require.NoError(t, err)
	replayStore := session.NewMemory(session.StoreConfig{})
	_, rs := newSession(t, agent.WithModel(rep), agent.WithStores(agent.Stores{Sessions: replayStore}),
		agent.WithTools(echoTool()), fastRetries, fallbackPrices(t))
	for _, prompt := range []string{"one", "two"} {
		_, _, err := collect(t, rs, context.Background(), prompt)
		require.NoError(t, err, "no drift")
	}
	replayed, err := replayStore.Load(context.Background(), rs.Header().ID)
	require.NoError(t, err)
	answers := func(tr *session.Transcript) []*session.AssistantMessage {
		var out []*session.AssistantMessage
		for _, e := range tr.Events {
			if am, ok := e.Data.(*session.AssistantMessage); ok {
				out = append(out, am)
			}
		}
		return out
	}
	want, got := answers(recorded), answers(replayed)
	require.Len(t, got, len(want))
	assert.Equal(t, []string{"primary", "backup", "backup"}, []string{want[0].Model, want[1].Model, want[2].Model})
	require.Len(t, want[1].Content, 4)
	assert.Equal(t, "sig-2", want[1].Content[3].Signature, "interleaved thinking is logged after its call")
	for i := range want {
		assert.Equal(t, want[i].Model, got[i].Model, "answer %d", i)
		assert.Equal(t, want[i].Content, got[i].Content, "answer %d, signatures included", i)
		assert.Equal(t, want[i].Usage, got[i].Usage)
	}
	assert.InDelta(t, s.Cost(), rs.Cost(), 1e-9)
	assert.InDelta(t, 0.5+0.00001+2*(50+0.001), rs.Cost(), 1e-9)
}
