package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"mime"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/sse"
	"github.com/go-harness/harness/internal/streamwatch"
)

// Bounds on bodies read whole.
const (
	maxErrorBody = 64 << 10
	maxJSONBody  = 64 << 20
)

// Stream sends req and yields the answer as it arrives: reasoning (each
// thinking block ended by a chunk with its signature; redacted thinking
// as one chunk of its data), text, tool-call pieces, then the usage and
// the finish reason. One call is one HTTP request, never retried here.
//
// A failure is yielded once as a *harness.Error: harness.CodeAuth (401,
// 403), CodeInsufficientBalance (402), CodeContextWindowExceeded (a 400
// that says the prompt is too long), CodeInvalidRequest (other 4xx, with
// the provider's message), CodeRateLimit (429, with the Retry-After
// hint), CodeServer (5xx, 529 overloaded, an error event mid-stream),
// CodeTransport (connection failures, 408, a stream past one of its time
// bounds), CodeTruncatedStream (the stream ended without a stop reason),
// CodeContentFilter (stop reason refusal) and CodeAborted (ctx
// cancelled). The sequence ends promptly when ctx is cancelled or the
// consumer stops; the response body is closed either way.
func (m *messagesModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
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

// exchange records what the HTTP layer saw of one call.
type exchange struct {
	status    int
	header    http.Header
	reply     []byte
	jsonReply bool
}

func (x *exchange) middleware(wd *streamwatch.Watch) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || resp == nil || resp.Body == nil {
			return resp, err
		}
		x.status, x.header = resp.StatusCode, resp.Header.Clone()
		wd.Start()
		resp.Body = wd.Body(resp.Body)
		switch {
		case resp.StatusCode >= 400:
			x.reply, _ = readClose(resp.Body, maxErrorBody)
			resp.Body = io.NopCloser(bytes.NewReader(x.reply))
		case isJSON(resp.Header.Get("Content-Type")):
			// A whole message instead of a stream (an endpoint that
			// cannot stream).
			x.jsonReply = true
			x.reply, _ = readClose(resp.Body, maxJSONBody)
			resp.Body = io.NopCloser(bytes.NewReader(nil))
		}
		return resp, nil
	}
}

func readClose(rc io.ReadCloser, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(rc, limit))
	rc.Close()
	return b, err
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || len(mt) > 5 && mt[len(mt)-5:] == "+json")
}

// call runs one model call, handing chunks to emit until it returns
// false. It returns a model error on failure.
func (m *messagesModel) call(ctx context.Context, req *model.Request, emit func(model.Chunk) bool) error {
	switch {
	case req == nil:
		return model.NewError(harness.CodeInvalidRequest, "no request given", nil)
	case ctx.Err() != nil:
		return model.NewError(harness.CodeAborted, "the model call was cancelled", ctx.Err())
	}
	body, err := m.body(ctx, req)
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wd := streamwatch.New(m.bounds, cancel)
	defer wd.Stop()
	x := &exchange{}
	m.logger.Debug("model call", "model", m.info.Name, "base_url", m.redactString(m.baseURL), "messages", len(req.Messages),
		"tools", len(req.Tools), "bytes", len(body))
	var raw *http.Response
	err = m.client.Post(callCtx, "v1/messages", bytes.NewReader(body), &raw, option.WithMiddleware(x.middleware(wd)))
	if raw != nil && raw.Body != nil {
		defer raw.Body.Close()
	}
	if err != nil {
		return m.fail(ctx, callCtx, x, err)
	}
	if raw == nil || raw.Body == nil {
		return m.fail(ctx, callCtx, x, model.NewError(harness.CodeEmptyResponse, "the provider sent no response body", nil))
	}
	st := &answer{}
	if x.jsonReply {
		if err := st.whole(x.reply, emit); err != nil {
			return m.fail(ctx, callCtx, x, err)
		}
	} else {
		events := sse.NewReader(raw.Body)
		for !st.done && !st.stopped {
			ev, err := events.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return m.fail(ctx, callCtx, x, err)
			}
			if err := ctx.Err(); err != nil {
				return m.fail(ctx, callCtx, x, err)
			}
			before := st.progress
			if err := st.event(ev, emit); err != nil {
				return m.fail(ctx, callCtx, x, err)
			}
			if st.progress != before {
				wd.Content()
			}
		}
	}
	if st.stopped {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return m.fail(ctx, callCtx, x, err)
	}
	return m.finish(st, emit)
}

