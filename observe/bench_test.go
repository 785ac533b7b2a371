package observe_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/observe"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

const benchSteps = 20

// instant answers with one tool call per step, then with text at the
// end of each turn of benchSteps steps.
type instant struct{ n int }

func (m *instant) Info() model.Info { return model.Info{Name: "instant"} }

func (m *instant) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	m.n++
	var cs []model.Chunk
	if m.n%benchSteps == 0 {
		cs = []model.Chunk{{Type: model.ChunkText, Text: "done"}, {Type: model.ChunkFinish, Finish: model.FinishStop}}
	} else {
		cs = []model.Chunk{
			{Type: model.ChunkText, Text: "calling"},
			{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{ID: fmt.Sprintf("c%d", m.n), Name: "echo", Arguments: `{"text`}},
			{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Arguments: `":"a"}`}},
			{Type: model.ChunkUsage, Usage: harness.Usage{InputTokens: 1000, OutputTokens: 20}},
			{Type: model.ChunkFinish, Finish: model.FinishToolCalls},
		}
	}
	return func(yield func(model.Chunk, error) bool) {
		for _, c := range cs {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// BenchmarkStep measures one loop step (a model call and a tool call)
// with tracing off and with a real SDK TracerProvider exporting to a
// no-op exporter; ns/step is the figure to compare.
func BenchmarkStep(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "off"
		if traced {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			opts := []agent.Option{agent.WithModel(&instant{}), agent.WithTools(testTools()[0]), agent.WithLimits(agent.Limits{MaxSteps: benchSteps})}
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
				defer tp.Shutdown(context.Background())
				hooks, err := observe.New(observe.Config{TracerProvider: tp})
				if err != nil {
					b.Fatal(err)
				}
				opts = append([]agent.Option{agent.WithHooks(hooks)}, opts...)
			}
			loop, err := agent.New(opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer loop.Close()
			ctx := context.Background()
			steps := 0
			b.ResetTimer()
			for steps < b.N {
				sess, err := loop.NewSession(ctx, session.Header{})
				if err != nil {
					b.Fatal(err)
				}
				for ev, err := range sess.Run(ctx, "go") {
					if err != nil {
						b.Fatal(err)
					}
					if _, ok := ev.(*agent.StepEnd); ok {
						steps++
					}
				}
				sess.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
		})
	}
}

var _ tools.Tool = testTools()[0]
