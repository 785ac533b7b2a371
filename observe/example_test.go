package observe_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/observe"
	"github.com/go-harness/harness/session"
)

// A loop traced into an in-memory exporter: one span for the turn and
// one for its model call.
func ExampleNew() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	hooks, err := observe.New(observe.Config{TracerProvider: tp, ProviderName: "deepseek"})
	if err != nil {
		fmt.Println(err)
		return
	}
	loop, err := agent.New(agent.WithHooks(hooks), agent.WithModel(replay.NewScripted(replay.Response{Text: "hello"})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	sess, err := loop.NewSession(context.Background(), session.Header{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range sess.Run(context.Background(), "hi") {
	}
	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name)
	}
	// Output:
	// chat scripted
	// invoke_agent harness
}
