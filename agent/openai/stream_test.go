package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/internal/leakcheck"
)

func simpleRequest() *model.Request {
	return &model.Request{Messages: []harness.Message{userText("hi")}}
}

func TestStreamYieldsDeltasAsTheyArrive(t *testing.T) {
	p := newProvider(t, sse(role(), reasoning("Let me "), reasoning("think."), text("Hel"), text("lo"), finish("stop"), usage(10, 5, 0, 10, 3)))
	chunks, err := drain(t, p.model(), context.Background(), simpleRequest())
	require.NoError(t, err)
	// The empty first reasoning and content pieces are not yielded.
	want := []model.Chunk{
		{Type: model.ChunkReasoning, Text: "Let me "},
		{Type: model.ChunkReasoning, Text: "think."},
		{Type: model.ChunkText, Text: "Hel"},
		{Type: model.ChunkText, Text: "lo"},
		{Type: model.ChunkUsage, Usage: harness.Usage{InputTokens: 10, OutputTokens: 5, CacheMissTokens: 10, ReasoningTokens: 3}},
		{Type: model.ChunkFinish, Finish: "stop"},
	}
	assert.Equal(t, want, chunks)
}

// Two parallel calls whose ids, names and argument pieces interleave over
// many chunks come out whole and in index order.
func TestParallelToolCallsSplitOverChunks(t *testing.T) {
	p := newProvider(t, sse(role(),
		toolDelta(0, "call_1", "", ""),
		toolDelta(1, "call_2", "", ""),
		toolDelta(0, "", "read", ""),
		toolDelta(1, "", "bash", `{"comm`),
		toolDelta(0, "", "", `{"file_`),
		toolDelta(1, "", "", `and":"ls -la"`),
		toolDelta(0, "", "", `path":"a.go"}`),
		toolDelta(1, "", "", `}`),
		toolDelta(2, "call_3", "noargs", ""),
		finish("tool_calls"),
	))
	chunks, err := drain(t, p.model(), context.Background(), simpleRequest())
	require.NoError(t, err)
	a := joinChunks(chunks)
	calls := a.Message().ToolCalls()
	assert.Equal(t, []harness.ToolCall{
		{ID: "call_1", Name: "read", Arguments: `{"file_path":"a.go"}`},
		{ID: "call_2", Name: "bash", Arguments: `{"command":"ls -la"}`},
		{ID: "call_3", Name: "noargs", Arguments: `{}`},
	}, calls)
	f, ok := a.Finish()
	assert.True(t, ok)
	assert.Equal(t, model.FinishToolCalls, f)
}

// Some endpoints send every parallel call whole at the same index (or
// with none); a new id starts a new call instead of being glued to the
// previous one.
func TestParallelCallsAtOneIndexStaySeparate(t *testing.T) {
	p := newProvider(t, sse(
		toolDelta(0, "call_x", "read", `{"file_path":"x"}`),
		toolDelta(0, "call_y", "read", `{"file_path":"y"}`),
		finish("tool_calls"),
	))
	chunks, err := drain(t, p.model(), context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, []harness.ToolCall{
		{ID: "call_x", Name: "read", Arguments: `{"file_path":"x"}`},
		{ID: "call_y", Name: "read", Arguments: `{"file_path":"y"}`},
	}, joinChunks(chunks).Message().ToolCalls())
}

func TestUsage(t *testing.T) {
	openAIUsage := mustJSON(map[string]any{
		"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
			"prompt_tokens_details":     map[string]any{"cached_tokens": 600},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 20}},
	})
	bare := mustJSON(map[string]any{
		"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
	})
	for _, tc := range []struct {
		name  string
		chunk chunk
		want  harness.Usage
	}{
		{"deepseek extras", usage(1000, 50, 900, 100, 20),
			harness.Usage{InputTokens: 1000, OutputTokens: 50, CacheHitTokens: 900, CacheMissTokens: 100, ReasoningTokens: 20}},
		{"openai cached_tokens", raw(openAIUsage),
			harness.Usage{InputTokens: 1000, OutputTokens: 50, CacheHitTokens: 600, CacheMissTokens: 400, ReasoningTokens: 20}},
		{"no cache report", raw(bare), harness.Usage{InputTokens: 7, OutputTokens: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, sse(text("x"), finish("stop"), tc.chunk))
			chunks, err := drain(t, p.model(), context.Background(), simpleRequest())
			require.NoError(t, err)
			u, ok := joinChunks(chunks).Usage()
			require.True(t, ok)
			assert.Equal(t, tc.want, u)
			assert.Equal(t, model.ChunkFinish, chunks[len(chunks)-1].Type, "usage comes before the finish chunk")
		})
	}
}

