package agent_test

import (
	"bytes"
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
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

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
//
// With hold set, the first call of turn hold of every session waits
// there: it says so on arrived and answers once release is closed. While
// the whole fleet waits in its model call the test measures it, outside
// every step's overhead (model time is not the loop's).
type fleetEndpoint struct {
	delay   time.Duration
	calls   atomic.Int64
	hold    int
	arrived chan struct{} // buffered: one per session
	release chan struct{}
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
	last := req.Messages[len(req.Messages)-1]
	if e.hold > 0 && last.Role == "user" {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "user" {
				turn++
			}
		}
		if turn == e.hold {
			e.arrived <- struct{}{}
			<-e.release
		}
	}
	if e.delay > 0 {
		// ±50%, so the sessions do not step in lockstep.
		time.Sleep(e.delay/2 + rand.N(e.delay))
	}
	n := e.calls.Add(1)
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
// It also keeps when the step's last model call and tool call began and
// ended (nanoseconds since epoch), which split the overhead into parts.
type stepClock struct {
	epoch                                    time.Time
	model, tools                             atomic.Int64
	modelStart, modelEnd, toolStart, toolEnd atomic.Int64
}

// now returns the time since the clock's epoch.
func (c *stepClock) now() int64 { return int64(time.Since(c.epoch)) }

func clockOf(ctx context.Context) *stepClock {
	c, _ := ctx.Value(clockKey{}).(*stepClock)
	return c
}

// timedModel times each model call, until its answer's last chunk.
func timedModel(m model.Model) model.Model { return &clockedModel{Model: m} }

type clockedModel struct{ model.Model }

func (m *clockedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		c := clockOf(ctx)
		if c == nil {
			for ch, err := range m.Model.Stream(ctx, req) {
				if !yield(ch, err) {
					return
				}
			}
			return
		}
		start := c.now()
		c.modelStart.Store(start)
		defer func() {
			end := c.now()
			c.modelEnd.Store(end)
			c.model.Add(end - start)
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
		c := clockOf(ctx)
		if c == nil {
			return next(ctx, call)
		}
		start := c.now()
		c.toolStart.Store(start)
		res := next(ctx, call)
		end := c.now()
		c.toolEnd.Store(end)
		c.tools.Add(end - start)
		return res
	}
}

// fleetConfig sizes a run of many sessions.
type fleetConfig struct {
	sessions int
	turns    int           // per session, at least 2
	delay    time.Duration // of each model answer, on average (0.5–1.5×)
	idle     int           // sessions resumed and left idle after the run
}

// fleetResult is what a run of many sessions measured.
type fleetResult struct {
	steps int
	// toolFailures are the calls that failed (bash's start can time out
	// on an overloaded machine); the rest of the run goes on.
	toolFailures []string
	wall         time.Duration
	overhead     []time.Duration // per step, see BenchmarkManySessions
	// parts split the overhead, per step (partTurnStart and the rest).
	parts   [numParts][]time.Duration
	runtime fleetRuntime    // what the Go runtime and the kernel saw over the run
	turnEnd []time.Duration // per turn: last StepEnd to TurnEnd
	// CPU time of the process and of the commands it ran, over the run.
	cpu, childCPU time.Duration
	load          [2]float64 // 1-minute load average at the start and end
	// Per active session, while every session waits in the model call
	// of its second turn.
	active fleetCost
	// Per idle session (resumed from its log, no turn running).
	idle fleetCost
	// Per closed session, what the loop kept of it.
	closedHeapPer float64
}

// The parts of a step's overhead, from the events of the turn and the
// timing middleware (one model call and at most one tool call a step).
const (
	// partTurnStart: the start of the turn to the model call of its
	// first step (the log taken again, the user's message written, the
	// request built).
	partTurnStart = iota
	// partBeforeModel: the end of the step before to the model call (the
	// request built).
	partBeforeModel
	// partCallLogged: the answer's last chunk to ToolCallStart (the
	// answer and the call's start written to the log).
	partCallLogged
	// partToolLaunch: ToolCallStart to the tool middleware (the call
	// handed to the goroutine that runs it).
	partToolLaunch
	// partResultLogged: the tool's return to ToolCallEnd (the result
	// handed back to the turn and written to the log).
	partResultLogged
	// partStepEnd: ToolCallEnd to StepEnd.
	partStepEnd
	// partAnswerEnd: the last step's last chunk to its StepEnd.
	partAnswerEnd
	numParts
)

// partNames name the parts in the benchmark's metrics.
var partNames = [numParts]string{"turn-start", "before-model", "call-logged", "tool-launch", "result-logged", "step-end", "answer-end"}

// fleetRuntime is what the Go runtime and the kernel saw over a run.
type fleetRuntime struct {
	// schedP50, schedP99: how long goroutines waited to run once
	// runnable (runtime/metrics /sched/latencies:seconds).
	schedP50, schedP99 time.Duration
	// gcPauses is the stop-the-world time of the run's collections;
	// gcCycles their number; gcAssist and gcCPU the CPU time spent
	// assisting the collector and collecting in all.
	gcPauses, gcPauseMax time.Duration
	gcCycles             uint64
	gcAssist, gcCPU      time.Duration
	// allocated is the bytes allocated on the heap over the run (by the
	// whole process: the fake endpoint's side too).
	allocated uint64
	// runDelay is how long the process's threads waited for a CPU that
	// was busy (the kernel's schedstat, summed over threads).
	runDelay time.Duration
}

// runtimeSample reads the runtime metrics fleetRuntime is made of.
func runtimeSample() []metrics.Sample {
	s := []metrics.Sample{
		{Name: "/sched/latencies:seconds"},
		{Name: "/sched/pauses/total/gc:seconds"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/gc/heap/allocs:bytes"},
	}
	metrics.Read(s)
	return s
}

// histDelta returns the counts of h1 minus those of h0 (same buckets).
func histDelta(h0, h1 *metrics.Float64Histogram) *metrics.Float64Histogram {
	d := &metrics.Float64Histogram{Buckets: h1.Buckets, Counts: slices.Clone(h1.Counts)}
	for i := range d.Counts {
		if i < len(h0.Counts) {
			d.Counts[i] -= h0.Counts[i]
		}
	}
	return d
}

// histQuantile returns the upper bound of the bucket that holds quantile
// q of h (a bound, to the bucket's resolution).
func histQuantile(h *metrics.Float64Histogram, q float64) time.Duration {
	var total uint64
	for _, c := range h.Counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(float64(total)*q) + 1
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= want {
			return time.Duration(h.Buckets[i+1] * 1e9)
		}
	}
	return time.Duration(h.Buckets[len(h.Buckets)-1] * 1e9)
}

// histMax returns the upper bound of h's highest nonempty bucket.
func histMax(h *metrics.Float64Histogram) time.Duration {
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if h.Counts[i] > 0 {
			return time.Duration(min(h.Buckets[i+1], h.Buckets[i]*2+1e-3) * 1e9)
		}
	}
	return 0
}

