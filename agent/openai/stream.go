package openai

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/sse"
	"github.com/go-harness/harness/internal/streamwatch"
)

// Finish reasons that are failures.
const (
	finishContentFilter          = "content_filter"
	finishInsufficientResource   = "insufficient_system_resource"
	finishFunctionCallDeprecated = "function_call"
	finishError                  = "error"
)

// Stream sends req and yields the answer as it arrives: reasoning and
// text pieces, tool-call pieces (the loop joins them), then the
// usage and the finish reason. One call is one HTTP request; the SDK's
// own retries are off, so the loop's retry policy is the only one.
//
// A failure is yielded once as a *harness.Error: harness.CodeAuth (401,
// 403), CodeInsufficientBalance (402), CodeInvalidRequest (400, 422, with
// the provider's own message), CodeContextWindowExceeded (a 400 that
// says so), CodeRateLimit (429, RetryAfter from Retry-After-Ms or
// Retry-After), CodeServer (5xx, an error event mid-stream, finish reason
// insufficient_system_resource), CodeTransport (connection failures, a
// response silent past the idle timeout, an answer that does not begin
// within the queue timeout or stalls past the stall timeout, each with
// harness.CodeTimeout in its chain), CodeTruncatedStream (the stream
// ended without a finish reason), CodeContentFilter (finish reason
// content_filter) and CodeAborted (ctx cancelled). The sequence ends
// promptly when ctx is cancelled or the consumer stops; the response body
// is closed either way.
func (m *chatModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
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
func (m *chatModel) call(ctx context.Context, req *model.Request, emit func(model.Chunk) bool) error {
	switch {
	case req == nil:
		return model.NewError(harness.CodeInvalidRequest, "no request given", nil)
	case ctx.Err() != nil:
		return model.NewError(harness.CodeAborted, "the model call was cancelled", ctx.Err())
	}
	body, nmsgs, err := m.body(ctx, req)
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	bounds := m.bounds
	if !m.streaming {
		// A whole answer arrives at once: only silence is bounded.
		bounds.Queue, bounds.Stall = 0, 0
	}
	wd := streamwatch.New(bounds, cancel)
	defer wd.Stop()
	x := &exchange{body: body}
	var raw *http.Response
	opts := []option.RequestOption{
		option.WithMiddleware(x.middleware(wd, m.streaming)),
		option.WithRequestBody("application/json", body.reader()),
		option.WithResponseBodyInto(&raw),
	}
	m.logger.Debug("model call", "model", m.info.Name, "base_url", m.redactString(m.baseURL), "dialect", m.rules.dialect,
		"messages", nmsgs, "tools", len(req.Tools), "stream", m.streaming, "bytes", body.size)

	// The body is written here; the SDK sends it, with its headers,
	// authentication and middleware, and hands back the raw response.
	_, err = m.chat.New(callCtx, oai.ChatCompletionNewParams{}, opts...)
	if raw != nil && raw.Body != nil {
		defer raw.Body.Close()
	}
	if err != nil {
		return m.fail(ctx, callCtx, x, err)
	}
	if raw == nil || raw.Body == nil {
		return m.fail(ctx, callCtx, x, model.NewError(harness.CodeEmptyResponse, "the provider sent no response body", nil))
	}

	var st answer
	if !m.streaming || x.jsonReply {
		data := x.reply
		if !x.jsonReply {
			data, err = io.ReadAll(io.LimitReader(raw.Body, maxJSONBody))
			if err != nil {
				return m.fail(ctx, callCtx, x, err)
			}
		}
		if err := st.document(data, emit); err != nil {
			return m.fail(ctx, callCtx, x, err)
		}
		if st.stopped {
			return nil
		}
		return m.finish(&st, emit)
	}

	events := sse.NewReader(raw.Body)
	for {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return m.fail(ctx, callCtx, x, err)
		}
		if ev.Done {
			break
		}
		before := st.progress
		if err := st.event(ev, emit); err != nil {
			return m.fail(ctx, callCtx, x, err)
		}
		if st.progress != before {
			wd.Content()
		}
		if st.stopped {
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return m.fail(ctx, callCtx, x, err)
	}
	return m.finish(&st, emit)
}

// fail classifies err and logs it.
func (m *chatModel) fail(parent, callCtx context.Context, x *exchange, err error) error {
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
func (m *chatModel) finish(st *answer, emit func(model.Chunk) bool) error {
	switch st.finish {
	case "", "null":
		return model.NewError(harness.CodeTruncatedStream, "the answer stream ended without a finish reason", nil)
	case finishContentFilter:
		return model.NewError(harness.CodeContentFilter, "the provider withheld the answer (finish reason content_filter)", nil)
	case finishError:
		return model.NewError(harness.CodeServer, "the provider failed while answering (finish reason error)", nil)
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
	switch finish {
	case finishFunctionCallDeprecated, "tool_use":
		finish = model.FinishToolCalls
	case "end_turn", "stop_sequence", "eos":
		finish = model.FinishStop
	case "max_tokens":
		finish = model.FinishLength
	}
	emit(model.Chunk{Type: model.ChunkFinish, Finish: finish})
	return nil
}
