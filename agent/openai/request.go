package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/imagetext"
)

// imageBudget bounds the image bytes one request carries. Base64 makes
// them a third larger, which keeps a request well under DeepSeek's 48 MiB
// body limit; older images past the budget become placeholders.
const imageBudget = 32 << 20

// emptyToolResult stands in for a tool result with no text, which some
// providers refuse.
const emptyToolResult = "(no output)"

// acceptedImageTypes are the encodings sent as images.
var acceptedImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// body builds the Chat Completions request body for req, and returns
// the number of messages it holds.
//
// The keys come in one fixed order: model, messages, tools, tool_choice,
// parallel_tool_calls, stream, stream_options, max_tokens (or
// max_completion_tokens), temperature, top_p, seed, reasoning_effort,
// thinking, response_format. Each history message is encoded once and
// copied into every later request (see historyCache).
func (m *Model) body(ctx context.Context, req *model.Request) ([]byte, int, error) {
	conv := m.history.conversation(m.rules.dialect, req.Messages)
	if conv != nil {
		conv.mu.Lock()
		defer conv.mu.Unlock()
	}
	size := 1024
	if conv != nil && conv.lastSize > size {
		size = conv.lastSize + conv.lastSize/8
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	out = appendStringField(out, "model", m.info.Name)
	out = appendKey(out, "messages")
	out = append(out, '[')
	b := &messageBuilder{m: m, ctx: ctx, store: req.Images, conv: conv, out: out}
	if err := b.build(req); err != nil {
		return nil, 0, err
	}
	out = append(b.out, ']')
	if len(req.Tools) > 0 {
		tools, err := m.encodeTools(conv, req.Tools)
		if err != nil {
			return nil, 0, err
		}
		out = appendKey(out, "tools")
		out = append(out, tools...)
	}
	s := &m.send
	if s.toolChoice != "" && len(req.Tools) > 0 {
		out = appendKey(out, "tool_choice")
		switch s.toolChoice {
		case "auto", "none", "required":
			out = appendString(out, s.toolChoice)
		default:
			out = append(out, `{"type":"function","function":{"name":`...)
			out = appendString(out, s.toolChoice)
			out = append(out, "}}"...)
		}
	}
	if s.parallel != nil && len(req.Tools) > 0 {
		out = appendBoolField(out, "parallel_tool_calls", *s.parallel)
	}
	if m.streaming {
		out = appendBoolField(out, "stream", true)
		out = append(out, `,"stream_options":{"include_usage":true}`...)
	}
	if s.maxTokens > 0 {
		key := "max_tokens"
		if m.rules.maxCompletionTokens {
			key = "max_completion_tokens"
		}
		out = appendIntField(out, key, s.maxTokens)
	}
	if s.temperature != nil {
		out = appendFloatField(out, "temperature", *s.temperature)
	}
	if s.topP != nil {
		out = appendFloatField(out, "top_p", *s.topP)
	}
	if s.seed != nil && m.rules.seed {
		out = appendIntField(out, "seed", *s.seed)
	}
	if s.effort != "" {
		out = appendStringField(out, "reasoning_effort", s.effort)
	}
	if s.thinking != nil && m.rules.thinkingObject {
		typ := "disabled"
		if *s.thinking {
			typ = "enabled"
		}
		out = appendKey(out, "thinking")
		out = append(out, `{"type":`...)
		out = appendString(out, typ)
		out = append(out, '}')
	}
	rf, err := m.responseFormat(req.Output)
	if err != nil {
		return nil, 0, err
	}
	if rf != nil {
		out = appendKey(out, "response_format")
		out = append(out, rf...)
	}
	out = append(out, '}')
	if conv != nil {
		conv.lastSize = len(out)
	}
	return out, b.count, nil
}

// responseFormat encodes the response format: a structured answer's
// schema ("json_schema" where the dialect takes it, strict when the
// schema is closed; "json_object" elsewhere), else "json_object" when
// [WithJSONOutput] asked for it, else nothing.
func (m *Model) responseFormat(o *model.Output) ([]byte, error) {
	if o == nil {
		if m.send.jsonOutput {
			return []byte(`{"type":"json_object"}`), nil
		}
		return nil, nil
	}
	if !m.rules.jsonSchema {
		return []byte(`{"type":"json_object"}`), nil
	}
	var schema bytes.Buffer
	if len(o.Schema) == 0 {
		schema.WriteString(`{"type":"object"}`)
	} else if err := json.Compact(&schema, o.Schema); err != nil {
		return nil, model.NewError(harness.CodeInvalidRequest, "the structured answer's schema is not valid JSON: "+err.Error(), nil)
	}
	name := o.Name
	if name == "" {
		name = "answer"
	}
	out := []byte(`{"type":"json_schema","json_schema":{`)
	out = appendStringField(out, "name", name)
	out = appendKey(out, "schema")
	out = append(out, schema.Bytes()...)
	out = appendBoolField(out, "strict", checkStrict(schema.Bytes()) == nil)
	return append(out, "}}"...), nil
}

// encodeTools encodes the tool list: each schema's bytes go out as they
// are (compacted), keys in the tool's own order, since a map would
// reorder them and a stable prefix is what providers cache. The
// encoding is kept with the conversation while its tools stay the same.
func (m *Model) encodeTools(conv *conversation, tools []model.Tool) ([]byte, error) {
	if conv != nil && sameTools(conv.tools, tools) {
		return conv.toolsJSON, nil
	}
	out := []byte{'['}
	var schema bytes.Buffer
	for i, spec := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		schema.Reset()
		if len(spec.Parameters) == 0 {
			schema.WriteString(`{"type":"object","properties":{}}`)
		} else if err := json.Compact(&schema, spec.Parameters); err != nil {
			return nil, model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("tool %q has an input schema that is not valid JSON; fix the tool's Spec.InputSchema", spec.Name), nil)
		}
		if m.send.strict {
			if err := m.checkStrictTool(spec.Name, schema.Bytes()); err != nil {
				return nil, err
			}
		}
		out = append(out, `{"type":"function","function":{`...)
		out = appendStringField(out, "name", spec.Name)
		if spec.Description != "" {
			out = appendStringField(out, "description", spec.Description)
		}
		out = appendKey(out, "parameters")
		out = append(out, schema.Bytes()...)
		if m.send.strict {
			out = appendBoolField(out, "strict", true)
		}
		out = append(out, "}}"...)
	}
	out = append(out, ']')
	if conv != nil {
		conv.tools, conv.toolsJSON = append([]model.Tool(nil), tools...), out
	}
	return out, nil
}