// histSum returns the sum of h's samples, each taken at its bucket's
// lower bound.
func histSum(h *metrics.Float64Histogram) time.Duration {
	var sum float64
	for i, c := range h.Counts {
		sum += float64(c) * max(h.Buckets[i], 0)
	}
	return time.Duration(sum * 1e9)
}

// fleetRuntimeOver returns what changed between two samples, and the
// threads' run delay between two readings of runDelay.
func fleetRuntimeOver(s0, s1 []metrics.Sample, delay0, delay1 time.Duration) fleetRuntime {
	lat := histDelta(s0[0].Value.Float64Histogram(), s1[0].Value.Float64Histogram())
	pauses := histDelta(s0[1].Value.Float64Histogram(), s1[1].Value.Float64Histogram())
	sec := func(i int) time.Duration { return time.Duration((s1[i].Value.Float64() - s0[i].Value.Float64()) * 1e9) }
	return fleetRuntime{
		schedP50: histQuantile(lat, 0.5), schedP99: histQuantile(lat, 0.99),
		gcPauses: histSum(pauses), gcPauseMax: histMax(pauses),
		gcCycles: s1[2].Value.Uint64() - s0[2].Value.Uint64(),
		gcAssist: sec(3), gcCPU: sec(4),
		allocated: s1[5].Value.Uint64() - s0[5].Value.Uint64(),
		runDelay:  delay1 - delay0,
	}
}

