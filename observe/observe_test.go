package observe_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/observe"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type echoIn struct {
	Text string `json:"text"`
}

func testTools() []tools.Tool {
	echo := tools.Define(tools.Spec{Name: "echo", Description: "Echo text."}, func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
		return harness.TextResult(in.Text), nil
	})
	fail := tools.Define(tools.Spec{Name: "fail", Description: "Always fails."}, func(ctx context.Context, call *tools.Call, in echoIn) (*harness.ToolResult, error) {
		return nil, errors.New("it broke")
	})
	return []tools.Tool{echo, fail}
}

// script: step 1 fails once with 500 and then asks for three calls;
// step 2 answers.
func script() *openaitest.Server {
	return openaitest.NewServer(
		openaitest.Reply{Status: 500, Body: `{"error":{"message":"boom"}}`},
		openaitest.Reply{Chunks: []openaitest.Chunk{
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "c1", Name: "echo", Arguments: `{"text":"one"}`}},
			{ToolCall: &model.ToolCallDelta{Index: 1, ID: "c2", Name: "fail", Arguments: `{"text":"two"}`}},
			{ToolCall: &model.ToolCallDelta{Index: 2, ID: "c3", Name: "echo", Arguments: `{"text":"three"}`}},
			{Finish: "tool_calls"},
			{Usage: &harness.Usage{InputTokens: 1000, OutputTokens: 200, CacheHitTokens: 600, CacheMissTokens: 400}},
		}},
		openaitest.Reply{Chunks: []openaitest.Chunk{
			{Text: "done, secret-in-answer"}, {Finish: "stop"},
			{Usage: &harness.Usage{InputTokens: 2000, OutputTokens: 100, CacheHitTokens: 1500, CacheMissTokens: 500}},
		}},
	)
}

type run struct {
	spans   tracetest.SpanStubs
	metrics metricdata.ResourceMetrics
	end     *agent.TurnEnd
	usages  []*agent.ModelUsage
	srv     *openaitest.Server
	sess    *agent.Session
}