func sameTools(a, b []model.Tool) bool {
	if len(a) != len(b) || a == nil {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// checkStrictTool checks a tool's compacted schema for strict mode,
// remembering the schemas that passed.
func (m *Model) checkStrictTool(name string, schema []byte) error {
	if _, ok := m.strictOK.Load(string(schema)); ok {
		return nil
	}
	if err := checkStrict(schema); err != nil {
		return model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("tool %q cannot be used in strict mode: %v; close the schema or turn strict tools off", name, err), nil)
	}
	m.strictOK.Store(string(schema), true)
	return nil
}

// historyCache keeps the encoded messages of the last few
// conversations, so a request re-encodes only what is new since the
// last one: the history is append-only, and a message keeps its content
// slice for as long as it is unchanged (the loop replaces the slice to
// change a message, never its blocks in place). A message is recognised
// by its role and the identity and length of its content slice, as the
// loop's request fingerprints recognise it; a conversation by its first
// message and the dialect.
type historyCache struct {
	mu    sync.Mutex
	convs []*conversation // least recently used first
}

// maxConversations bounds the conversations a model keeps encodings of.
const maxConversations = 8

type msgKey struct {
	first *harness.Block
	n     int
	role  harness.Role
}

func keyOf(msg *harness.Message) msgKey {
	k := msgKey{n: len(msg.Content), role: msg.Role}
	if k.n > 0 {
		k.first = &msg.Content[0]
	}
	return k
}

// conversation is the cache of one conversation. Its mutex is held
// while a request of it is built.
type conversation struct {
	mu      sync.Mutex
	dialect Dialect
	id      msgKey
	// units[i] is the encoding of the output messages that start at
	// input message i, nil when none is kept.
	units     []*unit
	system    string
	sysJSON   []byte
	tools     []model.Tool
	toolsJSON []byte
	lastSize  int
}

// unit is the encoding of the output messages made from a run of input
// messages: an assistant message, a tool message's results, or a run
// of user messages merged into one.
type unit struct {
	keys  []msgKey
	json  []byte // comma-separated messages
	count int    // output messages
}

// conversation returns the cache of the conversation msgs belongs to,
// or nil when it cannot be recognised.
func (h *historyCache) conversation(d Dialect, msgs []harness.Message) *conversation {
	if len(msgs) == 0 || len(msgs[0].Content) == 0 {
		return nil
	}
	id := keyOf(&msgs[0])
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.convs) - 1; i >= 0; i-- {
		if c := h.convs[i]; c.id == id && c.dialect == d {
			if i != len(h.convs)-1 {
				copy(h.convs[i:], h.convs[i+1:])
				h.convs[len(h.convs)-1] = c
			}
			return c
		}
	}
	c := &conversation{dialect: d, id: id}
	if len(h.convs) >= maxConversations {
		copy(h.convs, h.convs[1:])
		h.convs = h.convs[:len(h.convs)-1]
	}
	h.convs = append(h.convs, c)
	return c
}