// threadsRunDelay returns how long the process's threads have waited on
// a run queue, the sum of the second field of each thread's schedstat;
// 0 where there is none.
func threadsRunDelay() time.Duration {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum int64
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				sum += n
			}
		}
	}
	return time.Duration(sum)
}

// fleetCost is what a group of sessions costs, per session.
type fleetCost struct {
	heap, goroutines, files float64
	// connGoroutines and sockets serve the fake endpoint's connections,
	// both ends of them, which are in the same process.
	connGoroutines, sockets float64
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// footprint is what the process holds at one moment.
type footprint struct {
	heap                       int64
	goroutines, connGoroutines int
	files, sockets             int
}

// takeFootprint returns what the process holds, the heap after a full
// collection.
func takeFootprint() footprint {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u := footprint{heap: int64(ms.HeapInuse)}
	u.goroutines, u.connGoroutines = goroutines()
	u.files, u.sockets = openFiles()
	return u
}

// per returns the cost per session of n sessions: what u holds beyond
// base, divided by n.
func (u footprint) per(base footprint, n int) fleetCost {
	d := float64(max(n, 1))
	return fleetCost{
		heap:           float64(u.heap-base.heap) / d,
		goroutines:     float64(u.goroutines-base.goroutines) / d,
		connGoroutines: float64(u.connGoroutines-base.connGoroutines) / d,
		files:          float64(u.files-base.files) / d,
		sockets:        float64(u.sockets-base.sockets) / d,
	}
}

// connFrames are functions of net/http's connection goroutines: each
// connection to the fake endpoint has two on the client's side and one
// or two on the server's.
var connFrames = []string{"net/http.(*persistConn).readLoop", "net/http.(*persistConn).writeLoop", "net/http.(*conn).serve", "net/http.(*connReader).backgroundRead"}

// goroutines counts the process's goroutines, and those of them that
// serve the fake endpoint's connections, client and server side.
func goroutines() (all, conns int) {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return runtime.NumGoroutine(), 0
	}
	// debug=1: one record per distinct stack, "N @ pcs" then "#" lines.
	for rec := range strings.SplitSeq(b.String(), "\n\n") {
		var n int
		if _, err := fmt.Sscanf(rec, "%d @", &n); err != nil {
			continue
		}
		all += n
		if slices.ContainsFunc(connFrames, func(f string) bool { return strings.Contains(rec, f) }) {
			conns += n
		}
	}
	return all, conns
}

// openFiles counts the process's open file descriptors, and the sockets
// among them.
func openFiles() (all, sockets int) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1, -1
	}
	for _, e := range ents {
		if to, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(to, "socket:") {
			sockets++
		}
	}
	return len(ents), sockets
}

// cpuTimes returns the CPU time the process used, and its waited-for
// children (the commands bash ran).
func cpuTimes() (self, children time.Duration) {
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = tv(ru.Utime) + tv(ru.Stime)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = tv(ru.Utime) + tv(ru.Stime)
	}
	return self, children
}

// load1 returns the machine's 1-minute load average, or -1.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return -1
	}
	return f
}

