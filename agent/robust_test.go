package agent_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func bufferLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// injectingStore hands ResumeSession extra events as if they had been
// loaded, bypassing whatever the store checks on load: the loop must
// survive whatever it is given.
type injectingStore struct {
	session.Store
	extra []session.Event
}

func (s *injectingStore) Open(ctx context.Context, id string) (session.Log, *session.Transcript, error) {
	log, tr, err := s.Store.Open(ctx, id)
	if err == nil {
		tr.Events = append(tr.Events, s.extra...)
	}
	return log, tr, err
}

func lastTurnEnded(t *testing.T, store session.Store, id string) *session.TurnEnded {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if te, ok := tr.Events[i].Data.(*session.TurnEnded); ok {
			return te
		}
	}
	t.Fatal("no turn_ended in the log")
	return nil
}

// TestResumeDamagedBlocksThenCompact: blocks without their payload (a tool
// call, a tool result, an image) reach compaction's transcript, which
// names them instead of dereferencing nil.
func TestResumeDamagedBlocksThenCompact(t *testing.T) {
	ctx := context.Background()
	mem := session.NewMemory(session.StoreConfig{})
	log, err := mem.Create(ctx, session.Header{Cwd: "/proj"})
	require.NoError(t, err)
	id := log.Header().ID
	_, err = log.Append(ctx,
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("look at this " + strings.Repeat("words ", 200)), {Type: harness.BlockImage}}},
		&session.AssistantMessage{Step: 1, Content: []harness.Block{{Type: harness.BlockToolCall}, harness.TextBlock("calling " + strings.Repeat("more ", 200))}, Finish: model.FinishStop},
		&session.TurnEnded{Reason: session.ReasonCompleted},
	)
	require.NoError(t, err)
	require.NoError(t, log.Close())
	store := &injectingStore{Store: mem, extra: []session.Event{
		{Seq: 100, Data: &session.UserMessage{Content: []harness.Block{harness.TextBlock("again " + strings.Repeat("text ", 200))}}},
		{Seq: 101, Data: &session.AssistantMessage{Step: 1, Content: []harness.Block{{Type: harness.BlockToolResult}, {Type: harness.BlockImage}, harness.TextBlock("ok")}, Finish: model.FinishStop}},
		{Seq: 102, Data: &session.TurnEnded{Reason: session.ReasonCompleted}},
	}}

	llm := replay.NewScripted(replay.Response{Text: "short summary"}, replay.Response{Text: "done"}).
		WithInfo(model.Info{Name: "small", ContextWindow: 200})
	loop, err := agent.New(agent.WithModel(llm), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithContextPolicy(agent.ContextPolicy{PruneAt: 0.01, CompactAt: 0.02, KeepRecent: 0.01}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.ResumeSession(ctx, id)
	require.NoError(t, err)
	evs, end, err := collect(t, s, ctx, "continue")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.NotEmpty(t, ofType[*agent.ContextCompacted](evs), "the history was compacted")

	reqs := llm.Requests()
	require.Len(t, reqs, 2)
	transcript := reqs[0].Messages[0].Text()
	// The history leaves the damaged blocks out (the session package
	// warns about them); what stands around them reaches the summary.
	assert.Contains(t, transcript, "look at this")
	assert.Contains(t, transcript, "calling more")
	assert.Contains(t, transcript, "again text")
	assert.NotContains(t, transcript, "missing from the log")
}

// panickyModel yields some text, then panics inside its stream.
type panickyModel struct{ value any }

func (m panickyModel) Info() model.Info { return model.Info{Name: "panicky"} }

func (m panickyModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if !yield(model.Chunk{Type: model.ChunkText, Text: "about to "}, nil) {
			return
		}
		panic(m.value)
	}
}