// cached returns the unit kept for msgs[i:j], or nil.
func (c *conversation) cached(msgs []harness.Message, i, j int) *unit {
	if c == nil || i >= len(c.units) {
		return nil
	}
	u := c.units[i]
	if u == nil || len(u.keys) != j-i {
		return nil
	}
	for k := range u.keys {
		if u.keys[k] != keyOf(&msgs[i+k]) {
			return nil
		}
	}
	return u
}

// keep stores the encoding of msgs[i:j].
func (c *conversation) keep(msgs []harness.Message, i, j int, encoded []byte, count int) {
	if c == nil {
		return
	}
	if len(c.units) < len(msgs) {
		c.units = append(c.units, make([]*unit, len(msgs)-len(c.units))...)
	}
	u := &unit{keys: make([]msgKey, j-i), json: bytes.Clone(encoded), count: count}
	for k := range u.keys {
		u.keys[k] = keyOf(&msgs[i+k])
	}
	c.units[i] = u
}

// messageBuilder turns provider-neutral messages into Chat Completions
// messages, appended to out as JSON.
//
// Consecutive user messages (a user message after a reminder, the
// images of a step's tool results followed by a reminder) are merged into
// one: some providers refuse two user messages in a row, and all of them
// read a merged message the same way. Merging never changes a message
// already sent, because what follows a user run is always an assistant
// message.
type messageBuilder struct {
	m      *Model
	ctx    context.Context
	store  model.ImageSource
	conv   *conversation
	inline map[*harness.Image]bool
	out    []byte
	count  int

	// The user message being gathered.
	parts    []userPart
	hasImage bool
}

type userPart struct {
	text  string
	image string // a data: URL
}

func (b *messageBuilder) comma() {
	if last := b.out[len(b.out)-1]; last != '[' {
		b.out = append(b.out, ',')
	}
}

func (b *messageBuilder) build(req *model.Request) error {
	b.planImages(req.Messages)
	if req.System != "" {
		b.comma()
		if c := b.conv; c != nil && c.sysJSON != nil && c.system == req.System {
			b.out = append(b.out, c.sysJSON...)
		} else {
			start := len(b.out)
			b.out = append(b.out, `{"role":"system","content":`...)
			b.out = appendString(b.out, req.System)
			b.out = append(b.out, '}')
			if c != nil {
				c.system, c.sysJSON = req.System, bytes.Clone(b.out[start:])
			}
		}
		b.count++
	}
	msgs := req.Messages
	for i := 0; i < len(msgs); {
		j := i + 1
		if msgs[i].Role == harness.RoleUser {
			for j < len(msgs) && msgs[j].Role == harness.RoleUser {
				j++
			}
		}
		if msgs[i].Role == harness.RoleAssistant {
			b.flush()
		}
		if len(b.parts) == 0 {
			if u := b.conv.cached(msgs, i, j); u != nil {
				b.comma()
				b.out = append(b.out, u.json...)
				b.count += u.count
				i = j
				continue
			}
		}
		pending := len(b.parts) > 0
		start, count := len(b.out), b.count
		var err error
		switch msgs[i].Role {
		case harness.RoleUser:
			for k := i; k < j && err == nil; k++ {
				err = b.user(msgs[k])
			}
			if err == nil {
				b.flush()
			}
		case harness.RoleAssistant:
			b.assistant(msgs[i])
		case harness.RoleTool:
			err = b.tool(msgs[i])
		default:
			err = model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("message role %q is not one the model understands", msgs[i].Role), nil)
		}
		if err != nil {
			return err
		}
		if !pending && len(b.parts) == 0 && b.count > count && !hasImages(msgs[i:j]) {
			enc := b.out[start:]
			if enc[0] == ',' {
				enc = enc[1:]
			}
			b.conv.keep(msgs, i, j, enc, b.count-count)
		}
		i = j
	}
	b.flush()
	return nil
}

