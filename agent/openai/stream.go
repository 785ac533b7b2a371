package openai

import (
	"context"
	"encoding/json"
	"errors"
	"iter"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// Finish reasons that are failures.
const (
	finishContentFilter          = "content_filter"
	finishInsufficientResource   = "insufficient_system_resource"
	finishFunctionCallDeprecated = "function_call"
)

// Stream sends req and yields the answer as it arrives: reasoning and
// text pieces, tool-call pieces (agent.Assembler joins them), then the
// usage and the finish reason. One call is one HTTP request; the SDK's
// own retries are off, so the loop's retry policy is the only one.
//
// A failure is yielded once as a *harness.Error: harness.CodeAuth (401,
// 403), CodeInsufficientBalance (402), CodeInvalidRequest (400, 422, with
// the provider's own message), CodeContextWindowExceeded (a 400 that
// says so), CodeRateLimit (429, RetryAfter from Retry-After-Ms or
// Retry-After), CodeServer (5xx, an error event mid-stream, finish reason
// insufficient_system_resource), CodeTransport (connection failures, a
// response silent past the idle timeout), CodeTruncatedStream (the stream
// ended without a finish reason), CodeContentFilter (finish reason
// content_filter) and CodeAborted (ctx cancelled). The sequence ends
// promptly when ctx is cancelled or the consumer stops; the response body
// is closed either way.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		stopped := false
		emit := func(c model.Chunk) bool {
			if !yield(c, nil) {
				stopped = true
			}
			return !stopped
		}
		if err := m.call(ctx, req, emit); err != nil && !stopped {
			yield(model.Chunk{}, err)
		}
	}
}

// call runs one model call, handing chunks to emit until it returns
// false. It returns a model error (a *harness.Error) on failure.
func (m *Model) call(ctx context.Context, req *model.Request, emit func(model.Chunk) bool) error {
	switch {
	case m.err != nil:
		return model.NewError(harness.CodeInvalidRequest, m.err.Error(), m.err)
	case req == nil:
		return model.NewError(harness.CodeInvalidRequest, "no request given", nil)
	case m.requireKey && m.apiKey == "":
		return model.NewError(harness.CodeAuth, "no API key was given: pass the key to openai.DeepSeek (for example from "+EnvDeepSeekKey+")", nil)
	case ctx.Err() != nil:
		return model.NewError(harness.CodeAborted, "the model call was cancelled", ctx.Err())
	}
	params, err := m.params(ctx, req)
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wd *watchdog
	if m.idle > 0 {
		wd = &watchdog{idle: m.idle, cancel: cancel}
		defer wd.stop()
	}
	x := &exchange{}
	opts := []option.RequestOption{option.WithMiddleware(x.middleware(wd, m.streaming))}
	m.logger.Debug("model call", "model", m.info.Name, "base_url", m.redactString(m.baseURL), "messages", len(params.Messages), "tools", len(params.Tools), "stream", m.streaming)

	var st answer
	if !m.streaming {
		resp, err := m.chat.New(callCtx, params, opts...)
		if err != nil {
			return m.fail(ctx, callCtx, x, err)
		}
		if !st.completion(resp, emit) {
			return nil
		}
		return m.finish(&st, emit)
	}

	stream := m.chat.NewStreaming(callCtx, params, opts...)
	defer stream.Close()
	for stream.Next() {
		chunk := stream.Current()
		if !st.chunk(&chunk, emit) {
			return nil
		}
	}
	if err := stream.Err(); err != nil {
		return m.fail(ctx, callCtx, x, err)
	}
	if x.bodyErr != nil {
		return m.fail(ctx, callCtx, x, x.bodyErr)
	}
	if err := ctx.Err(); err != nil {
		return m.fail(ctx, callCtx, x, err)
	}
	if x.jsonReply {
		// The endpoint ignored "stream": true and answered with one
		// JSON document: an error, or the whole completion.
		var probe struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(x.body, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
			return m.fail(ctx, callCtx, x, m.redact(classifyEvent(x.body)).toError())
		}
		var resp oai.ChatCompletion
		if err := json.Unmarshal(x.body, &resp); err != nil {
			return m.fail(ctx, callCtx, x, err)
		}
		if !st.completion(&resp, emit) {
			return nil
		}
	}
	return m.finish(&st, emit)
}

// fail classifies err and logs it.
func (m *Model) fail(parent, callCtx context.Context, x *exchange, err error) error {
	me := m.classify(parent, callCtx, x, err)
	status := 0
	if pe := (*model.ProviderError)(nil); errors.As(me, &pe) {
		status = pe.Status
	}
	m.logger.Debug("model call failed", "model", m.info.Name, "code", me.Code, "status", status, "error", me.Error())
	return me
}

