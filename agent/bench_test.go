package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// stepsPerTurn bounds the history both loops carry, so a step costs the
// same at any b.N.
const stepsPerTurn = 50

type noopIn struct {
	Path string `json:"path"`
}

func noopTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "noop", Description: "Does nothing.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in noopIn) (*harness.ToolResult, error) {
			return harness.TextResult("ok " + in.Path), nil
		})
}

// instantModel answers every call with one tool call until the turn has
// made stepsPerTurn-1 calls, then with text.
type instantModel struct{ n int }

func (m *instantModel) Info() model.Info { return model.Info{Name: "instant"} }

func (m *instantModel) chunks() []model.Chunk {
	m.n++
	if m.n%stepsPerTurn == 0 {
		return []model.Chunk{{Type: model.ChunkText, Text: "done"}, {Type: model.ChunkFinish, Finish: model.FinishStop}}
	}
	id := fmt.Sprintf("c%d", m.n)
	return []model.Chunk{
		{Type: model.ChunkText, Text: "calling"},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{ID: id, Name: "noop", Arguments: `{"path"`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Arguments: `:"a.go"}`}},
		{Type: model.ChunkUsage, Usage: harness.Usage{InputTokens: 1000, OutputTokens: 20}},
		{Type: model.ChunkFinish, Finish: model.FinishToolCalls},
	}
}