// hasImages reports whether any of msgs holds an image, directly or in
// a tool result: their encoding depends on the image budget.
func hasImages(msgs []harness.Message) bool {
	for _, msg := range msgs {
		for _, blk := range msg.Content {
			switch {
			case blk.Type == harness.BlockImage:
				return true
			case blk.Type == harness.BlockToolResult && blk.ToolResult != nil:
				for _, c := range blk.ToolResult.Content {
					if c.Type == harness.BlockImage {
						return true
					}
				}
			}
		}
	}
	return false
}

// planImages picks the images sent as images: none for a model without
// image input; otherwise the newest ones that fit the budget.
func (b *messageBuilder) planImages(msgs []harness.Message) {
	if !b.m.info.Accepts(harness.ModalityImage) {
		return
	}
	var all []*harness.Image
	for _, msg := range msgs {
		for _, blk := range msg.Content {
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
	b.inline = map[*harness.Image]bool{}
	var total int64
	for i := len(all) - 1; i >= 0; i-- {
		if total+all[i].Size > imageBudget {
			break
		}
		total += all[i].Size
		b.inline[all[i]] = true
	}
}

// image resolves an image to a data: URL, or to the reason it is not
// sent. It fails only when ctx ends.
func (b *messageBuilder) image(img *harness.Image) (dataURL, reason string, err error) {
	switch {
	case !b.m.info.Accepts(harness.ModalityImage):
		return "", "this model does not accept image input", nil
	case !acceptedImageTypes[img.MediaType]:
		return "", "its type is not one the model accepts (PNG, JPEG, GIF, WebP)", nil
	case !b.inline[img]:
		return "", "older images are left out to keep the request within the provider's size limit", nil
	case b.store == nil:
		return "", "no attachment store is configured to load it from", nil
	}
	data, err := b.store.Get(b.ctx, img.Digest)
	if err != nil {
		if cerr := b.ctx.Err(); cerr != nil {
			return "", "", model.NewError(harness.CodeAborted, "the model call was cancelled", cerr)
		}
		b.m.logger.Warn("loading an image for the model failed", "digest", img.Digest, "error", err)
		return "", "it could not be loaded: " + err.Error(), nil
	}
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(data), "", nil
}

// describeImage names an image for the model.
func describeImage(img *harness.Image) string { return imagetext.Describe(img) }

// placeholder is the text an image not sent is replaced by.
func placeholder(img *harness.Image, reason string) string {
	return imagetext.Placeholder(img, reason)
}

func (b *messageBuilder) addText(s string) {
	b.parts = append(b.parts, userPart{text: s})
}

func (b *messageBuilder) addImage(url string) {
	b.hasImage = true
	b.parts = append(b.parts, userPart{image: url})
}

// flush sends the gathered user message: a string when it is all text,
// content parts when it carries an image.
func (b *messageBuilder) flush() {
	if len(b.parts) == 0 {
		return
	}
	b.comma()
	b.out = append(b.out, `{"role":"user","content":`...)
	if b.hasImage {
		b.out = append(b.out, '[')
		for i, p := range b.parts {
			if i > 0 {
				b.out = append(b.out, ',')
			}
			if p.image != "" {
				b.out = append(b.out, `{"type":"image_url","image_url":{"url":`...)
				b.out = appendString(b.out, p.image)
				b.out = append(b.out, "}}"...)
			} else {
				b.out = append(b.out, `{"type":"text","text":`...)
				b.out = appendString(b.out, p.text)
				b.out = append(b.out, '}')
			}
		}
		b.out = append(b.out, ']')
	} else {
		texts := make([]string, len(b.parts))
		for i, p := range b.parts {
			texts[i] = p.text
		}
		b.out = appendString(b.out, strings.Join(texts, "\n\n"))
	}
	b.out = append(b.out, '}')
	b.count++
	b.parts, b.hasImage = b.parts[:0], false
}

func (b *messageBuilder) user(msg harness.Message) error {
	var text []string
	for _, blk := range msg.Content {
		switch blk.Type {
		case harness.BlockText:
			text = append(text, blk.Text)
		case harness.BlockImage:
			if blk.Image == nil {
				continue
			}
			url, reason, err := b.image(blk.Image)
			if err != nil {
				return err
			}
			if url == "" {
				text = append(text, placeholder(blk.Image, reason))
				continue
			}
			if len(text) > 0 {
				b.addText(strings.Join(text, "\n"))
				text = nil
			}
			b.addImage(url)
		}
	}
	if len(text) > 0 {
		b.addText(strings.Join(text, "\n"))
	}
	return nil
}

// assistant encodes an assistant message. Its content is always a
// string, "" on a tool-call-only turn: providers differ on a null or
// missing one, and none refuses "". Where the dialect sends reasoning
// back, it goes in the dialect's field; DeepSeek's rule is that every
// assistant message that made tool calls carries it, "" when the turn
// had none, or the API answers 400.
func (b *messageBuilder) assistant(msg harness.Message) {
	var text, reasoning strings.Builder
	calls := 0
	for _, blk := range msg.Content {
		switch blk.Type {
		case harness.BlockText:
			text.WriteString(blk.Text)
		case harness.BlockReasoning:
			reasoning.WriteString(blk.Text)
		case harness.BlockToolCall:
			if blk.ToolCall != nil {
				calls++
			}
		}
	}
	r := &b.m.rules
	b.comma()
	b.out = append(b.out, `{"role":"assistant","content":`...)
	b.out = appendString(b.out, text.String())
	if r.reasoningField != "" && (reasoning.Len() > 0 || calls > 0 && r.echoOnToolCalls) {
		b.out = appendStringField(b.out, r.reasoningField, reasoning.String())
	}
	if calls > 0 {
		b.out = appendKey(b.out, "tool_calls")
		b.out = append(b.out, '[')
		n := 0
		for _, blk := range msg.Content {
			tc := blk.ToolCall
			if blk.Type != harness.BlockToolCall || tc == nil {
				continue
			}
			if n > 0 {
				b.out = append(b.out, ',')
			}
			n++
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				// Some providers refuse arguments that are not JSON.
				args = "{}"
			}
			b.out = append(b.out, '{')
			b.out = appendStringField(b.out, "id", tc.ID)
			b.out = append(b.out, `,"type":"function","function":{`...)
			b.out = appendStringField(b.out, "name", tc.Name)
			b.out = appendStringField(b.out, "arguments", args)
			b.out = append(b.out, "}}"...)
		}
		b.out = append(b.out, ']')
	}
	b.out = append(b.out, '}')
	b.count++
}

// tool sends a tool result as a tool message, which carries text only.
// Its images go into the user message that follows the step's results,
// each introduced by a line naming its call; the tool message says so.
// An image that cannot be sent is a placeholder in the tool message.
func (b *messageBuilder) tool(msg harness.Message) error {
	for _, blk := range msg.Content {
		if blk.Type != harness.BlockToolResult || blk.ToolResult == nil {
			continue
		}
		r := blk.ToolResult
		var text []string
		for _, c := range r.Content {
			switch c.Type {
			case harness.BlockImage:
				if c.Image == nil {
					continue
				}
				url, reason, err := b.image(c.Image)
				if err != nil {
					return err
				}
				if url == "" {
					text = append(text, placeholder(c.Image, reason))
					continue
				}
				text = append(text, "["+describeImage(c.Image)+" is attached to the next user message]")
				b.addText(fmt.Sprintf("The %s from the %s call %s:", describeImage(c.Image), r.Name, r.CallID))
				b.addImage(url)
			default:
				text = append(text, c.Text)
			}
		}
		content := strings.Join(text, "\n")
		if strings.TrimSpace(content) == "" {
			content = emptyToolResult
		}
		b.comma()
		b.out = append(b.out, `{"role":"tool","tool_call_id":`...)
		b.out = appendString(b.out, r.CallID)
		b.out = appendStringField(b.out, "content", content)
		b.out = append(b.out, '}')
		b.count++
	}
	return nil
}