func TestModelPanicEndsTheTurn(t *testing.T) {
	leakcheck.Check(t)
	ctx := context.Background()
	logger, logs := bufferLogger()
	store := session.NewMemory(session.StoreConfig{})
	_, s := newSession(t, agent.WithModel(panickyModel{value: "model boom"}), agent.WithStores(agent.Stores{Sessions: store}), agent.WithLogger(logger))

	evs, end, err := collect(t, s, ctx, "go")
	assert.Equal(t, []string{"text_delta", "turn_end"}, kinds(evs))
	assert.Equal(t, session.ReasonError, end.Reason)
	var ie *harness.Error
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, agent.CodeInternal, ie.Code)
	assert.Contains(t, ie.Message, "during turn: panic: model boom")
	assert.Equal(t, agent.CodeInternal, harness.CodeOf(err))
	assert.Contains(t, err.Error(), "bug")
	assert.Contains(t, err.Error(), "model boom")
	assert.Contains(t, logs.String(), "stack=", "the stack is logged")
	assert.Contains(t, logs.String(), "panicky", "the stack shows where it panicked")

	te := lastTurnEnded(t, store, s.Header().ID)
	assert.Equal(t, session.ReasonError, te.Reason)
	require.NotNil(t, te.Error)
	assert.Equal(t, agent.CodeInternal, te.Error.Code)

	// The session is usable again.
	require.NoError(t, s.SetModel(replay.NewScripted(replay.Response{Text: "fine now"})))
	evs, end, err = collect(t, s, ctx, "again")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, "fine now", ofType[*agent.TextDelta](evs)[0].Text)
}

func TestModelPanicWithErrorValue(t *testing.T) {
	boom := errors.New("wrapped boom")
	_, s := newSession(t, agent.WithModel(panickyModel{value: boom}))
	_, end, err := collect(t, s, context.Background(), "go")
	assert.Equal(t, session.ReasonError, end.Reason)
	assert.ErrorIs(t, err, boom, "a panic with an error value unwraps to it")
	assert.Equal(t, agent.CodeInternal, harness.CodeOf(err))
}

type panicIn struct{}