func (m *instantModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	cs := m.chunks()
	return func(yield func(model.Chunk, error) bool) {
		for _, c := range cs {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// BenchmarkLoopStep measures one step (a model call answered instantly and
// a no-op tool call) of the harness loop with JSONL logging, beside the
// same loop written by hand twice, interleaved: each iteration runs one
// turn of stepsPerTurn steps of each, in alternating order, so the ratios
// come out of one run.
//
// The first hand loop (by_hand) logs each message as a JSON line written
// through to a file, as a minimal client would. The second (logged_hand)
// keeps a log as durable as the harness's, with the same writes: records
// numbered and timed, the user's message written before the first model
// call, each answer written with the starts of its calls before any runs,
// each result as it arrives, the end of the turn with the last answer.
// All three sync the log and its directory at the end of the turn;
// opening and closing sessions is not timed, and neither are the syncs
// (timed apart, they are the disk's cost, the same for all, and on a busy
// disk they would hide the loop's). The difference per step is the
// harness's overhead: request fingerprints, argument validation, the
// backstop that runs each call on a goroutine it can abandon, events.
//
// It reports the ns/step of each (harness-, by_hand-, logged_hand-), the
// ratios harness/by_hand and harness/logged_hand, the same for the
// process's CPU time (cpu-), and the heap allocations of each per step
// (-allocs/step).
func BenchmarkLoopStep(b *testing.B) {
	llm := &instantModel{}
	store := &syncTimer{Store: session.NewJSONL(b.TempDir(), session.StoreConfig{})}
	loop, err := agent.New(agent.WithModel(llm), agent.WithTools(noopTool()),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithLimits(agent.Limits{MaxSteps: stepsPerTurn}))
	require.NoError(b, err)
	defer loop.Close()
	ctx := context.Background()
	harnessTurn := func() (time.Duration, time.Duration) {
		s, err := loop.NewSession(ctx, session.Header{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		steps := 0
		store.synced, store.syncCPU = 0, 0
		start, cpu := time.Now(), cpuTime()
		for ev, err := range s.Run(ctx, "go") {
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := ev.(*agent.StepEnd); ok {
				steps++
			}
		}
		d, c := time.Since(start)-store.synced, cpuTime()-cpu-store.syncCPU
		if steps != stepsPerTurn {
			b.Fatalf("the harness took %d steps, want %d", steps, stepsPerTurn)
		}
		return d, c
	}
	hand := &handLoop{llm: &instantModel{}, tool: noopTool(), dir: b.TempDir()}
	byHandTurn := func() (time.Duration, time.Duration) {
		d, c, steps := hand.turn(b)
		if steps != stepsPerTurn {
			b.Fatalf("the hand loop took %d steps, want %d", steps, stepsPerTurn)
		}
		return d, c
	}
	logged := &loggedHandLoop{llm: &instantModel{}, tool: noopTool(), dir: b.TempDir()}
	loggedTurn := func() (time.Duration, time.Duration) {
		d, c, steps := logged.turn(b)
		if steps != stepsPerTurn {
			b.Fatalf("the logging hand loop took %d steps, want %d", steps, stepsPerTurn)
		}
		return d, c
	}
	var tHarness, tHand, tLogged, cHarness, cHand, cLogged time.Duration
	var aHarness, aHand, aLogged uint64
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	allocated := func() uint64 {
		metrics.Read(allocs)
		return allocs[0].Value.Uint64()
	}
	add := func(t, c *time.Duration, a *uint64, f func() (time.Duration, time.Duration)) {
		before := allocated()
		dt, dc := f()
		*a += allocated() - before
		*t += dt
		*c += dc
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i%2 == 0 {
			add(&tHarness, &cHarness, &aHarness, harnessTurn)
			add(&tHand, &cHand, &aHand, byHandTurn)
			add(&tLogged, &cLogged, &aLogged, loggedTurn)
		} else {
			add(&tLogged, &cLogged, &aLogged, loggedTurn)
			add(&tHand, &cHand, &aHand, byHandTurn)
			add(&tHarness, &cHarness, &aHarness, harnessTurn)
		}
		i++
	}
	steps := float64(b.N * stepsPerTurn)
	b.ReportMetric(float64(tHarness.Nanoseconds())/steps, "harness-ns/step")
	b.ReportMetric(float64(tHand.Nanoseconds())/steps, "by_hand-ns/step")
	b.ReportMetric(float64(tLogged.Nanoseconds())/steps, "logged_hand-ns/step")
	b.ReportMetric(float64(tHarness)/float64(tHand), "harness/by_hand")
	b.ReportMetric(float64(tHarness)/float64(tLogged), "harness/logged_hand")
	b.ReportMetric(float64(cHarness)/float64(cHand), "cpu-harness/by_hand")
	b.ReportMetric(float64(cHarness)/float64(cLogged), "cpu-harness/logged_hand")
	b.ReportMetric(float64(aHarness)/steps, "harness-allocs/step")
	b.ReportMetric(float64(aHand)/steps, "by_hand-allocs/step")
	b.ReportMetric(float64(aLogged)/steps, "logged_hand-allocs/step")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syncTimer is a store whose logs add the time (wall and CPU) their Sync
// calls take to synced and syncCPU, so a benchmark can leave it out.
type syncTimer struct {
	session.Store
	synced, syncCPU time.Duration
}

func (s *syncTimer) Create(ctx context.Context, h session.Header) (session.Log, error) {
	l, err := s.Store.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	return &timedLog{Log: l, st: s}, nil
}

type timedLog struct {
	session.Log
	st *syncTimer
}

// Defer passes the store's deferral on (session.Deferrer): without it
// the loop would write each record on its own, which the store it wraps
// does not make it do.
func (l *timedLog) Defer(ctx context.Context, p ...session.Payload) ([]session.Event, error) {
	return l.Log.(session.Deferrer).Defer(ctx, p...)
}

func (l *timedLog) Sync() error {
	start, cpu := time.Now(), cpuTime()
	err := l.Log.Sync()
	l.st.synced += time.Since(start)
	l.st.syncCPU += cpuTime() - cpu
	return err
}

// handLoop is the loop of BenchmarkLoopStep written by hand: the same
// model and tool, every message logged as a JSON line written through to
// a file, the file synced at the end of the turn.
type handLoop struct {
	llm  *instantModel
	tool tools.Tool
	dir  string
	n    int
}

// newTurnLog creates the log file of a hand loop's nth turn in dir.
func newTurnLog(b *testing.B, dir string, n int) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.jsonl", n)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// turn runs one turn in a new log file and returns how long it took and
// the CPU time it used (opening, syncing and closing the file not
// counted), and its steps.
func (h *handLoop) turn(b *testing.B) (time.Duration, time.Duration, int) {
	ctx := context.Background()
	h.n++
	f := newTurnLog(b, h.dir, h.n)
	defer f.Close()
	start, cpu := time.Now(), cpuTime()
	w := bufio.NewWriter(f)
	logLine := func(v any) {
		line, _ := json.Marshal(v)
		w.Write(append(line, '\n'))
		w.Flush() // written through, as the harness does
	}
	msgs := []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("go")}}}
	logLine(msgs[0])
	steps := 0
	for {
		var asm model.Assembler
		for c := range h.llm.Stream(ctx, &model.Request{Messages: msgs}) {
			asm.Add(c)
		}
		msg := asm.Message()
		msgs = append(msgs, msg)
		logLine(msg)
		steps++
		calls := msg.ToolCalls()
		if len(calls) == 0 {
			break
		}
		for _, c := range calls {
			start := time.Now()
			res, err := h.tool.Execute(ctx, &tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			if err != nil {
				b.Fatal(err)
			}
			rm := harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult,
				ToolResult: &harness.ToolResult{CallID: c.ID, Name: c.Name, Content: res.Content}}}}
			msgs = append(msgs, rm)
			logLine(struct {
				harness.Message
				Ms int64
			}{rm, time.Since(start).Milliseconds()})
		}
	}
	d, c := time.Since(start), cpuTime()-cpu
	// The harness syncs at every turn end, and the first time the
	// directory a new log was created in, as a new file needs to last.
	f.Sync()
	if dir, err := os.Open(h.dir); err == nil {
		dir.Sync()
		dir.Close()
	}
	return d, c, steps
}

// loggedHandLoop is the loop of BenchmarkLoopStep written by hand with a
// log as durable as the harness's (see "Durability" in the package
// documentation), in as many writes: one JSON line per record, numbered
// and timed; the user's message written before the first model call;
// each answer held back and written with the starts of its calls, before
// any of them runs; each result written as it arrives; the turn's end
// written with its last answer, and the file synced.
type loggedHandLoop struct {
	llm  *instantModel
	tool tools.Tool
	dir  string
	n    int
}

// handRecord is one line of loggedHandLoop's log.
type handRecord struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	Data any       `json:"data"`
}