// runFleet runs cfg.sessions sessions at once in one loop, each in a
// workspace of its own with a real file, every turn reading and editing
// it and running bash, against a fake endpoint on loopback; then it
// resumes cfg.idle sessions from copies of their logs and leaves them
// idle.
func runFleet(tb testing.TB, cfg fleetConfig) fleetResult {
	ctx := context.Background()
	ep := &fleetEndpoint{delay: cfg.delay, hold: 2, arrived: make(chan struct{}, cfg.sessions), release: make(chan struct{})}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	released := false
	releaseHeld := func() {
		if !released {
			released = true
			close(ep.release)
		}
	}
	defer releaseHeld()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.sessions}}
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
	logDir := filepath.Join(root, ".sessions")
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(all...),
		agent.WithStores(agent.Stores{Sessions: session.NewJSONL(logDir, session.StoreConfig{ReleaseIdle: true}), Files: fsys}),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{timedTools}, Model: []model.Middleware{timedModel}}))
	require.NoError(tb, err)
	defer loop.Close()

	workspace := func(i int) string { return filepath.Join(root, fmt.Sprintf("w%05d", i)) }
	base := takeFootprint()
	// The sessions are created before the run, a few at a time.
	sessions := make([]*agent.Session, cfg.sessions)
	var g errgroup.Group
	g.SetLimit(16)
	for i := range sessions {
		g.Go(func() error {
			dir := workspace(i)
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\nEND\n"), 0o644); err != nil {
				return err
			}
			s, err := loop.NewSession(ctx, session.Header{Cwd: dir})
			sessions[i] = s
			return err
		})
	}
	require.NoError(tb, g.Wait())

	var (
		res      fleetResult
		mu       sync.Mutex
		wg       sync.WaitGroup
		failures []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	res.load[0] = load1()
	rt0, delay0 := runtimeSample(), threadsRunDelay()
	cpu0, child0 := cpuTimes()
	start := time.Now()
	for i, s := range sessions {
		wg.Go(func() {
			var overhead, turnEnd []time.Duration
			var parts [numParts][]time.Duration
			for turn := range cfg.turns {
				clock := &stepClock{epoch: time.Now()}
				tctx := context.WithValue(ctx, clockKey{}, clock)
				var stepStart, callStart, callEnd int64
				var end *agent.TurnEnd
				for ev, err := range s.Run(tctx, "add a step to notes.txt and count its lines") {
					switch e := ev.(type) {
					case *agent.ToolCallStart:
						callStart = clock.now()
					case *agent.ToolCallEnd:
						callEnd = clock.now()
						if e.Result.IsError {
							mu.Lock()
							res.toolFailures = append(res.toolFailures, fmt.Sprintf("session %d: %s failed: %s", i, e.Call.Name, e.Result.Text()))
							mu.Unlock()
						}
					case *agent.StepEnd:
						now := clock.now()
						overhead = append(overhead, time.Duration(now-stepStart-clock.model.Swap(0)-clock.tools.Swap(0)))
						d := func(from, to int64) time.Duration { return time.Duration(to - from) }
						before := partBeforeModel
						if e.Step == 1 {
							before = partTurnStart
						}
						parts[before] = append(parts[before], d(stepStart, clock.modelStart.Load()))
						if e.ToolCalls == 0 {
							parts[partAnswerEnd] = append(parts[partAnswerEnd], d(clock.modelEnd.Load(), now))
						} else {
							parts[partCallLogged] = append(parts[partCallLogged], d(clock.modelEnd.Load(), callStart))
							parts[partToolLaunch] = append(parts[partToolLaunch], d(callStart, clock.toolStart.Load()))
							parts[partResultLogged] = append(parts[partResultLogged], d(clock.toolEnd.Load(), callEnd))
							parts[partStepEnd] = append(parts[partStepEnd], d(callEnd, now))
						}
						stepStart = now
					case *agent.TurnEnd:
						end = e
						turnEnd = append(turnEnd, time.Duration(clock.now()-stepStart))
						if err != nil {
							fail("session %d: turn ended with %v", i, err)
						}
					}
				}
				if end == nil || end.Reason != session.ReasonCompleted {
					fail("session %d: turn %d did not complete: %+v", i, turn, end)
				}
			}
			mu.Lock()
			res.overhead = append(res.overhead, overhead...)
			for p := range parts {
				res.parts[p] = append(res.parts[p], parts[p]...)
			}
			res.turnEnd = append(res.turnEnd, turnEnd...)
			res.steps += len(overhead)
			mu.Unlock()
		})
	}
	// Measure the fleet once every session waits in the first model call
	// of its second turn (or has failed).
	fleetDone := make(chan struct{})
	go func() { wg.Wait(); close(fleetDone) }()
	waiting := 0
wait:
	for waiting < cfg.sessions {
		select {
		case <-ep.arrived:
			waiting++
		case <-fleetDone:
			break wait
		}
	}
	res.active = takeFootprint().per(base, cfg.sessions)
	releaseHeld()
	<-fleetDone
	res.wall = time.Since(start)
	cpu1, child1 := cpuTimes()
	res.cpu, res.childCPU = cpu1-cpu0, child1-child0
	res.runtime = fleetRuntimeOver(rt0, runtimeSample(), delay0, threadsRunDelay())
	res.load[1] = load1()
	require.Empty(tb, failures)
	require.Equal(tb, cfg.sessions, waiting, "every session reached its second turn")

	// The files: every turn added a line.
	for i := range sessions {
		b, err := os.ReadFile(filepath.Join(workspace(i), "notes.txt"))
		require.NoError(tb, err)
		require.Equal(tb, cfg.turns, strings.Count(string(b), "step\n"), "session %d", i)
	}
	ids := make([]string, 0, cfg.sessions)
	for _, s := range sessions {
		ids = append(ids, s.Header().ID)
		require.NoError(tb, s.Close())
	}
	// Let go of the endpoint's connections, which are the test's.
	client.CloseIdleConnections()

	// Idle sessions: resumed from copies of the fleet's logs, so each
	// holds a history of cfg.turns turns, and none running.
	idleIDs := make([]string, cfg.idle)
	for i := range idleIDs {
		src := ids[i%len(ids)]
		idleIDs[i] = fmt.Sprintf("%s-idle%05d", src, i)
		b, err := os.ReadFile(filepath.Join(logDir, src+".jsonl"))
		require.NoError(tb, err)
		b = bytes.Replace(b, []byte(`"id":"`+src+`"`), []byte(`"id":"`+idleIDs[i]+`"`), 1)
		require.NoError(tb, os.WriteFile(filepath.Join(logDir, idleIDs[i]+".jsonl"), b, 0o600))
	}
	before := takeFootprint()
	idle := make([]*agent.Session, 0, cfg.idle)
	for _, id := range idleIDs {
		s, err := loop.ResumeSession(ctx, id)
		require.NoError(tb, err)
		idle = append(idle, s)
	}
	res.idle = takeFootprint().per(before, cfg.idle)
	if cfg.idle > 0 {
		// An idle session takes its log again for its next turn.
		s := idle[len(idle)-1]
		var end *agent.TurnEnd
		for ev := range s.Run(ctx, "add a step to notes.txt and count its lines") {
			if e, ok := ev.(*agent.TurnEnd); ok {
				end = e
			}
		}
		require.NotNil(tb, end)
		require.Equal(tb, session.ReasonCompleted, end.Reason, "%v", end.Err)
		b, err := os.ReadFile(filepath.Join(s.Header().Cwd, "notes.txt"))
		require.NoError(tb, err)
		assert.Equal(tb, cfg.turns+1, strings.Count(string(b), "step\n"))
		assert.Len(tb, s.Messages(), 1+8*(cfg.turns+1)-1, "the history it was resumed with, and the new turn")
	}
	for _, s := range idle {
		require.NoError(tb, s.Close())
	}
	client.CloseIdleConnections()
	// Closed sessions: what the loop keeps of them.
	res.closedHeapPer = float64(takeFootprint().heap-before.heap) / float64(max(1, cfg.idle+cfg.sessions))
	// Each closed session resumes with its history.
	s, err := loop.ResumeSession(ctx, ids[0])
	require.NoError(tb, err)
	assert.Len(tb, s.Messages(), 1+8*cfg.turns-1, "a user message, 3 calls and results, an answer per turn")
	require.NoError(tb, s.Close())
	return res
}