// Keep-alive comments and blank lines between events do not disturb
// parsing.
func TestKeepAliveComments(t *testing.T) {
	body := ": keep-alive\n\n\n\n: keep-alive\n\n" +
		streamBody(role()) +
		": keep-alive\n\n" +
		streamBody(text("one")) +
		"\n\n\n: keep-alive\n: another comment\n\n" +
		streamBody(text(" two")) +
		": keep-alive\n\n" +
		streamBody(finish("stop")) +
		"data: [DONE]\n\n"
	p := newProvider(t, sseRaw(body))
	chunks, err := drain(t, p.model(), context.Background(), simpleRequest())
	require.NoError(t, err)
	msg := joinChunks(chunks).Message()
	assert.Equal(t, "one two", msg.Text())
	assert.Equal(t, model.Chunk{Type: model.ChunkFinish, Finish: "stop"}, chunks[len(chunks)-1])
}

func TestStreamEndings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		code     harness.Code
		finish   string
		contains string
	}{
		{name: "cut without finish or DONE", body: streamBody(role(), text("half an ans")),
			code: harness.CodeTruncatedStream, contains: "without a finish reason"},
		{name: "DONE without finish", body: streamBody(text("x")) + "data: [DONE]\n\n",
			code: harness.CodeTruncatedStream},
		{name: "empty stream", body: "", code: harness.CodeTruncatedStream},
		{name: "finish but no DONE", body: streamBody(text("whole"), finish("stop")), finish: "stop"},
		{name: "length", body: streamBody(text("long"), finish("length")) + "data: [DONE]\n\n", finish: "length"},
		{name: "legacy function_call", body: streamBody(toolDelta(0, "c", "f", "{}"), finish("function_call")), finish: model.FinishToolCalls},
		{name: "content filter", body: streamBody(text("I"), finish("content_filter")) + "data: [DONE]\n\n",
			code: harness.CodeContentFilter, contains: "withheld"},
		{name: "insufficient system resource", body: streamBody(text("I"), finish("insufficient_system_resource")) + "data: [DONE]\n\n",
			code: harness.CodeServer, contains: "insufficient_system_resource"},
		{name: "error event mid-stream", body: streamBody(text("partial"), raw(`{"error":{"message":"upstream model crashed","type":"server_error","code":"internal_error"}}`)),
			code: harness.CodeServer, contains: "upstream model crashed"},
		{name: "rate limit event mid-stream", body: streamBody(raw(`{"error":{"message":"slow down","type":"rate_limit_error"}}`)),
			code: harness.CodeRateLimit, contains: "slow down"},
		{name: "numeric code event", body: streamBody(raw(`{"error":{"message":"Insufficient Balance","code":402}}`)),
			code: harness.CodeInsufficientBalance, contains: "top up"},
		{name: "context event", body: streamBody(raw(`{"error":{"message":"This model's maximum context length is 8 tokens","code":"context_length_exceeded"}}`)),
			code: harness.CodeContextWindowExceeded},
		{name: "malformed chunk", body: "data: {\"choices\": [\n\n", code: harness.CodeServer, contains: "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, sseRaw(tc.body))
			chunks, err := drain(t, p.model(), context.Background(), simpleRequest())
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, model.Chunk{Type: model.ChunkFinish, Finish: tc.finish}, chunks[len(chunks)-1])
				return
			}
			me := modelErr(t, err)
			assert.Equal(t, tc.code, me.Code, "%v", err)
			assert.Contains(t, me.Error(), tc.contains)
			for _, c := range chunks {
				assert.NotEqual(t, model.ChunkFinish, c.Type, "a failed answer has no finish chunk")
			}
		})
	}
}

// The error event arrives from the SDK as a stream error, not an API
// error; the agent loop retries it as a server failure.
func TestErrorEventIsRetriedByTheLoop(t *testing.T) {
	p := newProvider(t,
		sseRaw(streamBody(text("par"), raw(`{"error":{"message":"overloaded","type":"server_error"}}`))),
		sse(text("whole answer"), finish("stop")),
	)
	loop, err := agent.New(agent.WithModel(p.model()), agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}))
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	answer, _, end := runTurn(t, loop, "go")
	assert.Equal(t, "completed", end.Reason)
	assert.Equal(t, "parwhole answer", answer, "text streamed before the failure was shown, then the retry's")
	assert.Len(t, p.Requests(), 2)
}

// A stream that ends without [DONE] and without a finish reason is
// reported truncated and retried by the loop.
func TestTruncatedStreamIsRetriedByTheLoop(t *testing.T) {
	p := newProvider(t,
		sseRaw(streamBody(text("cut"))),
		sse(text("again"), finish("stop")),
	)
	loop, err := agent.New(agent.WithModel(p.model()), agent.WithLimits(agent.Limits{Retry: &agent.RetryPolicy{MaxRetries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}))
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	_, _, end := runTurn(t, loop, "go")
	assert.Equal(t, "completed", end.Reason)
	assert.Len(t, p.Requests(), 2)
}

// blockingReply sends head, then holds the response open until the
// client goes away, and reports that on gone.
func blockingReply(head string, gone chan<- struct{}) reply {
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}}
}