// turn runs one turn in a new log file and returns how long it took and
// the CPU time it used (opening, syncing and closing the file not
// counted), and its steps.
func (h *loggedHandLoop) turn(b *testing.B) (time.Duration, time.Duration, int) {
	ctx := context.Background()
	h.n++
	f := newTurnLog(b, h.dir, h.n)
	defer f.Close()
	start, cpu := time.Now(), cpuTime()
	var (
		seq int64
		buf []byte
	)
	// add encodes a record after those held back; write writes them all.
	add := func(typ string, data any) {
		seq++
		line, err := json.Marshal(handRecord{Seq: seq, Time: time.Now().UTC(), Type: typ, Data: data})
		if err != nil {
			b.Fatal(err)
		}
		buf = append(append(buf, line...), '\n')
	}
	write := func() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		buf = buf[:0]
	}
	msgs := []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("go")}}}
	add("user", msgs[0])
	write()
	steps := 0
	for {
		var asm model.Assembler
		for c := range h.llm.Stream(ctx, &model.Request{Messages: msgs}) {
			asm.Add(c)
		}
		msg := asm.Message()
		msgs = append(msgs, msg)
		steps++
		add("assistant", struct {
			Step int `json:"step"`
			harness.Message
		}{steps, msg})
		calls := msg.ToolCalls()
		if len(calls) == 0 {
			break
		}
		for _, c := range calls {
			add("tool_start", struct {
				Step   int    `json:"step"`
				CallID string `json:"call_id"`
				Name   string `json:"name"`
			}{steps, c.ID, c.Name})
		}
		write() // the answer and the starts, before any call runs
		for _, c := range calls {
			start := time.Now()
			res, err := h.tool.Execute(ctx, &tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			if err != nil {
				b.Fatal(err)
			}
			rm := harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult,
				ToolResult: &harness.ToolResult{CallID: c.ID, Name: c.Name, Content: res.Content}}}}
			msgs = append(msgs, rm)
			add("tool_result", struct {
				Step       int                `json:"step"`
				CallID     string             `json:"call_id"`
				Name       string             `json:"name"`
				Result     harness.ToolResult `json:"result"`
				DurationMS int64              `json:"duration_ms"`
			}{steps, c.ID, c.Name, *res, time.Since(start).Milliseconds()})
			write()
		}
	}
	add("turn_end", struct {
		Reason string `json:"reason"`
		Steps  int    `json:"steps"`
	}{"completed", steps})
	write() // the last answer and the end
	d, c := time.Since(start), cpuTime()-cpu
	f.Sync()
	if dir, err := os.Open(h.dir); err == nil {
		dir.Sync()
		dir.Close()
	}
	return d, c, steps
}