// TestManySessions runs sessions at once in one process against a fake
// endpoint, each turn reading and editing a real file and running real
// bash, and checks what an idle session holds (issue 38): no goroutine,
// no open file, and little memory. 20 sessions (200 idle) by default,
// 200 (2,000 idle) under HARNESS_LONG_TESTS=1; BenchmarkManySessions
// runs 1,000 (10,000 idle) and reports the figures.
func TestManySessions(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count open files")
	}
	leakcheck.Check(t)
	cfg := fleetConfig{sessions: longtest.Pick(20, 200), turns: 2, delay: longtest.Pick(5*time.Millisecond, 50*time.Millisecond), idle: longtest.Pick(200, 2000)}
	r := runFleet(t, cfg)
	assert.Empty(t, r.toolFailures)
	assert.Equal(t, cfg.sessions*cfg.turns*4, r.steps)
	t.Logf("%d sessions: %d steps in %v; overhead p50 %v p99 %v; active: %+v; idle: %+v; closed: %.0f B each",
		cfg.sessions, r.steps, r.wall, percentile(r.overhead, 0.5), percentile(r.overhead, 0.99), r.active, r.idle, r.closedHeapPer)
	assert.LessOrEqual(t, r.active.files-r.active.sockets, 1.0, "an active session waiting for its model holds its log, and no other file")
	// Beside each session's turn, the run has a goroutine or two of its
	// own; a goroutine per session would add 1.
	assert.Less(t, r.active.goroutines-r.active.connGoroutines, 1.5, "an active session waiting for its model runs no goroutine beside the one running its turn")
	assert.LessOrEqual(t, r.idle.goroutines, 0.0, "an idle session runs no goroutine")
	assert.LessOrEqual(t, r.idle.files, 0.0, "an idle session holds no open file")
	assert.Less(t, r.idle.heap, 50e3, "an idle session holds less than 50 KB")
}

