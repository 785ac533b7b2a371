package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"text to echo back"`
}

// echoTool returns its text argument, prefixed.
func echoTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "echo", Description: "Echo text back.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
			return harness.TextResult("echo: " + in.Text), nil
		})
}

// collect runs a turn and returns its events and the error that came with
// the TurnEnd.
func collect(t *testing.T, s *agent.Session, ctx context.Context, prompt string) ([]agent.Event, *agent.TurnEnd, error) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	var endErr error
	for ev, err := range s.Run(ctx, prompt) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end, endErr = te, err
		} else {
			require.NoError(t, err, "only TurnEnd carries an error")
		}
	}
	require.NotNil(t, end, "a turn always ends with TurnEnd")
	require.Same(t, end, evs[len(evs)-1], "TurnEnd is the last event")
	return evs, end, endErr
}

func kinds(evs []agent.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = agent.KindOf(e)
	}
	return out
}

func ofType[T agent.Event](evs []agent.Event) []T {
	var out []T
	for _, e := range evs {
		if x, ok := e.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

func newSession(t *testing.T, opts ...agent.Option) (*agent.Loop, *agent.Session) {
	t.Helper()
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	return loop, s
}

// resumeSession resumes session id in a new loop built from opts, as a
// restarted program would; both are closed when the test ends.
func resumeSession(t *testing.T, id string, opts ...agent.Option) (*agent.Loop, *agent.Session) {
	t.Helper()
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.ResumeSession(context.Background(), id)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return loop, s
}

// toolResults returns the tool result blocks of a request, in order.
func toolResults(req *model.Request) []*harness.ToolResult {
	var out []*harness.ToolResult
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				out = append(out, b.ToolResult)
			}
		}
	}
	return out
}

func lastResults(req *model.Request, n int) []*harness.ToolResult {
	all := toolResults(req)
	return all[len(all)-n:]
}

func resultText(r *harness.ToolResult) string {
	var s string
	for _, c := range r.Content {
		s += c.Text
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}

// recorder keeps an ordered trace of tool activity.
type recorder struct {
	mu    sync.Mutex
	trace []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.trace = append(r.trace, s)
	r.mu.Unlock()
}

func (r *recorder) index(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.trace {
		if x == s {
			return i
		}
	}
	return -1
}

func sessionStore() session.Store { return session.NewMemory(session.StoreConfig{}) }