func TestCancelMidStream(t *testing.T) {
	leakcheck.Check(t)
	gone := make(chan struct{})
	p := newProvider(t, blockingReply(streamBody(role(), text("first")), gone))
	m := p.model()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []model.Chunk
	var failure error
	for c, err := range m.Stream(ctx, simpleRequest()) {
		if err != nil {
			failure = err
			continue
		}
		got = append(got, c)
		if c.Type == model.ChunkText {
			cancel() // the server keeps the stream open
		}
	}
	assert.Equal(t, []model.Chunk{{Type: model.ChunkText, Text: "first"}}, got)
	me := modelErr(t, failure)
	assert.Equal(t, harness.CodeAborted, me.Code)
	assert.ErrorIs(t, failure, context.Canceled)
	<-gone // the request was torn down: the server saw the client leave
}

func TestConsumerStopsEarly(t *testing.T) {
	leakcheck.Check(t)
	gone := make(chan struct{})
	p := newProvider(t, blockingReply(streamBody(text("a"), text("b")), gone))
	m := p.model()
	n := 0
	for c, err := range m.Stream(context.Background(), simpleRequest()) {
		require.NoError(t, err)
		require.Equal(t, model.ChunkText, c.Type)
		n++
		break
	}
	assert.Equal(t, 1, n)
	<-gone // breaking out closed the response body
}

// A response that goes silent is dropped by the idle watchdog as a
// transport failure the loop may retry.
func TestIdleWatchdogDropsASilentStream(t *testing.T) {
	leakcheck.Check(t)
	gone := make(chan struct{})
	p := newProvider(t, blockingReply(streamBody(role(), text("then silence")), gone))
	m := p.model(openai.Config{IdleTimeout: 50 * time.Millisecond})
	chunks, err := drain(t, m, context.Background(), simpleRequest())
	me := modelErr(t, err)
	assert.Equal(t, harness.CodeTransport, me.Code)
	assert.True(t, me.Retryable())
	assert.ErrorIs(t, err, harness.CodeTimeout)
	assert.Contains(t, me.Message, "no data from the model for 50ms")
	assert.Equal(t, "then silence", joinChunks(chunks).Message().Text())
	<-gone
}

// A streaming request answered with one JSON document (an endpoint that
// cannot stream) is read as a whole answer, or as the error it holds.
func TestJSONReplyToStreamingRequest(t *testing.T) {
	p := newProvider(t,
		jsonReply(completion("thought", "whole", "stop", [][3]string{{"call_9", "read", `{"file_path":"z"}`}})),
		jsonReply(`{"error":{"message":"model busy","type":"server_error"}}`),
	)
	m := p.model()
	chunks, err := drain(t, m, context.Background(), simpleRequest())
	require.NoError(t, err)
	msg := joinChunks(chunks).Message()
	assert.Equal(t, "whole", msg.Text())
	assert.Equal(t, []harness.ToolCall{{ID: "call_9", Name: "read", Arguments: `{"file_path":"z"}`}}, msg.ToolCalls())
	assert.Equal(t, harness.Block{Type: harness.BlockReasoning, Text: "thought"}, msg.Content[0])
	u, _ := joinChunks(chunks).Usage()
	assert.Equal(t, harness.Usage{InputTokens: 10, OutputTokens: 5, CacheHitTokens: 4, CacheMissTokens: 6}, u)

	_, err = drain(t, m, context.Background(), simpleRequest())
	me := modelErr(t, err)
	assert.Equal(t, harness.CodeServer, me.Code)
	assert.Contains(t, me.Message, "model busy")
}

func TestCancelledBeforeTheCall(t *testing.T) {
	p := newProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := drain(t, p.model(), ctx, simpleRequest())
	assert.Equal(t, harness.CodeAborted, modelErr(t, err).Code)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Empty(t, p.Requests())
}

func TestNonStreamingEmptyChoices(t *testing.T) {
	p := newProvider(t, jsonReply(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}`))
	_, err := drain(t, p.model(openai.Config{DisableStreaming: true}), context.Background(), simpleRequest())
	me := modelErr(t, err)
	assert.Equal(t, harness.CodeTruncatedStream, me.Code)
	assert.True(t, strings.Contains(me.Message, "finish reason"))
}

// A non-streaming answer preceded by the blank keep-alive lines DeepSeek
// sends under load decodes normally.
func TestNonStreamingKeepAliveLines(t *testing.T) {
	p := newProvider(t, jsonReply("\n\n\n"+completion("", "fine", "stop", nil)))
	chunks, err := drain(t, p.model(openai.Config{DisableStreaming: true}), context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, "fine", joinChunks(chunks).Message().Text())
	assert.NotContains(t, p.Requests()[0].JSON(t), "stream")
}