// runTurn runs one turn of a traced loop; content records message
// content (Config.Content).
func runTurn(t *testing.T, content bool, opts ...agent.Option) run {
	t.Helper()
	srv := script()
	t.Cleanup(srv.Close)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Model: "deepseek-chat"})
	require.NoError(t, err)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	hooks, err := observe.New(observe.Config{TracerProvider: tp, MeterProvider: mp, ProviderName: "deepseek", Content: content})
	require.NoError(t, err)
	all := append([]agent.Option{agent.WithHooks(hooks)}, agent.WithModel(m), agent.WithTools(testTools()...), agent.WithSystemPrompt("be brief"),
		agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}))
	loop, err := agent.New(append(all, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	sess, err := loop.NewSession(t.Context(), session.Header{})
	require.NoError(t, err)
	var r run
	for ev, err := range sess.Run(t.Context(), "hello, my key is sk-SECRET") {
		switch e := ev.(type) {
		case *agent.TurnEnd:
			require.NoError(t, err)
			r.end = e
		case *agent.ModelUsage:
			r.usages = append(r.usages, e)
		}
	}
	r.spans = exp.GetSpans()
	require.NoError(t, reader.Collect(t.Context(), &r.metrics))
	r.srv, r.sess = srv, sess
	return r
}

func attrs(kvs []attribute.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

func TestSpanTree(t *testing.T) {
	r := runTurn(t, false)
	var names []string
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range r.spans {
		names = append(names, s.Name)
		byName[s.Name] = append(byName[s.Name], s)
	}
	assert.ElementsMatch(t, []string{"invoke_agent harness", "chat deepseek-chat", "chat deepseek-chat", "chat deepseek-chat",
		"execute_tool echo", "execute_tool fail", "execute_tool echo"}, names)
	root := byName["invoke_agent harness"][0]
	assert.False(t, root.Parent.IsValid(), "the turn span is the root")
	for _, s := range r.spans {
		if s.Name != root.Name {
			assert.Equal(t, root.SpanContext.SpanID(), s.Parent.SpanID(), "%s is a child of the turn", s.Name)
			assert.Equal(t, root.SpanContext.TraceID(), s.SpanContext.TraceID())
		}
	}
	ra := attrs(root.Attributes)
	assert.Equal(t, "invoke_agent", ra["gen_ai.operation.name"])
	assert.Equal(t, "deepseek", ra["gen_ai.provider.name"])
	assert.Equal(t, "deepseek-chat", ra["gen_ai.request.model"])
	assert.Equal(t, r.sess.Header().ID, ra["gen_ai.conversation.id"])
	assert.Equal(t, int64(3000), ra["gen_ai.usage.input_tokens"])
	assert.Equal(t, int64(300), ra["gen_ai.usage.output_tokens"])
	assert.Equal(t, int64(2100), ra["gen_ai.usage.cache_read.input_tokens"])
	assert.Equal(t, int64(2), ra["harness.turn.steps"])
	assert.Equal(t, "completed", ra["harness.turn.reason"])
	require.Len(t, root.Events, 1)
	assert.Equal(t, "harness.retry", root.Events[0].Name)
	assert.Equal(t, "server", attrs(root.Events[0].Attributes)["error.type"])

	chats := byName["chat deepseek-chat"]
	failed, ok := 0, 0
	for _, c := range chats {
		a := attrs(c.Attributes)
		assert.Equal(t, "chat", a["gen_ai.operation.name"])
		if a["error.type"] != nil {
			failed++
			assert.Equal(t, "server", a["error.type"])
			assert.Equal(t, "Error", c.Status.Code.String())
			continue
		}
		ok++
		assert.Contains(t, []any{int64(1000), int64(2000)}, a["gen_ai.usage.input_tokens"])
		assert.NotNil(t, a["gen_ai.response.finish_reasons"])
		assert.Nil(t, a["gen_ai.input.messages"], "content is off by default")
		assert.Nil(t, a["gen_ai.output.messages"])
		assert.Nil(t, a["gen_ai.system_instructions"])
	}
	assert.Equal(t, 1, failed)
	assert.Equal(t, 2, ok)

	for _, s := range r.spans {
		if !strings.HasPrefix(s.Name, "execute_tool") {
			continue
		}
		a := attrs(s.Attributes)
		assert.Equal(t, "execute_tool", a["gen_ai.operation.name"])
		assert.Contains(t, []any{"c1", "c2", "c3"}, a["gen_ai.tool.call.id"])
		assert.Nil(t, a["gen_ai.tool.call.arguments"], "content is off by default")
		assert.Nil(t, a["gen_ai.tool.call.result"])
		if a["gen_ai.tool.name"] == "fail" {
			assert.Equal(t, "tool_failed", a["error.type"])
		} else {
			assert.Nil(t, a["error.type"])
		}
	}
}

func TestContentOptIn(t *testing.T) {
	r := runTurn(t, true)
	var in, out, args int
	for _, s := range r.spans {
		a := attrs(s.Attributes)
		if v, ok := a["gen_ai.input.messages"].(string); ok {
			in++
			assert.Contains(t, v, "sk-SECRET")
			assert.Equal(t, "be brief", a["gen_ai.system_instructions"])
		}
		if v, ok := a["gen_ai.output.messages"].(string); ok && strings.Contains(v, "secret-in-answer") {
			out++
		}
		if _, ok := a["gen_ai.tool.call.arguments"].(string); ok {
			args++
			assert.NotNil(t, a["gen_ai.tool.call.result"])
		}
	}
	assert.Equal(t, 3, in, "every attempt records its input")
	assert.Equal(t, 1, out)
	assert.Equal(t, 3, args)
}

func TestMetrics(t *testing.T) {
	r := runTurn(t, false)
	found := map[string]metricdata.Aggregation{}
	for _, sm := range r.metrics.ScopeMetrics {
		for _, m := range sm.Metrics {
			found[m.Name] = m.Data
		}
	}
	tok, ok := found["gen_ai.client.token.usage"].(metricdata.Histogram[int64])
	require.True(t, ok)
	sums := map[string]int64{}
	for _, dp := range tok.DataPoints {
		v, _ := dp.Attributes.Value("gen_ai.token.type")
		sums[v.AsString()] += dp.Sum
	}
	assert.Equal(t, map[string]int64{"input": 3000, "output": 300}, sums)
	dur, ok := found["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
	require.True(t, ok)
	var calls uint64
	for _, dp := range dur.DataPoints {
		calls += dp.Count
	}
	assert.Equal(t, uint64(3), calls, "two answers and one failure")
	counts, ok := found["harness.tool.calls"].(metricdata.Sum[int64])
	require.True(t, ok)
	byTool := map[string]int64{}
	for _, dp := range counts.DataPoints {
		n, _ := dp.Attributes.Value("gen_ai.tool.name")
		o, _ := dp.Attributes.Value("harness.tool.outcome")
		byTool[n.AsString()+"/"+o.AsString()] += dp.Value
	}
	assert.Equal(t, map[string]int64{"echo/ok": 2, "fail/error": 1}, byTool)
	_, ok = found["harness.tool.duration"].(metricdata.Histogram[float64])
	assert.True(t, ok)
}

func TestCost(t *testing.T) {
	// A table without off-peak hours, so the cost does not depend on when
	// the test runs.
	prices, err := pricing.NewTable("USD", map[string]pricing.Price{"deepseek-chat": {Input: 0.28, CacheHit: 0.028, Output: 0.42}})
	require.NoError(t, err)
	r := runTurn(t, false, agent.WithPrices(prices))
	// Step 1: 400 uncached, 600 hit, 200 out; step 2: 500, 1500, 100.
	step1 := (400*0.28 + 600*0.028 + 200*0.42) / 1e6
	step2 := (500*0.28 + 1500*0.028 + 100*0.42) / 1e6
	require.Len(t, r.usages, 2)
	assert.InDelta(t, step1, r.usages[0].Cost, 1e-12)
	assert.InDelta(t, step2, r.usages[1].Cost, 1e-12)
	assert.InDelta(t, step1+step2, r.end.Cost, 1e-12)
	assert.InDelta(t, step1+step2, r.sess.Cost(), 1e-12)
	for _, s := range r.spans {
		if s.Name == "invoke_agent harness" {
			assert.InDelta(t, step1+step2, attrs(s.Attributes)["harness.cost"], 1e-12)
		}
	}
}

func TestRedactingHook(t *testing.T) {
	r := runTurn(t, false, agent.WithHooks(agent.Hooks{Model: []model.Middleware{redact("sk-SECRET")}}))
	reqs := r.srv.Requests()
	require.Len(t, reqs, 3)
	for _, rq := range reqs {
		assert.NotContains(t, string(rq.Body), "sk-SECRET")
		assert.Contains(t, string(rq.Body), "[redacted]")
	}
	// The history keeps what the user said.
	assert.Contains(t, r.sess.Messages()[0].Text(), "sk-SECRET")
}

func TestNewErrors(t *testing.T) {
	_, err := observe.New(observe.Config{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.ErrorContains(t, err, "no TracerProvider and no MeterProvider")
	_, err = observe.New(observe.Config{ProviderName: "deepseek", AgentName: "coder", Content: true})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
}

// The session's cost is derived from the log: a resumed session has the
// same sum as the one that ran.
func TestCostOnResume(t *testing.T) {
	srv := script()
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Model: "deepseek-chat"})
	require.NoError(t, err)
	prices, err := pricing.NewTable("USD", map[string]pricing.Price{"deepseek-chat": {Input: 0.28, CacheHit: 0.028, Output: 0.42}})
	require.NoError(t, err)
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(testTools()...), agent.WithPrices(prices),
		agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.NewSession(t.Context(), session.Header{})
	require.NoError(t, err)
	for _, err := range sess.Run(t.Context(), "go") {
		require.NoError(t, err)
	}
	want := (400*0.28+600*0.028+200*0.42)/1e6 + (500*0.28+1500*0.028+100*0.42)/1e6
	assert.InDelta(t, want, sess.Cost(), 1e-12)
	id := sess.Header().ID
	require.NoError(t, sess.Close())
	again, err := loop.ResumeSession(t.Context(), id)
	require.NoError(t, err)
	defer again.Close()
	assert.InDelta(t, want, again.Cost(), 1e-12)
}

// AgentName names the turn spans; a Config with only a MeterProvider
// measures without tracing.
func TestAgentNameAndMetricsOnly(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	hooks, err := observe.New(observe.Config{TracerProvider: tp, AgentName: "coder"})
	require.NoError(t, err)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	metricsOnly, err := observe.New(observe.Config{MeterProvider: mp})
	require.NoError(t, err)
	loop, err := agent.New(agent.WithHooks(hooks), agent.WithHooks(metricsOnly),
		agent.WithModel(replay.NewScripted(replay.Response{Text: "hello"})))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.NewSession(t.Context(), session.Header{})
	require.NoError(t, err)
	for _, err := range sess.Run(t.Context(), "hi") {
		require.NoError(t, err)
	}
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
		if s.Name == "invoke_agent coder" {
			assert.Equal(t, "coder", attrs(s.Attributes)["gen_ai.agent.name"])
		}
	}
	assert.ElementsMatch(t, []string{"invoke_agent coder", "chat scripted"}, names)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(t.Context(), &rm))
	require.NotEmpty(t, rm.ScopeMetrics)
	var metrics []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		metrics = append(metrics, m.Name)
	}
	assert.Contains(t, metrics, "gen_ai.client.operation.duration")
}
