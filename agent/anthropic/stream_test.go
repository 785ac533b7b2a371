package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/sse"
)

// rawStream answers with body as an event stream.
func rawStream(body string) reply {
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}}
}

// sdkRead reads a stream with the SDK's own event types and
// accumulator, as a second opinion on what the stream says.
func sdkRead(t *testing.T, stream []byte) sdk.Message {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(stream))
	var msg sdk.Message
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return msg
		}
		require.NoError(t, err)
		var e sdk.MessageStreamEventUnion
		require.NoError(t, e.UnmarshalJSON(ev.Data))
		require.NoError(t, msg.Accumulate(e))
	}
}

// expected is the assistant message and usage the SDK's reading gives,
// in the shape the loop assembles.
func expected(t *testing.T, msg sdk.Message) (harness.Message, harness.Usage, string) {
	t.Helper()
	out := harness.Message{Role: harness.RoleAssistant}
	var text strings.Builder
	var calls []harness.Block
	for _, cb := range msg.Content {
		switch cb.Type {
		case "thinking":
			out.Content = append(out.Content, harness.Block{Type: harness.BlockReasoning, Text: cb.Thinking, Signature: cb.Signature})
		case "redacted_thinking":
			out.Content = append(out.Content, harness.Block{Type: harness.BlockReasoning, Signature: cb.Data, Redacted: true})
		case "text":
			text.WriteString(cb.Text)
		case "tool_use":
			calls = append(calls, call(cb.ID, cb.Name, string(cb.Input)))
		}
	}
	if text.Len() > 0 {
		out.Content = append(out.Content, harness.TextBlock(text.String()))
	}
	out.Content = append(out.Content, calls...)
	u := msg.Usage
	usage := harness.Usage{
		InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheHitTokens:   u.CacheReadInputTokens,
		CacheMissTokens:  u.InputTokens + u.CacheCreationInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
		ReasoningTokens:  u.OutputTokensDetails.ThinkingTokens,
	}
	return out, usage, string(msg.StopReason)
}

// Each recorded-shape stream reads as the SDK's own accumulator reads
// it: the same blocks (signatures and redacted data included), calls,
// usage and stop reason.
func TestRecordedStreams(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	require.NoError(t, err)
	require.Len(t, files, 4)
	finishes := map[string]string{"end_turn": model.FinishStop, "stop_sequence": model.FinishStop, "tool_use": model.FinishToolCalls}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			stream, err := os.ReadFile(file)
			require.NoError(t, err)
			f := newFake(t, rawStream(string(stream)))
			chunks, err := drain(t, f.model(), context.Background(), simple())
			require.NoError(t, err)
			got := join(chunks)

			want, wantUsage, stop := expected(t, sdkRead(t, stream))
			gotMsg := got.Message()
			require.Equal(t, len(want.Content), len(gotMsg.Content), "%+v", gotMsg.Content)
			for i := range want.Content {
				w, g := want.Content[i], gotMsg.Content[i]
				if w.Type == harness.BlockToolCall {
					assert.Equal(t, w.ToolCall.ID, g.ToolCall.ID)
					assert.Equal(t, w.ToolCall.Name, g.ToolCall.Name)
					assert.JSONEq(t, w.ToolCall.Arguments, g.ToolCall.Arguments)
					continue
				}
				assert.Equal(t, w, g, "block %d", i)
			}
			gotUsage, ok := got.Usage()
			require.True(t, ok)
			assert.Equal(t, wantUsage, gotUsage)
			finish, _ := got.Finish()
			assert.Equal(t, finishes[stop], finish)
		})
	}
}

// Deltas are yielded as they arrive, in stream order; a thinking
// block's signature ends it; parallel calls are numbered in order.
func TestStreamChunks(t *testing.T) {
	f := newFake(t, reply{Message: &message{
		Blocks: []block{
			{Thinking: "Look first.", Signature: "sig-1"},
			{Redacted: "opaque=="},
			text("Checking."),
			toolUse("toolu_1", "ls", `{"path":"."}`),
			toolUse("toolu_2", "read", `{"file_path":"a"}`),
		},
		Usage: anthropictest.Usage{InputTokens: 5, OutputTokens: 40, CacheCreationInputTokens: 100, CacheReadInputTokens: 900, ThinkingTokens: 12},
		Split: 4,
	}})
	chunks, err := drain(t, f.model(), context.Background(), simple())
	require.NoError(t, err)
	assert.Equal(t, []model.Chunk{
		{Type: model.ChunkReasoning, Text: "Look"},
		{Type: model.ChunkReasoning, Text: " fir"},
		{Type: model.ChunkReasoning, Text: "st."},
		{Type: model.ChunkReasoning, Signature: "sig-1"},
		{Type: model.ChunkReasoning, Redacted: true, Signature: "opaque=="},
		{Type: model.ChunkText, Text: "Chec"},
		{Type: model.ChunkText, Text: "king"},
		{Type: model.ChunkText, Text: "."},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, ID: "toolu_1", Name: "ls"}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, Arguments: `{"pa`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, Arguments: `th":`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, Arguments: `"."}`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, ID: "toolu_2", Name: "read"}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, Arguments: `{"fi`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, Arguments: `le_p`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, Arguments: `ath"`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, Arguments: `:"a"`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, Arguments: `}`}},
		{Type: model.ChunkUsage, Usage: harness.Usage{InputTokens: 1005, OutputTokens: 40, CacheHitTokens: 900, CacheMissTokens: 105, CacheWriteTokens: 100, ReasoningTokens: 12}},
		{Type: model.ChunkFinish, Finish: model.FinishToolCalls},
	}, chunks)
}

