package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/sse"
)

// The answer's wire shapes, read tolerantly: every provider of the
// OpenAI format is read by the same code, and what one of them spells
// differently is accepted beside the standard spelling.
//
//   - Reasoning: "reasoning_content" (DeepSeek, Qwen, Z.ai, Moonshot,
//     vLLM), "reasoning" (OpenRouter, Groq, Cerebras, Ollama, newer vLLM),
//     "reasoning_details" (OpenRouter, read only when neither of the
//     others is there), or "thinking" content parts (Mistral's Magistral).
//   - Content: a string, null, or an array of typed parts ("text",
//     "thinking"), in deltas and in whole messages.
//   - Usage: top-level "usage", or "x_groq.usage" (Groq's stream); token
//     counts as integers, floats or digit strings; DeepSeek's
//     prompt_cache_hit/miss_tokens or OpenAI's cached_tokens.
//   - Errors: an "error" member that is null, false, "" or {} is no
//     error (some gateways send "error": null on every chunk); an "error"
//     object or an "event: error" event is one.
//   - Tool-call arguments as a string or as a JSON object.

type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	XGroq   *struct {
		Usage json.RawMessage `json:"usage"`
	} `json:"x_groq"`
	Error json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        flexInt      `json:"index"`
	Delta        *wireMessage `json:"delta"`
	Message      *wireMessage `json:"message"`
	FinishReason *string      `json:"finish_reason"`
	// Usage inside the choice is Moonshot's place for it in a stream.
	Usage json.RawMessage `json:"usage"`
}

type wireMessage struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
	FunctionCall     *wireFunction   `json:"function_call"`
}

