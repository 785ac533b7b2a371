package observe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/tools"
)

const scope = "github.com/go-harness/harness/observe"

// Attributes and events of this package beyond the conventions.
const (
	attrCost    = attribute.Key("harness.cost")
	attrReason  = attribute.Key("harness.turn.reason")
	attrSteps   = attribute.Key("harness.turn.steps")
	attrStep    = attribute.Key("harness.step")
	attrAttempt = attribute.Key("harness.retry.attempt")
	attrDelay   = attribute.Key("harness.retry.delay_ms")
	attrSource  = attribute.Key("harness.reminder.source")
	attrText    = attribute.Key("harness.reminder.text")
	attrOutcome = attribute.Key("harness.tool.outcome")
)

// Config says where an observer's spans and metrics go and how they are
// named. At least one of TracerProvider and MeterProvider is required;
// the zero value of every other field is its default.
type Config struct {
	// TracerProvider is where spans go; nil records none.
	TracerProvider trace.TracerProvider
	// MeterProvider is where metrics go; nil records none.
	MeterProvider metric.MeterProvider
	// ProviderName is gen_ai.provider.name ("deepseek", "openai", ...);
	// empty means "openai".
	ProviderName string
	// AgentName is gen_ai.agent.name, which names the turn spans; empty
	// means "harness".
	AgentName string
	// Content records message content on the spans: the system prompt,
	// the messages sent and received, tool arguments and results,
	// reminder text. It is off by default: content is sensitive.
	Content bool
}

// observer traces and measures the turns of the loops its hooks are
// plugged into. It is safe for concurrent use.
type observer struct {
	provider  string
	agent     string
	content   bool
	tracer    trace.Tracer
	tokens    metric.Int64Histogram
	duration  metric.Float64Histogram
	toolCalls metric.Int64Counter
	toolDur   metric.Float64Histogram
	metrics   bool
}

// New returns the loop hooks that trace and measure every turn, model
// call and tool call of the loops they are given to (agent.WithHooks).
// Pass them before the host's own hooks, so that the tool spans cover the
// host's tool middleware. A Config with neither a TracerProvider nor a
// MeterProvider is an error (harness.CodeInvalidOption).
func New(cfg Config) (agent.Hooks, error) {
	if cfg.TracerProvider == nil && cfg.MeterProvider == nil {
		return agent.Hooks{}, &harness.Error{Code: harness.CodeInvalidOption, Message: "observe: the Config has no TracerProvider and no MeterProvider; set at least one"}
	}
	o := &observer{provider: cmp.Or(cfg.ProviderName, "openai"), agent: cmp.Or(cfg.AgentName, "harness"), content: cfg.Content}
	if cfg.TracerProvider != nil {
		o.tracer = cfg.TracerProvider.Tracer(scope)
	} else {
		o.tracer = trace.NewNoopTracerProvider().Tracer(scope)
	}
	if cfg.MeterProvider != nil {
		m := cfg.MeterProvider.Meter(scope)
		var errs [4]error
		o.tokens, errs[0] = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
			metric.WithDescription("Number of input and output tokens used."),
			metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
		o.duration, errs[1] = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
			metric.WithDescription("GenAI operation duration."),
			metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
		o.toolCalls, errs[2] = m.Int64Counter("harness.tool.calls", metric.WithUnit("{call}"),
			metric.WithDescription("Tool calls run, by tool and outcome."))
		o.toolDur, errs[3] = m.Float64Histogram("harness.tool.duration", metric.WithUnit("s"),
			metric.WithDescription("Tool call duration, by tool and outcome."),
			metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300))
		if err := errors.Join(errs[:]...); err != nil {
			return agent.Hooks{}, err
		}
		o.metrics = true
	}
	return agent.Hooks{
		Turns: []agent.TurnObserver{o.beginTurn},
		Model: []model.Middleware{o.model},
		Tools: []tools.Middleware{o.tool},
	}, nil
}

// beginTurn starts the turn span; the events of the turn annotate and end
// it.
func (o *observer) beginTurn(ctx context.Context, info agent.TurnInfo) (context.Context, func(agent.Event)) {
	ctx, span := o.tracer.Start(ctx, "invoke_agent "+o.agent,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			semconv.GenAIOperationNameInvokeAgent,
			semconv.GenAIProviderNameKey.String(o.provider),
			semconv.GenAIAgentNameKey.String(o.agent),
			semconv.GenAIRequestModelKey.String(info.Model),
			semconv.GenAIConversationIDKey.String(info.SessionID),
		))
	return ctx, func(ev agent.Event) { o.turnEvent(span, ev) }
}

// turnEvent adds what ev says to the turn span, and ends it at TurnEnd.
func (o *observer) turnEvent(span trace.Span, ev agent.Event) {
	switch e := ev.(type) {
	case *agent.Retry:
		span.AddEvent("harness.retry", trace.WithAttributes(
			attrStep.Int(e.Step), attrAttempt.Int(e.Attempt), attrDelay.Int64(e.Delay.Milliseconds()),
			semconv.ErrorTypeKey.String(string(harness.CodeOf(e.Err)))))
	case *agent.ReminderAdded:
		attrs := []attribute.KeyValue{attrStep.Int(e.Step), attrSource.String(e.Source)}
		if o.content {
			attrs = append(attrs, attrText.String(e.Text))
		}
		span.AddEvent("harness.reminder", trace.WithAttributes(attrs...))
	case *agent.TurnEnd:
		span.SetAttributes(
			semconv.GenAIUsageInputTokensKey.Int64(e.Usage.InputTokens),
			semconv.GenAIUsageOutputTokensKey.Int64(e.Usage.OutputTokens),
			semconv.GenAIUsageCacheReadInputTokensKey.Int64(e.Usage.CacheHitTokens),
			semconv.GenAIUsageCacheCreationInputTokensKey.Int64(e.Usage.CacheWriteTokens),
			attrSteps.Int(e.Steps), attrReason.String(e.Reason), attrCost.Float64(e.Cost))
		if e.Err != nil {
			span.SetAttributes(semconv.ErrorTypeKey.String(errorType(e.Err)))
			span.SetStatus(codes.Error, e.Err.Error())
		}
		span.End()
	}
}