// Stop reasons map to finish reasons or failures; a stream cut off
// before its stop reason is a truncated stream the loop retries.
func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		stop   string
		finish string
		code   harness.Code
	}{
		{"end_turn", model.FinishStop, ""},
		{"stop_sequence", model.FinishStop, ""},
		{"pause_turn", model.FinishStop, ""},
		{"tool_use", model.FinishToolCalls, ""},
		{"max_tokens", model.FinishLength, ""},
		{"model_context_window_exceeded", model.FinishLength, ""},
		{"refusal", "", harness.CodeContentFilter},
	} {
		t.Run(tc.stop, func(t *testing.T) {
			f := newFake(t, reply{Message: &message{Blocks: []block{text("x")}, StopReason: tc.stop}})
			chunks, err := drain(t, f.model(), context.Background(), simple())
			if tc.code != "" {
				he, _ := modelErr(t, err)
				assert.Equal(t, tc.code, he.Code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, model.Chunk{Type: model.ChunkFinish, Finish: tc.finish}, chunks[len(chunks)-1])
		})
	}
	f := newFake(t, reply{Message: &message{Blocks: []block{text("cut")}, NoStop: true}})
	chunks, err := drain(t, f.model(), context.Background(), simple())
	he, _ := modelErr(t, err)
	assert.Equal(t, harness.CodeTruncatedStream, he.Code)
	assert.True(t, model.Retryable(err))
	assert.Equal(t, "cut", join(chunks).Message().Text())
}

// An error event mid-stream is a failure with the code its type says:
// overloaded and api errors are server failures the loop retries.
func TestErrorEvents(t *testing.T) {
	for typ, code := range map[string]harness.Code{
		"overloaded_error":      harness.CodeServer,
		"api_error":             harness.CodeServer,
		"some_future_error":     harness.CodeServer,
		"rate_limit_error":      harness.CodeRateLimit,
		"invalid_request_error": harness.CodeInvalidRequest,
		"authentication_error":  harness.CodeAuth,
		"billing_error":         harness.CodeInsufficientBalance,
		"timeout_error":         harness.CodeTransport,
	} {
		t.Run(typ, func(t *testing.T) {
			f := newFake(t, reply{Message: &message{Blocks: []block{text("partial")}, NoStop: true},
				Events: []anthropictest.Event{anthropictest.ErrorEvent(typ, "went wrong")}})
			chunks, err := drain(t, f.model(), context.Background(), simple())
			he, _ := modelErr(t, err)
			assert.Equal(t, code, he.Code)
			assert.Contains(t, he.Message, "went wrong")
			assert.Equal(t, "partial", join(chunks).Message().Text())
		})
	}
	f := newFake(t, reply{Events: []anthropictest.Event{anthropictest.ErrorEvent("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")}})
	_, err := drain(t, f.model(), context.Background(), simple())
	he, _ := modelErr(t, err)
	assert.Equal(t, harness.CodeContextWindowExceeded, he.Code)

	f = newFake(t, rawStream("event: message_start\ndata: {not json\n\n"))
	_, err = drain(t, f.model(), context.Background(), simple())
	he, _ = modelErr(t, err)
	assert.Equal(t, harness.CodeServer, he.Code)
	assert.Contains(t, he.Message, "malformed")
}

