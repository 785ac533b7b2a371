package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
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
// same loop written by hand. Both write every record through to a file
// and sync once per turn of 50 steps; opening and closing sessions is not
// timed. The difference per step is the harness's overhead: event
// logging, request fingerprints, argument validation, dispatch, events.
func BenchmarkLoopStep(b *testing.B) {
	b.Run("harness", func(b *testing.B) {
		llm := &instantModel{}
		loop, err := agent.New(agent.WithModel(llm), agent.WithTools(noopTool()),
			agent.WithStores(agent.Stores{Sessions: session.NewJSONL(b.TempDir(), session.StoreConfig{})}), agent.WithLimits(agent.Limits{MaxSteps: stepsPerTurn}))
		require.NoError(b, err)
		defer loop.Close()
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		steps := 0
		for steps < b.N {
			b.StopTimer() // creating a session is not part of a step
			s, err := loop.NewSession(ctx, session.Header{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			for ev, err := range s.Run(ctx, "go") {
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := ev.(*agent.StepEnd); ok {
					steps++
				}
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
	b.Run("by_hand", func(b *testing.B) {
		llm := &instantModel{}
		tool := noopTool()
		dir := b.TempDir()
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		steps := 0
		for turn := 0; steps < b.N; turn++ {
			b.StopTimer()
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.jsonl", turn)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			w := bufio.NewWriter(f)
			logLine := func(v any) {
				line, _ := json.Marshal(v)
				w.Write(append(line, '\n'))
				w.Flush() // written through, as the harness does
			}
			msgs := []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("go")}}}
			logLine(msgs[0])
			for {
				var asm model.Assembler
				for c := range llm.Stream(ctx, &model.Request{Messages: msgs}) {
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
					res, err := tool.Execute(ctx, &tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
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
			f.Sync() // the harness syncs at every turn end
			b.StopTimer()
			f.Close()
			b.StartTimer()
		}
	})
}
