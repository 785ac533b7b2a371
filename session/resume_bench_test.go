package session

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-harness/harness"
)

// writeResumeLog writes a log of n events shaped like a coding session:
// turns of a user message, then steps of a model request, an assistant
// message with reasoning, text and two tool calls, their starts and
// results (multi-line output, file access records, render data), and a
// turn end. It returns the store, the file's size and the number of
// events (n or a few more).
func writeResumeLog(tb testing.TB, n int) (*jsonlStore, int64, int) {
	tb.Helper()
	s := newJSONL(tb.TempDir(), StoreConfig{})
	ctx := context.Background()
	log, err := s.Create(ctx, Header{ID: "resume", Cwd: "/w"})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while func main returns err nil if for range package import")
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(words[rng.IntN(len(words))])
			if i%12 == 11 {
				b.WriteString("\n\t")
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	var batch []Payload
	count, step := 0, 0
	add := func(p Payload) {
		batch = append(batch, p)
		count++
	}
	for count < n {
		step++
		switch {
		case step%20 == 1:
			add(&UserMessage{Content: []harness.Block{harness.TextBlock(text(30))}})
		case step%20 == 0:
			add(&TurnEnded{Reason: ReasonCompleted, Steps: 19, Usage: harness.Usage{InputTokens: 90000, OutputTokens: 4000}})
		default:
			add(&ModelRequest{Step: step, Model: "m", Fingerprint: Fingerprint{System: "aa", Tools: "bb", History: "cc", Messages: step * 3}})
			id1, id2 := fmt.Sprintf("call_%d_a", step), fmt.Sprintf("call_%d_b", step)
			add(&AssistantMessage{Step: step, Model: "m", Finish: "tool_calls", Usage: &harness.Usage{InputTokens: 5000, OutputTokens: 200, CacheHitTokens: 4800, CacheMissTokens: 200},
				Content: []harness.Block{
					{Type: harness.BlockReasoning, Text: text(25)},
					harness.TextBlock(text(10)),
					{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id1, Name: "read_file", Arguments: `{"path":"src/main.go","offset":1,"limit":200}`}},
					{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id2, Name: "bash", Arguments: `{"command":"go test ./... 2>&1 | tail -20"}`}},
				}})
			add(&ToolStarted{Step: step, CallID: id1, Name: "read_file"})
			add(&ToolStarted{Step: step, CallID: id2, Name: "bash"})
			add(&ToolFinished{Step: step, CallID: id1, Name: "read_file", DurationMS: 2, Result: harness.ToolResult{
				Content: []harness.Block{harness.TextBlock(text(60))},
				Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "Read src/main.go"},
				Files:   []harness.FileAccess{{Op: harness.FileRead, Path: "/w/src/main.go", Version: "v1", StartLine: 1, EndLine: 200}},
			}})
			code := 0
			add(&ToolFinished{Step: step, CallID: id2, Name: "bash", DurationMS: 900, Result: harness.ToolResult{
				Content: []harness.Block{harness.TextBlock(text(40))},
				Render:  &harness.Render{Kind: harness.RenderTerminal, Title: "go test", Terminal: &harness.Terminal{Command: "go test ./...", ExitCode: &code, Status: "exited"}},
			}})
		}
		if len(batch) >= 64 || count >= n {
			if _, err := log.Append(ctx, batch...); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := log.Close(); err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(s.path("resume"))
	if err != nil {
		tb.Fatal(err)
	}
	return s, fi.Size(), count
}

// heapBytes is the live and not yet collected heap.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakHeap runs fn once and returns the most heap it saw in use above
// what was in use before, sampled every 200µs, and the heap fn's result
// keeps alive after a collection.
func peakHeap(fn func() any) (peak, kept uint64) {
	runtime.GC()
	base := heapBytes()
	var mu sync.Mutex
	high := base
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if h := heapBytes(); h > high {
					mu.Lock()
					high = h
					mu.Unlock()
				}
			}
		}
	}()
	res := fn()
	close(stop)
	<-done
	if h := heapBytes(); h > high {
		high = h
	}
	runtime.GC()
	kept = heapBytes() - min(base, heapBytes())
	runtime.KeepAlive(res)
	return high - base, kept
}

// BenchmarkResume measures what resuming a session costs: loading a log
// of 100,000 events (HARNESS_LONG_TESTS unset: 20,000) and building its
// history, beside a plain typed encoding/json Decoder pass over the same
// file. Both report MB/s of log; the load also reports its peak heap and
// the heap its transcript and history keep (peak-x is their ratio).
func BenchmarkResume(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	s, size, n := writeResumeLog(b, n)
	ctx := context.Background()
	load := func() any {
		tr, err := s.Load(ctx, "resume")
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Events) != n || len(tr.Warnings) != 0 {
			b.Fatalf("loaded %d events, %d warnings", len(tr.Events), len(tr.Warnings))
		}
		h := new(History).Add(tr.Events...)
		return []any{tr, h}
	}
	b.Run("jsonl_load_and_history", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			load()
		}
		b.StopTimer()
		peak, kept := peakHeap(load)
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		b.ReportMetric(float64(kept)/(1<<20), "kept-MiB")
		b.ReportMetric(float64(peak)/float64(kept), "peak-x")
	})
	b.Run("encoding_json_decoder", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Open(s.path("resume"))
			if err != nil {
				b.Fatal(err)
			}
			dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
			var h headerLine
			if err := dec.Decode(&h); err != nil {
				b.Fatal(err)
			}
			events := 0
			for dec.More() {
				var e Event
				if err := dec.Decode(&e); err != nil {
					b.Fatal(err)
				}
				events++
			}
			f.Close()
			if events != n {
				b.Fatalf("decoded %d events", events)
			}
		}
	})
}