// finish ends a complete answer: the usage and the finish reason, or a
// failure for a missing or failing stop reason.
func (m *messagesModel) finish(st *answer, emit func(model.Chunk) bool) error {
	var finish string
	switch st.stopReason {
	case "":
		return model.NewError(harness.CodeTruncatedStream, "the answer stream ended without a stop reason", nil)
	case "refusal":
		return model.NewError(harness.CodeContentFilter, "the model declined to answer (stop reason refusal)", nil)
	case "tool_use":
		finish = model.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		finish = model.FinishLength
	default: // end_turn, stop_sequence, pause_turn, and reasons yet to come
		finish = model.FinishStop
	}
	if st.usage != nil {
		u := st.usage.harness()
		m.logger.Debug("model call done", "model", m.info.Name, "stop_reason", st.stopReason, "input_tokens", u.InputTokens,
			"output_tokens", u.OutputTokens, "cache_read_tokens", u.CacheHitTokens, "cache_write_tokens", u.CacheWriteTokens)
		if !emit(model.Chunk{Type: model.ChunkUsage, Usage: u}) {
			return nil
		}
	}
	emit(model.Chunk{Type: model.ChunkFinish, Finish: finish})
	return nil
}

// The event shapes of a Messages stream, read tolerantly: unknown event
// types, block types and delta types are skipped.
type wireEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      *wireMessageDoc `json:"message"`
	ContentBlock *wireBlockDoc   `json:"content_block"`
	Delta        *wireDelta      `json:"delta"`
	Usage        *wireUsage      `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

type wireMessageDoc struct {
	Model      string         `json:"model"`
	Content    []wireBlockDoc `json:"content"`
	StopReason *string        `json:"stop_reason"`
	Usage      *wireUsage     `json:"usage"`
}

type wireBlockDoc struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type wireDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	Thinking    string  `json:"thinking"`
	Signature   string  `json:"signature"`
	PartialJSON string  `json:"partial_json"`
	StopReason  *string `json:"stop_reason"`
}

// wireUsage is a usage report; message_delta's counts are cumulative
// and, where present, replace message_start's.
type wireUsage struct {
	InputTokens         *int64 `json:"input_tokens"`
	OutputTokens        *int64 `json:"output_tokens"`
	CacheCreation       *int64 `json:"cache_creation_input_tokens"`
	CacheRead           *int64 `json:"cache_read_input_tokens"`
	OutputTokensDetails *struct {
		ThinkingTokens *int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// merge takes the counts o reports.
func (u *wireUsage) merge(o *wireUsage) {
	set := func(dst **int64, v *int64) {
		if v != nil {
			*dst = v
		}
	}
	set(&u.InputTokens, o.InputTokens)
	set(&u.OutputTokens, o.OutputTokens)
	set(&u.CacheCreation, o.CacheCreation)
	set(&u.CacheRead, o.CacheRead)
	if o.OutputTokensDetails != nil && o.OutputTokensDetails.ThinkingTokens != nil {
		u.OutputTokensDetails = o.OutputTokensDetails
	}
}

// harness converts the report: the input counts every prompt token,
// cache reads and writes included (the API counts them apart); the
// misses are the uncached input and the writes.
func (u *wireUsage) harness() harness.Usage {
	v := func(p *int64) int64 {
		if p == nil || *p < 0 {
			return 0
		}
		return *p
	}
	in, write, read := v(u.InputTokens), v(u.CacheCreation), v(u.CacheRead)
	out := harness.Usage{
		InputTokens:      in + write + read,
		OutputTokens:     v(u.OutputTokens),
		CacheHitTokens:   read,
		CacheMissTokens:  in + write,
		CacheWriteTokens: write,
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = min(v(d.ThinkingTokens), out.OutputTokens)
	}
	return out
}

// answer is the state of one answer being read.
type answer struct {
	stopReason string
	usage      *wireUsage
	done       bool // message_stop arrived
	stopped    bool // emit returned false
	progress   int
	blocks     map[int]*openBlock
	nextCall   int
}

// openBlock is a content block between its start and its stop.
type openBlock struct {
	typ       string
	signature string
	call      int  // the tool call's index, for tool_use
	gotInput  bool // an input_json_delta arrived
	input     json.RawMessage
}

func (a *answer) emit(emit func(model.Chunk) bool, c model.Chunk) bool {
	if a.stopped {
		return false
	}
	a.progress++
	if !emit(c) {
		a.stopped = true
	}
	return !a.stopped
}

// malformed is the failure of an event that does not parse.
func malformed(err error) error {
	return model.NewError(harness.CodeServer, "the provider sent a malformed stream event: "+err.Error(), err)
}

// event handles one stream event.
func (a *answer) event(ev sse.Event, emit func(model.Chunk) bool) error {
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return nil
	}
	var e wireEvent
	if err := json.Unmarshal(data, &e); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			return malformed(err)
		}
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "error":
		return classifyEvent(data).toError()
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			a.usage = &wireUsage{}
			a.usage.merge(e.Message.Usage)
		}
	case "content_block_start":
		if e.ContentBlock != nil {
			a.start(e.Index, e.ContentBlock, emit)
		}
	case "content_block_delta":
		if e.Delta != nil {
			a.delta(e.Index, e.Delta, emit)
		}
	case "content_block_stop":
		a.stop(e.Index, emit)
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil && *e.Delta.StopReason != "" {
			a.stopReason = *e.Delta.StopReason
			a.progress++
		}
		if e.Usage != nil {
			if a.usage == nil {
				a.usage = &wireUsage{}
			}
			a.usage.merge(e.Usage)
			a.progress++
		}
	case "message_stop":
		a.done = true
	}
	return nil
}

func (a *answer) start(index int, cb *wireBlockDoc, emit func(model.Chunk) bool) {
	if a.blocks == nil {
		a.blocks = map[int]*openBlock{}
	}
	ob := &openBlock{typ: cb.Type, signature: cb.Signature, input: cb.Input}
	a.blocks[index] = ob
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			a.emit(emit, model.Chunk{Type: model.ChunkText, Text: cb.Text})
		}
	case "thinking":
		if cb.Thinking != "" {
			a.emit(emit, model.Chunk{Type: model.ChunkReasoning, Text: cb.Thinking})
		}
	case "redacted_thinking":
		a.emit(emit, model.Chunk{Type: model.ChunkReasoning, Redacted: true, Signature: cb.Data})
	case "tool_use":
		ob.call = a.nextCall
		a.nextCall++
		a.emit(emit, model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: ob.call, ID: cb.ID, Name: cb.Name}})
	}
}

func (a *answer) delta(index int, d *wireDelta, emit func(model.Chunk) bool) {
	ob := a.blocks[index]
	switch d.Type {
	case "text_delta":
		if d.Text != "" {
			a.emit(emit, model.Chunk{Type: model.ChunkText, Text: d.Text})
		}
	case "thinking_delta":
		if d.Thinking != "" {
			a.emit(emit, model.Chunk{Type: model.ChunkReasoning, Text: d.Thinking})
		}
	case "signature_delta":
		if ob != nil {
			ob.signature += d.Signature
			a.progress++
		}
	case "input_json_delta":
		if ob == nil || ob.typ != "tool_use" {
			return
		}
		ob.gotInput = true
		if d.PartialJSON != "" {
			a.emit(emit, model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: ob.call, Arguments: d.PartialJSON}})
		}
	}
}

// stop ends a block: a thinking block with its signature; a tool call
// whose input came whole in its start (no deltas) with that input.
func (a *answer) stop(index int, emit func(model.Chunk) bool) {
	ob := a.blocks[index]
	if ob == nil {
		return
	}
	delete(a.blocks, index)
	switch ob.typ {
	case "thinking":
		if ob.signature != "" {
			a.emit(emit, model.Chunk{Type: model.ChunkReasoning, Signature: ob.signature})
		}
	case "tool_use":
		if in := bytes.TrimSpace(ob.input); !ob.gotInput && len(in) > 0 && string(in) != "{}" && string(in) != "null" {
			a.emit(emit, model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: ob.call, Arguments: string(in)}})
		}
	}
}

// whole handles a complete message sent instead of a stream.
func (a *answer) whole(data []byte, emit func(model.Chunk) bool) error {
	var top struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return malformed(err)
	}
	if top.Type == "error" || len(bytes.TrimSpace(top.Error)) > 0 && string(bytes.TrimSpace(top.Error)) != "null" {
		return classifyEvent(data).toError()
	}
	var msg wireMessageDoc
	if err := json.Unmarshal(data, &msg); err != nil {
		return malformed(err)
	}
	for i := range msg.Content {
		cb := msg.Content[i]
		a.start(i, &cb, emit)
		a.stop(i, emit)
		if a.stopped {
			return nil
		}
	}
	if msg.StopReason != nil {
		a.stopReason = *msg.StopReason
	}
	if msg.Usage != nil {
		a.usage = &wireUsage{}
		a.usage.merge(msg.Usage)
	}
	a.done = true
	return nil
}