// finish ends a complete answer: a failure for a missing or failing
// finish reason, else the usage and the finish reason.
func (m *Model) finish(st *answer, emit func(model.Chunk) bool) error {
	switch st.finish {
	case "":
		return model.NewError(harness.CodeTruncatedStream, "the answer stream ended without a finish reason", nil)
	case finishContentFilter:
		return model.NewError(harness.CodeContentFilter, "the provider withheld the answer (finish reason content_filter)", nil)
	case finishInsufficientResource:
		return model.NewError(harness.CodeServer, "the provider ran out of capacity before the answer was complete (finish reason insufficient_system_resource)", nil)
	}
	if st.usage != nil {
		m.logger.Debug("model call done", "model", m.info.Name, "finish", st.finish, "input_tokens", st.usage.InputTokens,
			"output_tokens", st.usage.OutputTokens, "cache_hit_tokens", st.usage.CacheHitTokens)
		if !emit(model.Chunk{Type: model.ChunkUsage, Usage: *st.usage}) {
			return nil
		}
	}
	finish := st.finish
	if finish == finishFunctionCallDeprecated {
		finish = model.FinishToolCalls
	}
	emit(model.Chunk{Type: model.ChunkFinish, Finish: finish})
	return nil
}

// answer is the state of one answer being read.
type answer struct {
	finish string
	usage  *harness.Usage
	// calls maps the provider's tool-call index to ours; see callIndex.
	calls    map[int64]*callSlot
	nextCall int
}

type callSlot struct {
	id    string
	index int
}

// callIndex maps a tool-call delta to the index the Assembler groups
// by. Normally that is the provider's index; but some endpoints send
// every parallel call whole with the same index (or none, which decodes
// as 0), so a new id at a known index starts a new call.
func (a *answer) callIndex(providerIndex int64, id string) int {
	if a.calls == nil {
		a.calls = map[int64]*callSlot{}
	}
	s := a.calls[providerIndex]
	if s == nil || (id != "" && s.id != "" && id != s.id) {
		s = &callSlot{id: id, index: a.nextCall}
		a.nextCall++
		a.calls[providerIndex] = s
	} else if s.id == "" {
		s.id = id
	}
	return s.index
}

// chunk handles one stream chunk; it returns false when emit did.
func (a *answer) chunk(c *oai.ChatCompletionChunk, emit func(model.Chunk) bool) bool {
	if c.JSON.Usage.Valid() {
		u := usageOf(&c.Usage)
		a.usage = &u
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		d := &ch.Delta
		if r := reasoningOf(d.JSON.ExtraFields); r != "" {
			if !emit(model.Chunk{Type: model.ChunkReasoning, Text: r}) {
				return false
			}
		}
		for _, s := range []string{d.Content, d.Refusal} {
			if s != "" && !emit(model.Chunk{Type: model.ChunkText, Text: s}) {
				return false
			}
		}
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
				continue
			}
			delta := model.ToolCallDelta{Index: a.callIndex(tc.Index, tc.ID), ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
			if !emit(model.Chunk{Type: model.ChunkToolCall, ToolCall: delta}) {
				return false
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return true
}

// completion handles a whole, non-streamed answer.
func (a *answer) completion(c *oai.ChatCompletion, emit func(model.Chunk) bool) bool {
	if c.JSON.Usage.Valid() {
		u := usageOf(&c.Usage)
		a.usage = &u
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		msg := &ch.Message
		if r := reasoningOf(msg.JSON.ExtraFields); r != "" {
			if !emit(model.Chunk{Type: model.ChunkReasoning, Text: r}) {
				return false
			}
		}
		for _, s := range []string{msg.Content, msg.Refusal} {
			if s != "" && !emit(model.Chunk{Type: model.ChunkText, Text: s}) {
				return false
			}
		}
		for j := range msg.ToolCalls {
			// Read the fields directly: AsFunction() is not reliable on
			// every decoded shape.
			tc := &msg.ToolCalls[j]
			if tc.Type == "custom" {
				continue
			}
			delta := model.ToolCallDelta{Index: j, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
			if !emit(model.Chunk{Type: model.ChunkToolCall, ToolCall: delta}) {
				return false
			}
		}
		a.finish = ch.FinishReason
	}
	return true
}

// reasoningOf reads a message's or delta's reasoning: DeepSeek's
// "reasoning_content", or "reasoning" as some other servers name it. The
// SDK keeps neither; both arrive as extra fields. Empty and null give "".
func reasoningOf(extra map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[k]
		if !ok {
			continue
		}
		raw := f.Raw()
		if len(raw) < 3 || raw[0] != '"' { // null, "", or not a string
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// usageOf converts the usage report. DeepSeek's cache counters are
// top-level extra fields (prompt_cache_hit_tokens and
// prompt_cache_miss_tokens); OpenAI reports prompt_tokens_details.
// cached_tokens, from which the miss count follows.
func usageOf(u *oai.CompletionUsage) harness.Usage {
	out := harness.Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
	}
	hit, okHit := extraInt(u.JSON.ExtraFields, "prompt_cache_hit_tokens")
	miss, okMiss := extraInt(u.JSON.ExtraFields, "prompt_cache_miss_tokens")
	switch {
	case okHit || okMiss:
		out.CacheHitTokens, out.CacheMissTokens = hit, miss
	case u.PromptTokensDetails.JSON.CachedTokens.Valid():
		out.CacheHitTokens = u.PromptTokensDetails.CachedTokens
		out.CacheMissTokens = max(0, u.PromptTokens-out.CacheHitTokens)
	}
	return out
}

func extraInt(extra map[string]respjson.Field, key string) (int64, bool) {
	f, ok := extra[key]
	if !ok {
		return 0, false
	}
	var n int64
	if json.Unmarshal([]byte(f.Raw()), &n) != nil {
		return 0, false
	}
	return n, true
}