func TestToolPanicInsideTheStream(t *testing.T) {
	leakcheck.Check(t)
	boom := tools.Define(tools.Spec{Name: "boom", Description: "panics", SideEffects: true},
		func(ctx context.Context, call *tools.Call, in panicIn) (*harness.ToolResult, error) {
			panic("tool boom")
		})
	llm := replay.NewScripted(replay.Call(replay.ToolCall("c1", "boom", nil)), replay.Response{Text: "recovered"})
	_, s := newSession(t, agent.WithModel(llm), agent.WithTools(boom))
	evs, end, err := collect(t, s, context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	ends := ofType[*agent.ToolCallEnd](evs)
	require.Len(t, ends, 1)
	assert.Equal(t, harness.CodeToolPanic, ends[0].Result.Code)
	assert.Contains(t, ends[0].Result.Text(), "tool boom")
}

// panickingStore panics in Append when panicOn says so.
type panickingStore struct {
	session.Store
	panicOn func(p session.Payload) bool
}

func (s *panickingStore) Create(ctx context.Context, h session.Header) (session.Log, error) {
	log, err := s.Store.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	return &panickingLog{Log: log, panicOn: s.panicOn}, nil
}

type panickingLog struct {
	session.Log
	panicOn func(p session.Payload) bool
}

func (l *panickingLog) Append(ctx context.Context, ps ...session.Payload) ([]session.Event, error) {
	for _, p := range ps {
		if l.panicOn(p) {
			panic("store boom")
		}
	}
	return l.Log.Append(ctx, ps...)
}

func TestStorePanicEndsTheTurn(t *testing.T) {
	for name, tc := range map[string]struct {
		panicOn   func(p session.Payload) bool
		endLogged bool
	}{
		"once": {
			panicOn: func() func(session.Payload) bool {
				var n atomic.Int32
				return func(p session.Payload) bool {
					_, ok := p.(*session.AssistantMessage)
					return ok && n.Add(1) == 1
				}
			}(),
			endLogged: true,
		},
		"always, also on the end": {
			panicOn: func(p session.Payload) bool {
				switch p.(type) {
				case *session.AssistantMessage, *session.TurnEnded:
					return true
				}
				return false
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			leakcheck.Check(t)
			mem := session.NewMemory(session.StoreConfig{})
			store := &panickingStore{Store: mem, panicOn: tc.panicOn}
			llm := replay.NewScripted(replay.Response{Text: "one"}, replay.Response{Text: "two"})
			_, s := newSession(t, agent.WithModel(llm), agent.WithStores(agent.Stores{Sessions: store}))
			evs, end, err := collect(t, s, context.Background(), "go")
			assert.Equal(t, "turn_end", agent.KindOf(evs[len(evs)-1]))
			assert.Equal(t, session.ReasonError, end.Reason)
			assert.Equal(t, agent.CodeInternal, harness.CodeOf(err))
			assert.Contains(t, err.Error(), "store boom")
			if tc.endLogged {
				te := lastTurnEnded(t, mem, s.Header().ID)
				require.NotNil(t, te.Error)
				assert.Equal(t, agent.CodeInternal, te.Error.Code)
				// And the session goes on.
				_, end, err = collect(t, s, context.Background(), "again")
				require.NoError(t, err)
				assert.Equal(t, session.ReasonCompleted, end.Reason)
			} else {
				assert.Contains(t, err.Error(), "logging the end of a turn")
			}
		})
	}
}

func TestHostPanicIsPassedOn(t *testing.T) {
	llm := replay.NewScripted(replay.Response{Text: "hello"}, replay.Response{Text: "again"})
	_, s := newSession(t, agent.WithModel(llm))
	got := func() (p any) {
		defer func() { p = recover() }()
		for ev := range s.Run(context.Background(), "go") {
			if _, ok := ev.(*agent.TextDelta); ok {
				panic("host boom")
			}
		}
		return nil
	}()
	assert.Equal(t, "host boom", got, "the host's own panic reaches the host unchanged")
	_, end, err := collect(t, s, context.Background(), "next")
	require.NoError(t, err, "the session is not left busy")
	assert.Equal(t, session.ReasonCompleted, end.Reason)
}

// panickyOpenStore panics in Create and Open.
type panickyOpenStore struct{ session.Store }

func (panickyOpenStore) Create(ctx context.Context, h session.Header) (session.Log, error) {
	panic("create boom")
}

func (panickyOpenStore) Open(ctx context.Context, id string) (session.Log, *session.Transcript, error) {
	panic("open boom")
}

func TestSessionStartPanicsAreErrors(t *testing.T) {
	leakcheck.Check(t)
	loop, err := agent.New(agent.WithModel(replay.NewScripted()), agent.WithStores(agent.Stores{Sessions: panickyOpenStore{session.NewMemory(session.StoreConfig{})}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	assert.Nil(t, s)
	var ie *harness.Error
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, agent.CodeInternal, ie.Code)
	assert.Contains(t, ie.Message, "during new_session")
	assert.Contains(t, err.Error(), "create boom")

	s, err = loop.ResumeSession(context.Background(), "x")
	assert.Nil(t, s)
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, ie.Message, "during resume_session")
	assert.Contains(t, err.Error(), "open boom")
}

type panickyCloser struct{}

func (panickyCloser) Close() error { panic("closer boom") }

func TestClosePanicIsAnError(t *testing.T) {
	mem := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(replay.NewScripted()), agent.WithStores(agent.Stores{Sessions: mem}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	_, err = tools.LoadState(s.State(), "k", func() panickyCloser { return panickyCloser{} })
	require.NoError(t, err)
	err = s.Close()
	var ie *harness.Error
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, agent.CodeInternal, ie.Code)
	assert.Contains(t, err.Error(), "closer boom")
	// The log was closed anyway: the session can be deleted.
	require.NoError(t, mem.Delete(context.Background(), s.Header().ID))
}