// A whole message sent instead of a stream is read as the answer.
func TestWholeMessageReply(t *testing.T) {
	doc := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[` +
		`{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"whole"},` +
		`{"type":"tool_use","id":"toolu_9","name":"read","input":{"file_path":"z"}}],` +
		`"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":7}}`
	f := newFake(t, reply{Body: doc}, reply{Body: anthropictest.ErrorBody("overloaded_error", "Overloaded")})
	m := f.model()
	chunks, err := drain(t, m, context.Background(), simple())
	require.NoError(t, err)
	msg := join(chunks).Message()
	assert.Equal(t, harness.Block{Type: harness.BlockReasoning, Text: "t", Signature: "s"}, msg.Content[0])
	assert.Equal(t, "whole", msg.Text())
	require.Len(t, msg.ToolCalls(), 1)
	assert.JSONEq(t, `{"file_path":"z"}`, msg.ToolCalls()[0].Arguments)
	u, _ := join(chunks).Usage()
	assert.Equal(t, harness.Usage{InputTokens: 10, OutputTokens: 4, CacheHitTokens: 7, CacheMissTokens: 3}, u)

	_, err = drain(t, m, context.Background(), simple())
	he, _ := modelErr(t, err)
	assert.Equal(t, harness.CodeServer, he.Code)
}

// pings holds the stream open with pings after head.
func pings(head string, every time.Duration) reply {
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
				if _, err := io.WriteString(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}}
}

// Pings prove the connection lives, not that the answer progresses: an
// answer that stops while pings go on is dropped after StallTimeout, one
// that never begins after QueueTimeout, each as a retryable timeout.
func TestPingsDoNotHoldAStalledAnswer(t *testing.T) {
	leakcheck.Check(t)
	head := reply{Message: &message{Blocks: []block{text("begun")}, NoStop: true}}.Stream()
	f := newFake(t, pings(head, 10*time.Millisecond))
	chunks, err := drain(t, f.model(anthropic.Config{StallTimeout: 100 * time.Millisecond}), context.Background(), simple())
	he, _ := modelErr(t, err)
	assert.Equal(t, harness.CodeTransport, he.Code)
	assert.True(t, model.Retryable(err))
	assert.ErrorIs(t, err, harness.CodeTimeout)
	assert.Contains(t, he.Message, "no content from the model for 100ms")
	assert.Equal(t, "begun", join(chunks).Message().Text())

	start := (&message{}).Events()[0]
	f = newFake(t, pings("event: "+start.Name+"\ndata: "+start.Data+"\n\n", 10*time.Millisecond))
	_, err = drain(t, f.model(anthropic.Config{QueueTimeout: 100 * time.Millisecond}), context.Background(), simple())
	he, _ = modelErr(t, err)
	assert.Equal(t, harness.CodeTransport, he.Code)
	assert.Contains(t, he.Message, "no answer began within 100ms")
}

func TestCancelAndStopEarly(t *testing.T) {
	leakcheck.Check(t)
	head := reply{Message: &message{Blocks: []block{text("one two three")}, NoStop: true}}.Stream()
	f := newFake(t, pings(head, 20*time.Millisecond), pings(head, 20*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var failed error
	for c, err := range f.model().Stream(ctx, simple()) {
		if err != nil {
			failed = err
			break
		}
		if c.Type == model.ChunkText {
			n++
			cancel()
		}
	}
	assert.Equal(t, 1, n)
	he, _ := modelErr(t, failed)
	assert.Equal(t, harness.CodeAborted, he.Code)

	for range f.model().Stream(context.Background(), simple()) {
		break // the consumer stops at once: the call ends, its body closed
	}
}

// TestChunkSDKTypesAgree pins the event and delta type names the adapter
// reads to the SDK's constants, so a rename there shows here.
func TestChunkSDKTypesAgree(t *testing.T) {
	var ev sdk.MessageStreamEventUnion
	require.NoError(t, json.Unmarshal([]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`), &ev))
	assert.Equal(t, "signature_delta", ev.Delta.Type)
	assert.Equal(t, "s", ev.Delta.Signature)
}

// Thinking interleaved with tool use goes back in the order it came,
// each block with its signature.
func TestInterleavedThinkingGoesBackInOrder(t *testing.T) {
	f := newFake(t, reply{Message: &message{Blocks: []block{
		{Thinking: "first", Signature: "s1"}, toolUse("toolu_a", "ls", `{"path":"a"}`),
		{Thinking: "second", Signature: "s2"}, toolUse("toolu_b", "ls", `{"path":"b"}`),
	}}}, ok(text("done")))
	m := f.model()
	chunks, err := drain(t, m, context.Background(), simple())
	require.NoError(t, err)
	answer := join(chunks).Message()
	req := &model.Request{Messages: []harness.Message{userText("hi"), answer,
		result("toolu_a", "ls", false, harness.TextBlock("x")), result("toolu_b", "ls", false, harness.TextBlock("y"))}}
	_, err = drain(t, m, context.Background(), req)
	require.NoError(t, err)
	var order []string
	for _, b := range blocksOf(t, f.body(1), 1) {
		order = append(order, b["type"].(string))
	}
	assert.Equal(t, []string{"thinking", "tool_use", "thinking", "tool_use"}, order)
	assert.Equal(t, "s2", blocksOf(t, f.body(1), 1)[2]["signature"])
}
