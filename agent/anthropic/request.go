package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/imagetext"
	"github.com/go-harness/harness/internal/jsonenc"
	"github.com/go-harness/harness/internal/schemaprompt"
)

// Bounds of the images one request carries: Anthropic takes a 32 MB
// request and at most 100 images; base64 makes the bytes a third
// larger. Older images past either bound become placeholders.
const (
	imageBudget = 20 << 20
	maxImages   = 100
)

// maxBreakpoints is how many cache_control breakpoints a request may
// carry.
const maxBreakpoints = 4

// emptyToolResult stands in for a tool result with no text: the API
// refuses empty text blocks.
const emptyToolResult = "(no output)"

// emptyAnswer stands in for an assistant message with nothing the API
// takes back (an answer cut off during unsigned reasoning, say).
const emptyAnswer = "(no answer)"

var acceptedImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// wireMessage is one message of the request: its role and its content
// blocks, each encoded.
type wireMessage struct {
	role   string
	blocks []wireBlock
}

// wireBlock is one encoded content block; cacheable says whether it may
// carry a cache_control breakpoint (thinking blocks may not).
type wireBlock struct {
	json      []byte
	cacheable bool
	result    bool // a tool_result, which goes first in its message
}

// body builds the Messages API request body for req. The keys come in
// one fixed order: model, max_tokens, system, messages, tools,
// tool_choice, thinking, output_config, temperature, top_p, stream.
//
// Prompt caching: breakpoints ("cache_control") go on the stable
// prefix, at most four: the last tool definition, the system prompt,
// the end of the request's history before the model's last answer (the
// end of the previous request, so a long step's new blocks never push it
// out of the API's lookback window), and the end of the request (where
// the next request will read).
func (m *messagesModel) body(ctx context.Context, req *model.Request) ([]byte, error) {
	if req.Output != nil && !m.nativeOutput {
		// The endpoint may not take a schema: it goes to the model in a
		// user message at the end of the request.
		msg, err := schemaprompt.Message(req.Output.Schema)
		if err != nil {
			return nil, model.NewError(harness.CodeInvalidRequest, "the structured answer's schema is not valid JSON: "+err.Error(), nil)
		}
		r := *req
		r.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)], msg)
		req = &r
	}
	b := &builder{m: m, ctx: ctx, store: req.Images}
	msgs, err := b.messages(req.Messages)
	if err != nil {
		return nil, err
	}
	cc := m.cacheControl()
	breakpoints := 0
	var tools []byte
	if len(req.Tools) > 0 {
		tools, err = m.encodeTools(req.Tools, cc)
		if err != nil {
			return nil, err
		}
		if cc != nil {
			breakpoints++
		}
	}
	out := make([]byte, 0, 4096)
	out = append(out, '{')
	out = jsonenc.StringField(out, "model", m.info.Name)
	out = jsonenc.IntField(out, "max_tokens", m.send.maxTokens)
	if req.System != "" {
		out = append(jsonenc.Key(out, "system"), `[{"type":"text","text":`...)
		out = jsonenc.String(out, req.System)
		if cc != nil {
			out = append(jsonenc.Key(out, "cache_control"), cc...)
			breakpoints++
		}
		out = append(out, "}]"...)
	}
	if cc != nil {
		markBreakpoints(msgs, maxBreakpoints-breakpoints, cc)
	}
	out = append(jsonenc.Key(out, "messages"), '[')
	for i, msg := range msgs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"role":`...)
		out = jsonenc.String(out, msg.role)
		out = append(jsonenc.Key(out, "content"), '[')
		for j, blk := range msg.blocks {
			if j > 0 {
				out = append(out, ',')
			}
			out = append(out, blk.json...)
		}
		out = append(out, "]}"...)
	}
	out = append(out, ']')
	if tools != nil {
		out = append(jsonenc.Key(out, "tools"), tools...)
		if tc := m.toolChoice(); tc != nil {
			out = append(jsonenc.Key(out, "tool_choice"), tc...)
		}
	}
	s := &m.send
	if s.thinking != nil {
		out = append(jsonenc.Key(out, "thinking"), '{')
		switch {
		case !*s.thinking:
			out = jsonenc.StringField(out, "type", "disabled")
		case s.budget > 0:
			out = jsonenc.StringField(out, "type", "enabled")
			out = jsonenc.IntField(out, "budget_tokens", s.budget)
		default:
			out = jsonenc.StringField(out, "type", "adaptive")
		}
		if *s.thinking && s.display != "" {
			out = jsonenc.StringField(out, "display", s.display)
		}
		out = append(out, '}')
	}
	format, err := m.outputFormat(req.Output)
	if err != nil {
		return nil, err
	}
	if s.effort != "" || format != nil {
		out = append(jsonenc.Key(out, "output_config"), '{')
		if s.effort != "" {
			out = jsonenc.StringField(out, "effort", s.effort)
		}
		if format != nil {
			out = append(jsonenc.Key(out, "format"), format...)
		}
		out = append(out, '}')
	}
	if s.temperature != nil {
		out = jsonenc.FloatField(out, "temperature", *s.temperature)
	}
	if s.topP != nil {
		out = jsonenc.FloatField(out, "top_p", *s.topP)
	}
	out = jsonenc.BoolField(out, "stream", true)
	return append(out, '}'), nil
}

// cacheControl is the encoded cache_control of a breakpoint, or nil
// when caching is off.
func (m *messagesModel) cacheControl() []byte {
	switch {
	case m.send.noCache:
		return nil
	case m.send.cacheTTL == "1h":
		return []byte(`{"type":"ephemeral","ttl":"1h"}`)
	}
	return []byte(`{"type":"ephemeral"}`)
}

// markBreakpoints puts up to n breakpoints on the history: on the last
// block of the request, and on the last block of the message before the
// model's last answer (where the previous request ended). A block that
// cannot carry one (thinking) is passed over for the one before it. cc
// is the encoded cache_control.
func markBreakpoints(msgs []wireMessage, n int, cc []byte) {
	if n <= 0 || len(msgs) == 0 {
		return
	}
	targets := []int{len(msgs) - 1}
	for i := len(msgs) - 1; i >= 1; i-- {
		if msgs[i].role == "assistant" {
			if i-1 != len(msgs)-1 {
				targets = append(targets, i-1)
			}
			break
		}
	}
	for _, mi := range targets[:min(n, len(targets))] {
		blocks := msgs[mi].blocks
		for bi := len(blocks) - 1; bi >= 0; bi-- {
			if blocks[bi].cacheable {
				blk := blocks[bi].json
				marked := append(blk[:len(blk)-1:len(blk)-1], `,"cache_control":`...)
				blocks[bi].json = append(append(marked, cc...), '}')
				break
			}
		}
	}
}

// encodeTools encodes the tool list, each schema's bytes as they are
// (compacted), with a breakpoint on the last tool when cc is set.
func (m *messagesModel) encodeTools(tools []model.Tool, cc []byte) ([]byte, error) {
	out := []byte{'['}
	var schema bytes.Buffer
	for i, spec := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		schema.Reset()
		if len(bytes.TrimSpace(spec.Parameters)) == 0 {
			schema.WriteString(`{"type":"object","properties":{}}`)
		} else if err := json.Compact(&schema, spec.Parameters); err != nil {
			return nil, model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("tool %q has an input schema that is not valid JSON; fix the tool's Spec.InputSchema", spec.Name), nil)
		}
		out = append(out, '{')
		out = jsonenc.StringField(out, "name", spec.Name)
		if spec.Description != "" {
			out = jsonenc.StringField(out, "description", spec.Description)
		}
		out = append(jsonenc.Key(out, "input_schema"), schema.Bytes()...)
		if cc != nil && i == len(tools)-1 {
			out = append(jsonenc.Key(out, "cache_control"), cc...)
		}
		out = append(out, '}')
	}
	return append(out, ']'), nil
}

// toolChoice encodes the tool choice, or nil for the API's default.
func (m *messagesModel) toolChoice() []byte {
	s := &m.send
	var out []byte
	switch s.toolChoice {
	case "", "auto":
		if s.parallel == nil || *s.parallel {
			return nil
		}
		out = []byte(`{"type":"auto"`)
	case "none":
		return []byte(`{"type":"none"}`)
	case "required":
		out = []byte(`{"type":"any"`)
	default:
		out = jsonenc.StringField([]byte(`{"type":"tool"`), "name", s.toolChoice)
	}
	if s.parallel != nil && !*s.parallel {
		out = jsonenc.BoolField(out, "disable_parallel_tool_use", true)
	}
	return append(out, '}')
}

// outputFormat encodes a structured answer's format for Anthropic's
// own API, or nil.
func (m *messagesModel) outputFormat(o *model.Output) ([]byte, error) {
	if o == nil || !m.nativeOutput {
		return nil, nil
	}
	var schema bytes.Buffer
	if len(bytes.TrimSpace(o.Schema)) == 0 {
		schema.WriteString(`{"type":"object"}`)
	} else if err := json.Compact(&schema, o.Schema); err != nil {
		return nil, model.NewError(harness.CodeInvalidRequest, "the structured answer's schema is not valid JSON: "+err.Error(), nil)
	}
	out := []byte(`{"type":"json_schema","schema":`)
	out = append(out, schema.Bytes()...)
	return append(out, '}'), nil
}

// builder turns provider-neutral messages into Messages API messages.
type builder struct {
	m      *messagesModel
	ctx    context.Context
	store  model.ImageSource
	inline map[*harness.Image]bool
}

// messages converts the history. User and tool messages in a row make
// one user message, its tool results first; assistant messages in a row
// one assistant message.
func (b *builder) messages(msgs []harness.Message) ([]wireMessage, error) {
	b.planImages(msgs)
	var out []wireMessage
	add := func(role string, blocks []wireBlock) {
		if n := len(out); n > 0 && out[n-1].role == role {
			out[n-1].blocks = append(out[n-1].blocks, blocks...)
			return
		}
		out = append(out, wireMessage{role: role, blocks: blocks})
	}
	for _, msg := range msgs {
		var blocks []wireBlock
		var err error
		role := "user"
		switch msg.Role {
		case harness.RoleUser:
			blocks, err = b.userBlocks(msg.Content)
		case harness.RoleTool:
			blocks, err = b.toolResults(msg)
		case harness.RoleAssistant:
			role = "assistant"
			blocks = b.assistant(msg)
		default:
			err = model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("message role %q is not one the model understands", msg.Role), nil)
		}
		if err != nil {
			return nil, err
		}
		if len(blocks) > 0 {
			add(role, blocks)
		}
	}
	for i := range out {
		if out[i].role == "user" {
			// Tool results open the message that carries them.
			slices.SortStableFunc(out[i].blocks, func(x, y wireBlock) int {
				switch {
				case x.result && !y.result:
					return -1
				case y.result && !x.result:
					return 1
				}
				return 0
			})
		}
	}
	return out, nil
}

func textBlock(s string) wireBlock {
	out := jsonenc.String([]byte(`{"type":"text","text":`), s)
	return wireBlock{json: append(out, '}'), cacheable: true}
}

// userBlocks encodes a user message's text and images; images the model
// cannot be sent become text placeholders.
func (b *builder) userBlocks(content []harness.Block) ([]wireBlock, error) {
	var out []wireBlock
	for _, blk := range content {
		switch blk.Type {
		case harness.BlockText:
			if blk.Text != "" {
				out = append(out, textBlock(blk.Text))
			}
		case harness.BlockImage:
			if blk.Image == nil {
				continue
			}
			ib, err := b.image(blk.Image)
			if err != nil {
				return nil, err
			}
			out = append(out, ib)
		}
	}
	return out, nil
}

// toolResults encodes a tool message's result, images included.
func (b *builder) toolResults(msg harness.Message) ([]wireBlock, error) {
	var out []wireBlock
	for _, blk := range msg.Content {
		if blk.Type != harness.BlockToolResult || blk.ToolResult == nil {
			continue
		}
		r := blk.ToolResult
		content, err := b.userBlocks(r.Content)
		if err != nil {
			return nil, err
		}
		if len(content) == 0 {
			content = []wireBlock{textBlock(emptyToolResult)}
		}
		enc := jsonenc.String([]byte(`{"type":"tool_result","tool_use_id":`), r.CallID)
		enc = append(jsonenc.Key(enc, "content"), '[')
		for i, c := range content {
			if i > 0 {
				enc = append(enc, ',')
			}
			enc = append(enc, c.json...)
		}
		enc = append(enc, ']')
		if r.IsError {
			enc = jsonenc.BoolField(enc, "is_error", true)
		}
		out = append(out, wireBlock{json: append(enc, '}'), cacheable: true, result: true})
	}
	return out, nil
}

// assistant encodes an assistant message: its signed reasoning blocks
// (thinking with its signature, redacted thinking with its data) exactly
// as they came, its text, its tool calls. Reasoning without a signature
// (from another provider, after a fallback) is left out: the API takes
// back only the thinking it signed.
func (b *builder) assistant(msg harness.Message) []wireBlock {
	var out []wireBlock
	for _, blk := range msg.Content {
		switch blk.Type {
		case harness.BlockReasoning:
			switch {
			case blk.Redacted && blk.Signature != "":
				enc := jsonenc.String([]byte(`{"type":"redacted_thinking","data":`), blk.Signature)
				out = append(out, wireBlock{json: append(enc, '}')})
			case blk.Signature != "":
				enc := jsonenc.String([]byte(`{"type":"thinking","thinking":`), blk.Text)
				enc = jsonenc.StringField(enc, "signature", blk.Signature)
				out = append(out, wireBlock{json: append(enc, '}')})
			}
		case harness.BlockText:
			if blk.Text != "" {
				out = append(out, textBlock(blk.Text))
			}
		case harness.BlockToolCall:
			tc := blk.ToolCall
			if tc == nil {
				continue
			}
			enc := jsonenc.String([]byte(`{"type":"tool_use","id":`), tc.ID)
			enc = jsonenc.StringField(enc, "name", tc.Name)
			enc = append(jsonenc.Key(enc, "input"), toolInput(tc.Arguments)...)
			out = append(out, wireBlock{json: append(enc, '}'), cacheable: true})
		}
	}
	if len(out) == 0 {
		out = append(out, textBlock(emptyAnswer))
	}
	return out
}

// toolInput returns a call's arguments as the JSON object the API
// takes: the arguments compacted when they are one, else an empty
// object (the call was answered with an invalid_arguments result).
func toolInput(args string) []byte {
	var buf bytes.Buffer
	trimmed := strings.TrimSpace(args)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) && json.Compact(&buf, []byte(trimmed)) == nil {
		return buf.Bytes()
	}
	return []byte("{}")
}

// planImages picks the images sent as images: none for a model without
// image input; otherwise the newest that fit the byte and count bounds.
func (b *builder) planImages(msgs []harness.Message) {
	b.inline = map[*harness.Image]bool{}
	if !slices.Contains(b.m.info.Input, harness.ModalityImage) {
		return
	}
	var all []*harness.Image
	for mi := range msgs {
		for bi := range msgs[mi].Content {
			blk := &msgs[mi].Content[bi]
			switch {
			case blk.Type == harness.BlockImage && blk.Image != nil:
				all = append(all, blk.Image)
			case blk.Type == harness.BlockToolResult && blk.ToolResult != nil:
				for _, c := range blk.ToolResult.Content {
					if c.Type == harness.BlockImage && c.Image != nil {
						all = append(all, c.Image)
					}
				}
			}
		}
	}
	var total int64
	for i := len(all) - 1; i >= 0 && len(b.inline) < maxImages; i-- {
		if total+all[i].Size > imageBudget {
			break
		}
		total += all[i].Size
		b.inline[all[i]] = true
	}
}

// image encodes an image block, or the text placeholder that stands in
// for it. It fails only when ctx ends.
func (b *builder) image(img *harness.Image) (wireBlock, error) {
	reason := ""
	switch {
	case !slices.Contains(b.m.info.Input, harness.ModalityImage):
		reason = "this model does not accept image input"
	case !acceptedImageTypes[img.MediaType]:
		reason = "its type is not one the model accepts (PNG, JPEG, GIF, WebP)"
	case !b.inline[img]:
		reason = "older images are left out to keep the request within the provider's size limit"
	case b.store == nil:
		reason = "no attachment store is configured to load it from"
	}
	if reason != "" {
		return textBlock(imagetext.Placeholder(img, reason)), nil
	}
	data, err := b.store.Get(b.ctx, img.Digest)
	if err != nil {
		if cerr := b.ctx.Err(); cerr != nil {
			return wireBlock{}, model.NewError(harness.CodeAborted, "the model call was cancelled", cerr)
		}
		b.m.logger.Warn("loading an image for the model failed", "digest", img.Digest, "error", err)
		return textBlock(imagetext.Placeholder(img, "it could not be loaded: "+err.Error())), nil
	}
	enc := []byte(`{"type":"image","source":{"type":"base64","media_type":`)
	enc = jsonenc.String(enc, img.MediaType)
	enc = append(jsonenc.Key(enc, "data"), '"')
	enc = base64.StdEncoding.AppendEncode(enc, data)
	return wireBlock{json: append(enc, `"}}`...), cacheable: true}, nil
}
