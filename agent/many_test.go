package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/shell"
)

// fleetEndpoint is a fake OpenAI-compatible endpoint that scripts each
// turn of every session as read, edit, run a command, answer: it looks
// only at the request's last message (the user's prompt, or the result
// of the call it asked for last) and answers after a delay, as a model
// takes time to answer.
type fleetEndpoint struct {
	delay time.Duration
	calls atomic.Int64
}

func (e *fleetEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if e.delay > 0 {
		// ±50%, so the sessions do not step in lockstep.
		time.Sleep(e.delay/2 + rand.N(e.delay))
	}
	n := e.calls.Add(1)
	last := req.Messages[len(req.Messages)-1]
	var name, args string
	switch {
	case last.Role == "user":
		name, args = "read", `{"file_path":"notes.txt"}`
	case strings.HasPrefix(last.ToolCallID, "read-"):
		name, args = "edit", `{"file_path":"notes.txt","old_string":"END","new_string":"step\nEND"}`
	case strings.HasPrefix(last.ToolCallID, "edit-"):
		name, args = "bash", `{"command":"wc -l notes.txt"}`
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if name == "" {
		fmt.Fprintf(w, "data: %s\n\n", `{"id":"x","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":2,"total_tokens":102}}`)
	} else {
		call, _ := json.Marshal(map[string]any{"index": 0, "id": fmt.Sprintf("%s-%d", name, n), "type": "function",
			"function": map[string]string{"name": name, "arguments": args}})
		fmt.Fprintf(w, "data: %s\n\n", `{"id":"x","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[`+string(call)+`]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// clockKey finds a turn's stepClock in its context (the turn's context
// derives from Run's, so the model and tool calls see it).
type clockKey struct{}

// stepClock adds up the time a session's current step spent in the
// model call and in tools; the rest of the step is the loop's overhead.
type stepClock struct{ model, tools atomic.Int64 }

func clockOf(ctx context.Context) *stepClock {
	c, _ := ctx.Value(clockKey{}).(*stepClock)
	return c
}

// timedModel times each model call, until its answer's last chunk.
func timedModel(m model.Model) model.Model { return &clockedModel{Model: m} }

type clockedModel struct{ model.Model }

func (m *clockedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		start := time.Now()
		defer func() {
			if c := clockOf(ctx); c != nil {
				c.model.Add(int64(time.Since(start)))
			}
		}()
		for ch, err := range m.Model.Stream(ctx, req) {
			if !yield(ch, err) {
				return
			}
		}
	}
}

// timedTools times each tool call.
func timedTools(next tools.Handler) tools.Handler {
	return func(ctx context.Context, call *tools.Call) *harness.ToolResult {
		start := time.Now()
		res := next(ctx, call)
		if c := clockOf(ctx); c != nil {
			c.tools.Add(int64(time.Since(start)))
		}
		return res
	}
}

// fleetConfig sizes a run of many sessions.
type fleetConfig struct {
	sessions int
	turns    int           // per session
	delay    time.Duration // of each model answer, on average
	idle     int           // sessions left open and idle, measured after
}

// fleetResult is what a run of many sessions measured.
type fleetResult struct {
	steps int
	// toolFailures are the calls that failed (bash's start can time out
	// on an overloaded machine); the rest of the run goes on.
	toolFailures []string
	wall         time.Duration
	overhead     []time.Duration // per step: step time minus model and tool time
	// Per active session, in the middle of the run: heap bytes,
	// goroutines, open files.
	heapPer       float64
	goroutinesPer float64
	filesPer      float64
	// Per idle session (open, no turn running) and per closed one
	// (resumable from its log).
	idleHeapPer, idleGoroutinesPer, idleFilesPer float64
	closedHeapPer                                float64
}

func (r fleetResult) percentile(p float64) time.Duration {
	if len(r.overhead) == 0 {
		return 0
	}
	s := slices.Clone(r.overhead)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// heapInUse returns the heap in use after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// openFiles counts the process's open file descriptors.
func openFiles() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// runFleet runs cfg.sessions sessions at once in one loop, each in a
// workspace of its own with a real file, every turn reading and editing
// it and running bash, against a fake endpoint on loopback.
func runFleet(tb testing.TB, cfg fleetConfig) fleetResult {
	ctx := context.Background()
	ep := &fleetEndpoint{delay: cfg.delay}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.sessions + cfg.idle}}
	defer client.CloseIdleConnections()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-fake", Model: "fake", HTTPClient: client})
	require.NoError(tb, err)
	root, err := filepath.EvalSymlinks(tb.TempDir())
	require.NoError(tb, err)
	fsys, err := fslocal.New(root)
	require.NoError(tb, err)
	var all []tools.Tool
	all = append(all, files.Tools(files.Config{})...)
	all = append(all, shell.Bash(shell.Config{}))
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(all...),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(filepath.Join(root, ".sessions"), session.StoreConfig{ReleaseIdle: true}), Files: fsys}),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{timedTools}, Model: []model.Middleware{timedModel}}))
	require.NoError(tb, err)
	defer loop.Close()

	newSession := func(i int) *agent.Session {
		dir := filepath.Join(root, fmt.Sprintf("w%05d", i))
		require.NoError(tb, os.Mkdir(dir, 0o755))
		require.NoError(tb, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\nEND\n"), 0o644))
		s, err := loop.NewSession(ctx, session.Header{Cwd: dir})
		require.NoError(tb, err)
		return s
	}

	var res fleetResult
	heap0, gor0, files0 := heapInUse(), runtime.NumGoroutine(), openFiles()
	sessions := make([]*agent.Session, cfg.sessions)
	for i := range sessions {
		sessions[i] = newSession(i)
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		failures []string
	)
	// Measure the fleet's cost once every session has run a turn.
	var warm sync.WaitGroup
	warm.Add(cfg.sessions)
	measured := make(chan struct{})
	start := time.Now()
	for i, s := range sessions {
		wg.Go(func() {
			var local []time.Duration
			steps := 0
			for turn := range cfg.turns {
				if turn == 1 {
					warm.Done()
					if i == 0 {
						// One session waits for all to be warm, measures,
						// and the fleet goes on.
						warm.Wait()
						res.heapPer = float64(heapInUse()-heap0) / float64(cfg.sessions)
						res.goroutinesPer = float64(runtime.NumGoroutine()-gor0) / float64(cfg.sessions)
						res.filesPer = float64(openFiles()-files0) / float64(cfg.sessions)
						close(measured)
					}
				}
				clock := &stepClock{}
				tctx := context.WithValue(ctx, clockKey{}, clock)
				stepStart := time.Now()
				var end *agent.TurnEnd
				for ev, err := range s.Run(tctx, "add a step to notes.txt and count its lines") {
					switch e := ev.(type) {
					case *agent.ToolCallEnd:
						if e.Result.IsError {
							mu.Lock()
							res.toolFailures = append(res.toolFailures, fmt.Sprintf("session %d: %s failed: %s", i, e.Call.Name, e.Result.Text()))
							mu.Unlock()
						}
					case *agent.StepEnd:
						now := time.Now()
						local = append(local, now.Sub(stepStart)-time.Duration(clock.model.Swap(0)+clock.tools.Swap(0)))
						stepStart = now
						steps++
					case *agent.TurnEnd:
						end = e
						if err != nil {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("session %d: turn ended with %v", i, err))
							mu.Unlock()
						}
					}
				}
				if end == nil || end.Reason != session.ReasonCompleted {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("session %d: turn %d did not complete: %+v", i, turn, end))
					mu.Unlock()
				}
			}
			if cfg.turns <= 1 {
				warm.Done()
			}
			mu.Lock()
			res.overhead = append(res.overhead, local...)
			res.steps += steps
			mu.Unlock()
		})
	}
	wg.Wait()
	res.wall = time.Since(start)
	if cfg.turns > 1 {
		<-measured
	}
	require.Empty(tb, failures)

	// The files: every turn added a line.
	for i := range sessions {
		b, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("w%05d", i), "notes.txt"))
		require.NoError(tb, err)
		require.Equal(tb, cfg.turns, strings.Count(string(b), "step\n"), "session %d", i)
	}
	// Let go of the endpoint's connections, which are the test's.
	client.CloseIdleConnections()

	// Idle sessions: open, a turn run, none running now.
	ids := make([]string, 0, cfg.sessions)
	for _, s := range sessions {
		ids = append(ids, s.Header().ID)
		require.NoError(tb, s.Close())
	}
	heap1, gor1, files1 := heapInUse(), runtime.NumGoroutine(), openFiles()
	idle := make([]*agent.Session, 0, cfg.idle)
	for i := range cfg.idle {
		// Resumed from the fleet's logs where there are enough, so an
		// idle session holds a history.
		var s *agent.Session
		if i < len(ids) {
			s, err = loop.ResumeSession(ctx, ids[i])
			require.NoError(tb, err)
		} else {
			s = newSession(cfg.sessions + i)
		}
		idle = append(idle, s)
	}
	res.idleHeapPer = float64(heapInUse()-heap1) / float64(max(1, cfg.idle))
	res.idleGoroutinesPer = float64(runtime.NumGoroutine()-gor1) / float64(max(1, cfg.idle))
	res.idleFilesPer = float64(openFiles()-files1) / float64(max(1, cfg.idle))
	for _, s := range idle {
		require.NoError(tb, s.Close())
	}
	// Closed sessions: what the loop keeps of them.
	res.closedHeapPer = (float64(heapInUse()) - float64(heap1)) / float64(max(1, cfg.idle+cfg.sessions))
	// Each closed session resumes with its history.
	if len(ids) > 0 {
		s, err := loop.ResumeSession(ctx, ids[0])
		require.NoError(tb, err)
		assert.Len(tb, s.Messages(), 1+8*cfg.turns-1, "a user message, 3 calls and results, an answer per turn")
		require.NoError(tb, s.Close())
	}
	return res
}

// TestManySessions runs sessions at once in one process against a fake
// endpoint, each turn reading and editing a real file and running real
// bash, and checks what an idle session holds (issue 38): no goroutine,
// no open file, and little memory. 20 sessions by default, 200 under
// HARNESS_LONG_TESTS=1; BenchmarkManySessions runs 1,000 and reports the
// figures.
func TestManySessions(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count open files")
	}
	leakcheck.Check(t)
	cfg := fleetConfig{sessions: longtest.Pick(20, 200), turns: 2, delay: longtest.Pick(5*time.Millisecond, 50*time.Millisecond), idle: longtest.Pick(200, 2000)}
	r := runFleet(t, cfg)
	assert.Empty(t, r.toolFailures)
	assert.Equal(t, cfg.sessions*cfg.turns*4, r.steps)
	t.Logf("%d sessions: %d steps in %v; overhead p50 %v p99 %v; active: %.0f B heap, %.2f goroutines, %.2f files each; idle: %.0f B, %.2f goroutines, %.2f files each; closed: %.0f B each",
		cfg.sessions, r.steps, r.wall, r.percentile(0.5), r.percentile(0.99), r.heapPer, r.goroutinesPer, r.filesPer,
		r.idleHeapPer, r.idleGoroutinesPer, r.idleFilesPer, r.closedHeapPer)
	assert.LessOrEqual(t, r.idleGoroutinesPer, 0.0, "an idle session runs no goroutine")
	assert.LessOrEqual(t, r.idleFilesPer, 0.0, "an idle session holds no open file")
	assert.Less(t, r.idleHeapPer, 50e3, "an idle session holds less than 50 KB")
}

// BenchmarkManySessions runs 1,000 sessions at once in one process (each
// turn reads and edits a real file and runs real bash, against a fake
// endpoint whose answers take 200 ms on average), then holds 10,000 idle
// ones, and reports steps/s, the loop's overhead per step (the step's
// time minus its model and tool time) at p50 and p99, and per session the
// heap, goroutines and open files, active and idle. A smaller fleet (100
// sessions, 1,000 idle) runs beside it for busy machines. Run it with
// -benchtime 1x: one iteration is the whole fleet.
func BenchmarkManySessions(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			cfg := fleetConfig{sessions: n, turns: 2, delay: 200 * time.Millisecond, idle: 10 * n}
			for b.Loop() {
				r := runFleet(b, cfg)
				for _, f := range r.toolFailures {
					b.Log(f)
				}
				b.ReportMetric(float64(len(r.toolFailures)), "tool-failures")
				b.ReportMetric(float64(r.steps)/r.wall.Seconds(), "steps/s")
				b.ReportMetric(float64(r.percentile(0.5).Microseconds()), "p50-overhead-µs")
				b.ReportMetric(float64(r.percentile(0.99).Microseconds()), "p99-overhead-µs")
				b.ReportMetric(r.heapPer, "active-heap-B/session")
				b.ReportMetric(r.goroutinesPer, "active-goroutines/session")
				b.ReportMetric(r.filesPer, "active-files/session")
				b.ReportMetric(r.idleHeapPer, "idle-heap-B/session")
				b.ReportMetric(r.idleGoroutinesPer, "idle-goroutines/session")
				b.ReportMetric(r.idleFilesPer, "idle-files/session")
				b.ReportMetric(r.closedHeapPer, "closed-heap-B/session")
			}
		})
	}
}