// errorType is the error.type of err: its harness code, or "_OTHER".
func errorType(err error) string {
	if c := harness.CodeOf(err); c != "" && c != harness.CodeUnknown {
		return string(c)
	}
	if errors.Is(err, context.Canceled) {
		return string(harness.CodeAborted)
	}
	return "_OTHER"
}

// model is the model middleware: a chat span and the client metrics per
// call.
func (o *observer) model(next model.Model) model.Model {
	return model.Wrap(next, func(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
		return func(yield func(model.Chunk, error) bool) {
			name := next.Info().Name
			base := []attribute.KeyValue{
				semconv.GenAIOperationNameChat,
				semconv.GenAIProviderNameKey.String(o.provider),
				semconv.GenAIRequestModelKey.String(name),
			}
			start := time.Now()
			ctx, span := o.tracer.Start(ctx, "chat "+name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(base...))
			if o.content && span.IsRecording() {
				span.SetAttributes(semconv.GenAISystemInstructionsKey.String(req.System),
					semconv.GenAIInputMessagesKey.String(jsonText(req.Messages)))
			}
			var (
				usage    harness.Usage
				hasUsage bool
				finish   string
				failed   error
				asm      *model.Assembler
			)
			if o.content {
				asm = &model.Assembler{}
			}
			for c, err := range next.Stream(ctx, req) {
				if err != nil {
					failed = err
				} else {
					switch c.Type {
					case model.ChunkUsage:
						usage, hasUsage = c.Usage, true
					case model.ChunkFinish:
						finish = c.Finish
					}
					if asm != nil {
						asm.Add(c)
					}
				}
				if !yield(c, err) {
					break
				}
			}
			if failed == nil && ctx.Err() != nil {
				failed = ctx.Err()
			}
			attrs := base
			if finish != "" {
				span.SetAttributes(semconv.GenAIResponseFinishReasonsKey.StringSlice([]string{finish}))
			}
			if hasUsage {
				span.SetAttributes(semconv.GenAIUsageInputTokensKey.Int64(usage.InputTokens),
					semconv.GenAIUsageOutputTokensKey.Int64(usage.OutputTokens),
					semconv.GenAIUsageCacheReadInputTokensKey.Int64(usage.CacheHitTokens),
					semconv.GenAIUsageCacheCreationInputTokensKey.Int64(usage.CacheWriteTokens))
			}
			if asm != nil && failed == nil {
				span.SetAttributes(semconv.GenAIOutputMessagesKey.String(jsonText([]harness.Message{asm.Message()})))
			}
			if failed != nil {
				et := errorType(failed)
				attrs = append(attrs[:len(attrs):len(attrs)], semconv.ErrorTypeKey.String(et))
				span.SetAttributes(semconv.ErrorTypeKey.String(et))
				span.SetStatus(codes.Error, failed.Error())
			}
			span.End()
			if o.metrics {
				set := metric.WithAttributeSet(attribute.NewSet(attrs...))
				o.duration.Record(ctx, time.Since(start).Seconds(), set)
				if hasUsage {
					o.tokens.Record(ctx, usage.InputTokens, metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], semconv.GenAITokenTypeInput)...)))
					o.tokens.Record(ctx, usage.OutputTokens, metric.WithAttributeSet(attribute.NewSet(append(base[:len(base):len(base)], semconv.GenAITokenTypeOutput)...)))
				}
			}
		}
	})
}

// tool is the dispatch middleware: an execute_tool span and the tool
// metrics per call.
func (o *observer) tool(next tools.Handler) tools.Handler {
	return tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
		start := time.Now()
		ctx, span := o.tracer.Start(ctx, "execute_tool "+call.Name, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				semconv.GenAIOperationNameExecuteTool,
				semconv.GenAIToolNameKey.String(call.Name),
				semconv.GenAIToolCallIDKey.String(call.ID),
				semconv.GenAIToolTypeKey.String("function"),
				attrStep.Int(call.Step),
			))
		if o.content && span.IsRecording() {
			span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(call.Arguments))
		}
		res := next(ctx, call)
		outcome := "ok"
		var et string
		if res != nil && res.IsError {
			outcome = "error"
			et = string(res.Code)
			if et == "" {
				et = string(harness.CodeToolFailed)
			}
			span.SetAttributes(semconv.ErrorTypeKey.String(et))
			span.SetStatus(codes.Error, et)
		}
		if o.content && res != nil && span.IsRecording() {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(jsonText(res.Content)))
		}
		span.End()
		if o.metrics {
			attrs := []attribute.KeyValue{semconv.GenAIToolNameKey.String(call.Name), attrOutcome.String(outcome)}
			if et != "" {
				attrs = append(attrs, semconv.ErrorTypeKey.String(et))
			}
			set := metric.WithAttributeSet(attribute.NewSet(attrs...))
			o.toolCalls.Add(ctx, 1, set)
			o.toolDur.Record(ctx, time.Since(start).Seconds(), set)
		}
		return res
	})
}

// jsonText encodes v for a content attribute.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