// BenchmarkManySessions runs 1,000 sessions at once in one process, all
// running turns, each in a workspace of its own: every turn reads a real
// file, edits it and runs real bash (wc -l), against a fake endpoint on
// loopback whose answers take 1–3 s (2 s on average; a hosted model
// takes seconds to answer a step), for 3 turns of 4 steps. The fleet
// thus asks for about 1,000 steps every 2 s; steps/s says how many it
// got, and cores-used how much of the machine the process and its
// commands took (at 2 s a step, 1,000 sessions ask for more CPU than two
// cores have, and the p99 is time spent waiting for one). A fleet of
// 1,000 whose model answers in 3–9 s (6 s on average, closer to a hosted
// model's step) runs too. Then it resumes 10,000 sessions from copies of the fleet's logs
// and leaves them idle. A fleet of 100 (1,000 idle) runs beside it. Run
// it with -benchtime 1x: one iteration is the whole fleet.
//
// The loop's overhead of a step is the step's wall time (from the end of
// the step before, or the start of the turn, to its StepEnd event) minus
// the time spent in the model call (model middleware: from the call to
// the answer's last chunk) and in tool calls (tool middleware: from the
// call to its result). What is left is the loop's: building the request,
// decoding and checking the calls, the log's write-through appends,
// handing calls to goroutines and results back, and any wait for a CPU.
// The sync of the log at the end of a turn comes after the last step and
// is reported apart (turn-end: last StepEnd to TurnEnd).
//
// The overhead is split into parts, each reported as p50/p99 (one model
// call and at most one tool call a step): turn-start (from the turn's
// start to the first model call: the log taken again, the user's message
// written), before-model (from the step before to the model call),
// call-logged (the answer's last chunk to ToolCallStart: the answer and
// the call's start written), tool-launch (ToolCallStart to the tool
// middleware), result-logged (the tool's return to ToolCallEnd: the
// result handed back and written), step-end (ToolCallEnd to StepEnd) and
// answer-end (a last step's last chunk to StepEnd). Any part may hold a
// wait for a CPU or for the collector.
//
// Reported: steps/s; p50/p99 step overhead and its parts; p99 turn end;
// CPU per step of the process and of the commands it ran, and the
// machine's 1-minute load average at the start and end (above 2 the CPUs
// were shared, and the p99 shows it); what the runtime and the kernel
// saw over the run: the p50/p99 wait of a runnable goroutine for a P
// (sched-latency), collections, their pauses (total and longest), the
// bytes allocated per step (the whole process, the fake endpoint's side
// too), the share of the runtime's GC time spent in assists and of
// process CPU in GC (the runtime's estimates, high when the machine is
// overloaded), and how many of the process's threads waited for a CPU
// on average (threads-waiting-for-cpu, the kernel's schedstat: near 0 on
// a quiet machine); per session while every session waits in the first
// model call of its second turn (active: heap, goroutines, files, with
// the fake endpoint's connections, both ends, counted apart as conn
// goroutines and sockets); per idle session (heap, goroutines, files);
// and the heap per closed session.
func BenchmarkManySessions(b *testing.B) {
	for _, f := range []struct {
		name  string
		n     int
		delay time.Duration
	}{
		{"sessions=100", 100, 2 * time.Second},
		{"sessions=1000", 1000, 2 * time.Second},
		{"sessions=1000,model=6s", 1000, 6 * time.Second},
	} {
		n := f.n
		b.Run(f.name, func(b *testing.B) {
			cfg := fleetConfig{sessions: n, turns: 3, delay: f.delay, idle: 10 * n}
			for b.Loop() {
				r := runFleet(b, cfg)
				for _, f := range r.toolFailures {
					b.Log(f)
				}
				b.ReportMetric(float64(len(r.toolFailures)), "tool-failures")
				b.ReportMetric(float64(r.steps)/r.wall.Seconds(), "steps/s")
				b.ReportMetric(float64(percentile(r.overhead, 0.5).Microseconds()), "p50-overhead-µs")
				b.ReportMetric(float64(percentile(r.overhead, 0.99).Microseconds()), "p99-overhead-µs")
				b.ReportMetric(float64(percentile(r.turnEnd, 0.99).Microseconds()), "p99-turn-end-µs")
				for p, name := range partNames {
					b.ReportMetric(float64(percentile(r.parts[p], 0.5).Microseconds()), "p50-"+name+"-µs")
					b.ReportMetric(float64(percentile(r.parts[p], 0.99).Microseconds()), "p99-"+name+"-µs")
				}
				rt := r.runtime
				b.ReportMetric(float64(rt.schedP50.Microseconds()), "p50-sched-latency-µs")
				b.ReportMetric(float64(rt.schedP99.Microseconds()), "p99-sched-latency-µs")
				b.ReportMetric(float64(rt.gcCycles), "gc-cycles")
				b.ReportMetric(float64(rt.allocated)/1e3/float64(max(1, r.steps)), "alloc-KB/step")
				b.ReportMetric(float64(rt.gcPauses.Microseconds())/1e3, "gc-pause-total-ms")
				b.ReportMetric(float64(rt.gcPauseMax.Microseconds()), "gc-pause-max-µs")
				b.ReportMetric(rt.gcAssist.Seconds()/rt.gcCPU.Seconds(), "gc-assist-share")
				b.ReportMetric(rt.gcCPU.Seconds()/r.cpu.Seconds(), "gc-cpu-share")
				b.ReportMetric(rt.runDelay.Seconds()/r.wall.Seconds(), "threads-waiting-for-cpu")
				b.ReportMetric(float64(r.cpu.Microseconds())/1e3/float64(max(1, r.steps)), "cpu-ms/step")
				b.ReportMetric(float64(r.childCPU.Microseconds())/1e3/float64(max(1, r.steps)), "child-cpu-ms/step")
				b.ReportMetric((r.cpu+r.childCPU).Seconds()/r.wall.Seconds(), "cores-used")
				b.ReportMetric(r.load[0], "load1-start")
				b.ReportMetric(r.load[1], "load1-end")
				b.ReportMetric(r.active.heap, "active-heap-B/session")
				b.ReportMetric(r.active.goroutines, "active-goroutines/session")
				b.ReportMetric(r.active.connGoroutines, "active-conn-goroutines/session")
				b.ReportMetric(r.active.files, "active-files/session")
				b.ReportMetric(r.active.sockets, "active-sockets/session")
				b.ReportMetric(r.idle.heap, "idle-heap-B/session")
				b.ReportMetric(r.idle.goroutines, "idle-goroutines/session")
				b.ReportMetric(r.idle.files, "idle-files/session")
				b.ReportMetric(r.closedHeapPer, "closed-heap-B/session")
			}
		})
	}
}