type wireToolCall struct {
	Index    *flexInt     `json:"index"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type wireUsage struct {
	PromptTokens     flexInt  `json:"prompt_tokens"`
	CompletionTokens flexInt  `json:"completion_tokens"`
	TotalTokens      flexInt  `json:"total_tokens"`
	InputTokens      flexInt  `json:"input_tokens"`
	OutputTokens     flexInt  `json:"output_tokens"`
	CacheHit         *flexInt `json:"prompt_cache_hit_tokens"`
	CacheMiss        *flexInt `json:"prompt_cache_miss_tokens"`
	PromptDetails    *struct {
		CachedTokens *flexInt `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails *struct {
		ReasoningTokens flexInt `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// flexInt is a token count or index as providers write it: an integer,
// a float, a digit string, or null (zero).
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 1 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	if len(b) == 0 || string(b) == "null" {
		*n = 0
		return nil
	}
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*n = flexInt(v)
		return nil
	}
	if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= -1e15 && f <= 1e15 {
		*n = flexInt(f)
		return nil
	}
	return nil // not a number: zero, and the rest of the chunk still counts
}

// answer is the state of one answer being read.
type answer struct {
	finish  string
	usage   *harness.Usage
	stopped bool
	// progress counts the pieces of the answer read so far (chunks
	// handed on, usage, finish reasons), for the call's watch.
	progress int
	// calls maps the provider's tool-call index to ours; see callIndex.
	calls    map[int64]*callSlot
	nextCall int
}

type callSlot struct {
	id    string
	index int
}

// callIndex maps a tool-call delta to the index the loop's assembler groups
// by. Normally that is the provider's index; but some endpoints send
// every parallel call whole with the same index (or none), so a new id
// at a known index starts a new call.
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

// decode reads one chunk or document. A type mismatch in one member
// leaves that member empty and keeps the rest; JSON that does not parse
// is a failure.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var typ *json.UnmarshalTypeError
	if err == nil || errors.As(err, &typ) {
		return nil
	}
	return model.NewError(harness.CodeServer, "the provider sent a malformed answer chunk: "+err.Error(), err)
}

// event handles one stream event.
func (a *answer) event(ev sse.Event, emit func(model.Chunk) bool) error {
	data := bytes.TrimSpace(ev.Data)
	if ev.Name == "error" {
		return classifyEvent(data).toError()
	}
	if len(data) == 0 {
		return nil
	}
	return a.chunk(data, false, emit)
}

// document handles a whole, non-streamed answer (or a JSON document
// sent in reply to a streaming request): an error, or the completion.
func (a *answer) document(data []byte, emit func(model.Chunk) bool) error {
	return a.chunk(data, true, emit)
}

// chunk decodes a stream event's data (whole false) or a whole answer,
// returns the error it carries, reads its usage, hands on the message of
// its first choice and records how it finished. A stream event's message
// is its delta and a whole answer's its message, each taking the other
// when it has none: some servers send whole messages in a stream. A
// stream event's empty finish reason is no reason.
func (a *answer) chunk(data []byte, whole bool, emit func(model.Chunk) bool) error {
	var c wireChunk
	if err := decode(data, &c); err != nil {
		return err
	}
	if isError(c.Error) {
		return classifyEvent(data).toError()
	}
	a.readUsage(&c)
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		msg, other := ch.Delta, ch.Message
		if whole {
			msg, other = other, msg
		}
		if msg == nil {
			msg = other
		}
		if msg != nil && !a.message(msg, whole, emit) {
			return nil
		}
		if ch.FinishReason != nil && (whole || *ch.FinishReason != "") {
			a.finish = *ch.FinishReason
			a.progress++
		}
	}
	return nil
}

// isError reports whether an "error" member says something.
func isError(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "", "null", "false", `""`, "{}", "[]":
		return false
	}
	return true
}

func (a *answer) readUsage(c *wireChunk) {
	raw := c.Usage
	if !isObject(raw) && c.XGroq != nil {
		raw = c.XGroq.Usage
	}
	for i := range c.Choices {
		if !isObject(raw) && c.Choices[i].Index == 0 {
			raw = c.Choices[i].Usage
		}
	}
	if !isObject(raw) {
		return
	}
	var u wireUsage
	var typ *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, &u); err != nil && !errors.As(err, &typ) {
		return
	}
	out := usageOf(&u)
	a.usage = &out
	a.progress++
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 1 && raw[0] == '{'
}

// usageOf converts a usage report. Reasoning is part of the output, as
// harness.Usage counts it: a provider that leaves it out of
// completion_tokens (xAI does; its total_tokens then counts it apart,
// and the reasoning may exceed the completion) has it added back.
func usageOf(u *wireUsage) harness.Usage {
	in, outTok := int64(u.PromptTokens), int64(u.CompletionTokens)
	if in == 0 && outTok == 0 {
		in, outTok = int64(u.InputTokens), int64(u.OutputTokens)
	}
	var reasoning int64
	if u.CompletionDetails != nil {
		reasoning = int64(u.CompletionDetails.ReasoningTokens)
	}
	total := int64(u.TotalTokens)
	if reasoning > 0 && (reasoning > outTok || total > in+outTok && total == in+outTok+reasoning) {
		outTok += reasoning
	}
	out := harness.Usage{InputTokens: max(0, in), OutputTokens: max(0, outTok), ReasoningTokens: max(0, reasoning)}
	switch {
	case u.CacheHit != nil || u.CacheMiss != nil:
		if u.CacheHit != nil {
			out.CacheHitTokens = max(0, int64(*u.CacheHit))
		}
		if u.CacheMiss != nil {
			out.CacheMissTokens = max(0, int64(*u.CacheMiss))
		}
	case u.PromptDetails != nil && u.PromptDetails.CachedTokens != nil:
		out.CacheHitTokens = max(0, int64(*u.PromptDetails.CachedTokens))
		out.CacheMissTokens = max(0, out.InputTokens-out.CacheHitTokens)
	}
	return out
}

// message yields what one delta or message holds: reasoning, text, tool
// calls. whole marks a complete message, whose tool calls are indexed by
// their position. It returns false when emit did.
func (a *answer) message(msg *wireMessage, whole bool, emit func(model.Chunk) bool) bool {
	text, partsReasoning := contentOf(msg.Content)
	r := jsonString(msg.ReasoningContent)
	if r == "" {
		r = jsonString(msg.Reasoning)
	}
	if r == "" && partsReasoning == "" {
		r = reasoningDetails(msg.ReasoningDetails)
	}
	r += partsReasoning
	if r != "" && !a.emit(emit, model.Chunk{Type: model.ChunkReasoning, Text: r}) {
		return false
	}
	if text != "" && !a.emit(emit, model.Chunk{Type: model.ChunkText, Text: text}) {
		return false
	}
	if msg.Refusal != nil && *msg.Refusal != "" && !a.emit(emit, model.Chunk{Type: model.ChunkText, Text: *msg.Refusal}) {
		return false
	}
	calls := msg.ToolCalls
	if len(calls) == 0 && msg.FunctionCall != nil {
		calls = []wireToolCall{{Function: *msg.FunctionCall}}
	}
	for j := range calls {
		tc := &calls[j]
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are not ours
		}
		args := argumentsOf(tc.Function.Arguments)
		if tc.ID == "" && tc.Function.Name == "" && args == "" {
			continue
		}
		var idx int
		switch {
		case whole:
			idx = a.nextCall
			a.nextCall++
		case tc.Index != nil:
			idx = a.callIndex(int64(*tc.Index), tc.ID)
		default:
			idx = a.callIndex(0, tc.ID)
		}
		delta := model.ToolCallDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: args}
		if !a.emit(emit, model.Chunk{Type: model.ChunkToolCall, ToolCall: delta}) {
			return false
		}
	}
	return true
}

// contentOf reads a content member: a string, or typed parts whose
// "text" parts are the answer and whose "thinking" parts are reasoning.
func contentOf(raw json.RawMessage) (text, reasoning string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", ""
	}
	switch raw[0] {
	case '"':
		return jsonString(raw), ""
	case '{':
		raw = append(append([]byte{'['}, raw...), ']')
	case '[':
	default:
		return "", ""
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var tb, rb []byte
	for _, p := range parts {
		var part struct {
			Type     string          `json:"type"`
			Text     json.RawMessage `json:"text"`
			Thinking json.RawMessage `json:"thinking"`
		}
		if json.Unmarshal(p, &part) != nil {
			if s := jsonString(p); s != "" {
				tb = append(tb, s...)
			}
			continue
		}
		switch part.Type {
		case "text", "output_text", "":
			tb = append(tb, jsonString(part.Text)...)
		case "thinking", "reasoning":
			th := part.Thinking
			if len(th) == 0 {
				th = part.Text
			}
			t, r := contentOf(th)
			rb = append(append(rb, t...), r...)
		}
	}
	return string(tb), string(rb)
}

// reasoningDetails reads OpenRouter's reasoning_details: text and
// summary entries (encrypted ones carry nothing readable).
func reasoningDetails(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '[' {
		return ""
	}
	var details []struct {
		Text    json.RawMessage `json:"text"`
		Summary json.RawMessage `json:"summary"`
	}
	if json.Unmarshal(raw, &details) != nil {
		return ""
	}
	var b []byte
	for _, d := range details {
		if s := jsonString(d.Text); s != "" {
			b = append(b, s...)
		} else {
			b = append(b, jsonString(d.Summary)...)
		}
	}
	return string(b)
}

// argumentsOf reads tool-call arguments: a JSON string's text, or the
// JSON of an object some servers send instead.
func argumentsOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		return jsonString(raw)
	}
	if raw[0] == '{' || raw[0] == '[' {
		return string(raw)
	}
	return ""
}

// jsonString returns a JSON string's text; anything else gives "".
func jsonString(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if in := raw[1 : len(raw)-1]; raw[len(raw)-1] == '"' && bytes.IndexByte(in, '\\') < 0 && bytes.IndexByte(in, '"') < 0 && utf8.Valid(in) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
