package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/imagetext"
	"github.com/go-harness/harness/internal/jsonenc"
	"github.com/go-harness/harness/internal/schemaprompt"
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
// The body is a chatRequest: its keys come in one fixed order (see
// chatRequest). Each history message is encoded once and its bytes
// reused by every later request (see historyCache), and so is the tool
// list: the body is a list of segments, most of them kept from earlier
// requests, that are copied only when written to the wire.
func (m *chatModel) body(ctx context.Context, req *model.Request) (*requestBody, int, error) {
	if req.Output != nil && !m.rules.jsonSchema {
		// The endpoint takes only "json_object": the schema and an
		// example of it go to the model in a user message at the end
		// of the request, where it changes nothing of the cached prefix.
		msg, err := schemaprompt.Message(req.Output.Schema)
		if err != nil {
			return nil, 0, model.NewError(harness.CodeInvalidRequest, "the structured answer's schema is not valid JSON: "+err.Error(), nil)
		}
		r := *req
		r.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)], msg)
		req = &r
	}
	conv := m.history.conversation(m.rules.dialect, req.Messages)
	if conv != nil {
		conv.mu.Lock()
		defer conv.mu.Unlock()
	}
	// segs[0] is kept for the body's head. The kept prefix goes out as
	// its arena's chunks: room for them, the step's new messages and the
	// body's other parts at once.
	nsegs := 8
	if conv != nil {
		nsegs += len(conv.arena)
	}
	b := &messageBuilder{m: m, ctx: ctx, store: req.Images, conv: conv, out: make([]byte, 0, 1024), segs: make([][]byte, 1, nsegs)}
	if err := b.build(req); err != nil {
		return nil, 0, err
	}
	b.insert(nil)
	var tools []byte
	if len(req.Tools) > 0 {
		var err error
		if tools, err = m.encodeTools(conv, req.Tools); err != nil {
			return nil, 0, err
		}
	}
	rf, err := m.responseFormat(req.Output)
	if err != nil {
		return nil, 0, err
	}
	cr := m.request(len(req.Tools) > 0)
	cr.ResponseFormat = rf
	enc, err := b.enc.Append(nil, cr)
	if err != nil {
		return nil, 0, model.NewError(harness.CodeInvalidRequest, "encoding the request: "+err.Error(), nil)
	}
	// Cut the body at its two empty lists and put the messages and the
	// tools there. (Neither list's key can occur inside an encoded
	// string: a quote there is escaped.)
	head, rest, _ := bytes.Cut(enc, []byte(`"messages":[]`))
	segs := b.segs
	segs[0] = append(head, `"messages":[`...)
	if tools != nil {
		before, after, _ := bytes.Cut(rest, []byte(`"tools":[]`))
		segs = append(segs, append(append([]byte{']'}, before...), `"tools":`...), tools)
		rest = after
	} else {
		rest = append([]byte{']'}, rest...)
	}
	segs = append(segs, rest)
	var size int64
	for _, seg := range segs {
		size += int64(len(seg))
	}
	if conv != nil {
		conv.noteSize()
	}
	return &requestBody{segs: segs, size: size}, b.count, nil
}

// request is the body of a request without its messages, tools and
// response format: the model and the controls the configuration and
// the dialect send. hasTools says whether the request declares tools,
// which the tool controls need.
func (m *chatModel) request(hasTools bool) chatRequest {
	s := &m.send
	cr := chatRequest{Model: m.info.Name, Messages: json.RawMessage(`[]`)}
	if hasTools {
		cr.Tools = json.RawMessage(`[]`)
		switch s.toolChoice {
		case "":
		case "auto", "none", "required":
			cr.ToolChoice = s.toolChoice
		default:
			cr.ToolChoice = namedToolChoice{Type: "function", Function: functionName{Name: s.toolChoice}}
		}
		cr.ParallelToolCalls = s.parallel
	}
	if m.streaming {
		cr.Stream, cr.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	if s.maxTokens > 0 {
		if m.rules.maxCompletionTokens {
			cr.MaxCompletionTokens = s.maxTokens
		} else {
			cr.MaxTokens = s.maxTokens
		}
	}
	cr.Temperature, cr.TopP = s.temperature, s.topP
	if m.rules.seed {
		cr.Seed = s.seed
	}
	cr.ReasoningEffort = s.effort
	if s.thinking != nil && m.rules.thinkingObject {
		cr.Thinking = &thinkingSwitch{Type: "disabled"}
		if *s.thinking {
			cr.Thinking.Type = "enabled"
		}
	}
	return cr
}

// requestBody is a request body made of segments; the bytes are copied
// once, into the connection.
type requestBody struct {
	segs [][]byte
	size int64
}

// reader returns a reader over the body, one per attempt.
func (rb *requestBody) reader() io.ReadCloser {
	return &segmentReader{segs: slices.Clone(rb.segs)}
}

// Bytes returns the body as one slice.
func (rb *requestBody) Bytes() []byte {
	out := make([]byte, 0, rb.size)
	for _, s := range rb.segs {
		out = append(out, s...)
	}
	return out
}

type segmentReader struct{ segs [][]byte }

func (r *segmentReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		c := copy(p[n:], r.segs[0])
		n += c
		if r.segs[0] = r.segs[0][c:]; len(r.segs[0]) == 0 {
			r.segs = r.segs[1:]
		}
	}
	if n == 0 && len(r.segs) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *segmentReader) Close() error { return nil }

// responseFormat is the response format: a structured answer's schema
// ("json_schema" where the dialect takes it, strict when the schema is
// closed; "json_object" elsewhere), else "json_object" when
// [Config.JSONOutput] asked for it, else nothing.
func (m *chatModel) responseFormat(o *model.Output) (*responseFormat, error) {
	if o == nil {
		if m.send.jsonOutput {
			return &responseFormat{Type: "json_object"}, nil
		}
		return nil, nil
	}
	if !m.rules.jsonSchema {
		return &responseFormat{Type: "json_object"}, nil
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
	return &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{
		Name: name, Schema: schema.Bytes(), Strict: checkStrict(schema.Bytes(), m.rules.strict) == nil,
	}}, nil
}

// encodeTools encodes the tool list: each schema's bytes go out as they
// are (compacted), keys in the tool's own order, since a map would
// reorder them and a stable prefix is what providers cache. The
// encoding is kept with the conversation while its tools stay the same.
func (m *chatModel) encodeTools(conv *conversation, tools []model.Tool) ([]byte, error) {
	if conv != nil && sameTools(conv.tools, tools) {
		return conv.toolsJSON, nil
	}
	if n := m.rules.maxTools; n > 0 && len(tools) > n {
		return nil, model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("the request declares %d tools, and the %s API takes at most %d functions: register fewer tools", len(tools), m.rules.dialect, n), nil)
	}
	list := make([]chatTool, len(tools))
	for i, spec := range tools {
		var schema bytes.Buffer
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
		list[i] = chatTool{Type: "function", Function: chatFunction{
			Name: spec.Name, Description: spec.Description, Parameters: schema.Bytes(), Strict: m.send.strict,
		}}
	}
	out, err := jsonenc.Marshal(list)
	if err != nil {
		return nil, model.NewError(harness.CodeInvalidRequest, "encoding the tools: "+err.Error(), nil)
	}
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
func (m *chatModel) checkStrictTool(name string, schema []byte) error {
	if _, ok := m.strictOK.Load(string(schema)); ok {
		return nil
	}
	if err := checkStrict(schema, m.rules.strict); err != nil {
		return model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("tool %q cannot be used in strict mode: %v; close the schema or turn strict tools off", name, err), nil)
	}
	m.strictOK.Store(string(schema), true)
	return nil
}

// historyCache keeps the encoded messages of the conversations a model
// served last, so a request re-encodes only what is new since the last
// one: the history is append-only, and a message keeps its content
// slice for as long as it is unchanged (the loop replaces the slice to
// change a message, never its blocks in place). A message is recognised
// by its role and the identity and length of its content slice, as the
// loop's request fingerprints recognise it; a conversation by its first
// message and the dialect.
//
// The cache holds up to maxConversations conversations and about
// maxCachedBytes of encodings, dropping the least recently used first,
// so that a process running many sessions on one model keeps each
// session's encodings between its steps.
type historyCache struct {
	mu     sync.Mutex
	byKey  map[convKey]*conversation
	oldest *conversation // least recently used; newest is oldest.prev
}

type convKey struct {
	dialect Dialect
	id      msgKey
}

const (
	// maxConversations bounds the conversations a model keeps encodings
	// of.
	maxConversations = 4096
	// maxCachedBytes bounds, about, the encoded bytes a model keeps
	// across its conversations; the conversation being added is kept
	// whatever its size.
	maxCachedBytes = 256 << 20
)

type msgKey struct {
	first *harness.Block
	n     int
	role  uint8
}

func keyOf(msg *harness.Message) msgKey {
	k := msgKey{n: len(msg.Content)}
	switch msg.Role {
	case harness.RoleUser:
		k.role = 1
	case harness.RoleAssistant:
		k.role = 2
	case harness.RoleTool:
		k.role = 3
	default:
		k.role = 4 // never cached: an unknown role fails the request
	}
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
	// The encoded prefix: arena holds the comma-separated encodings of
	// the output messages of input messages [0, len(keys)), made of the
	// units in prefix, in chunks of about arenaChunk bytes, so that an
	// unchanged prefix goes out as a few segments. Bytes once written
	// are never overwritten (a body in flight may reference them): a
	// prefix cut short keeps a capacity-bounded slice of its last chunk,
	// which the next append copies (at most one chunk).
	arena  [][]byte
	keys   []msgKey
	prefix []prefixUnit
	// units[i] is the encoding of the output messages that start at
	// input message i, nil when none is kept.
	units     []*unit
	system    string
	sysJSON   []byte
	tools     []model.Tool
	toolsJSON []byte

	// size is about the bytes the conversation's encodings hold, as of
	// its last request.
	size atomic.Int64
	// prev and next link the cache's conversations from the least
	// recently used on, in a ring; they are guarded by the cache's mutex.
	prev, next *conversation
}

// noteSize records about how many bytes c's encodings hold: its prefix,
// and as much again for the units it is made of. c.mu is held.
func (c *conversation) noteSize() {
	var n int64
	if k := len(c.prefix); k > 0 {
		n = 2 * c.prefix[k-1].bytes
	}
	c.size.Store(n)
}

// arenaChunk is the size of an arena chunk.
const arenaChunk = 8 << 10

// prefixUnit is a unit of the encoded prefix.
type prefixUnit struct {
	end   int   // input messages [.., end)
	user  bool  // a run of user messages, which a later user message would extend
	chunk int   // the arena chunk the unit ends in
	off   int   // arena[chunk][:off] ends with the unit
	bytes int64 // encoded bytes up to and including the unit
	count int   // output messages up to and including the unit
}

// validPrefix returns how many units of the encoded prefix msgs still
// begins with, cutting the prefix there.
func (c *conversation) validPrefix(msgs []harness.Message) int {
	n := min(len(c.keys), len(msgs))
	x := 0
	for x < n && c.keys[x] == keyOf(&msgs[x]) {
		x++
	}
	k := len(c.prefix)
	for k > 0 && c.prefix[k-1].end > x {
		k--
	}
	if k > 0 && c.prefix[k-1].user && c.prefix[k-1].end < len(msgs) && msgs[c.prefix[k-1].end].Role == harness.RoleUser {
		k-- // the user run goes on: its merged message changes
	}
	if k < len(c.prefix) {
		if k == 0 {
			c.prefix, c.keys, c.arena = c.prefix[:0], c.keys[:0], nil
		} else {
			u := c.prefix[k-1]
			c.prefix = c.prefix[:k]
			c.keys = c.keys[:u.end]
			c.arena = c.arena[:u.chunk+1]
			c.arena[u.chunk] = c.arena[u.chunk][:u.off:u.off]
		}
	}
	return k
}

// emitPrefix adds the first k units of the prefix to the body.
func (b *messageBuilder) emitPrefix(k int) {
	c := b.conv
	u := c.prefix[k-1]
	if u.bytes > 0 {
		b.comma()
		for i := 0; i < u.chunk; i++ {
			b.insert(c.arena[i])
		}
		b.insert(c.arena[u.chunk][:u.off:u.off])
	}
	b.count += u.count
}

// extend appends a unit's encoding to the prefix.
func (c *conversation) extend(msgs []harness.Message, i, j int, encoded []byte, count int) {
	var before prefixUnit
	if n := len(c.prefix); n > 0 {
		before = c.prefix[n-1]
	}
	if len(encoded) > 0 {
		last := len(c.arena) - 1
		if last < 0 || len(c.arena[last]) > 0 && len(c.arena[last])+1+len(encoded) > arenaChunk {
			c.arena = append(c.arena, make([]byte, 0, max(arenaChunk, len(encoded)+1)))
			last++
		}
		if before.bytes > 0 {
			c.arena[last] = append(c.arena[last], ',')
		}
		c.arena[last] = append(c.arena[last], encoded...)
		before.chunk, before.off = last, len(c.arena[last])
		before.bytes += int64(len(encoded))
	}
	for k := i; k < j; k++ {
		c.keys = append(c.keys, keyOf(&msgs[k]))
	}
	c.prefix = append(c.prefix, prefixUnit{end: j, user: msgs[i].Role == harness.RoleUser,
		chunk: before.chunk, off: before.off, bytes: before.bytes, count: before.count + count})
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
	key := convKey{dialect: d, id: keyOf(&msgs[0])}
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.byKey[key]; c != nil {
		h.unlink(c)
		h.push(c)
		return c
	}
	if h.byKey == nil {
		h.byKey = make(map[convKey]*conversation)
	}
	var total int64
	for c, n := h.oldest, len(h.byKey); n > 0; c, n = c.next, n-1 {
		total += c.size.Load()
	}
	for len(h.byKey) > 0 && (len(h.byKey) >= maxConversations || total > maxCachedBytes) {
		old := h.oldest
		total -= old.size.Load()
		h.unlink(old)
		delete(h.byKey, convKey{dialect: old.dialect, id: old.id})
	}
	c := &conversation{dialect: d, id: key.id}
	h.byKey[key] = c
	h.push(c)
	return c
}

// push links c in as the most recently used conversation. h.mu is held.
func (h *historyCache) push(c *conversation) {
	if h.oldest == nil {
		c.prev, c.next, h.oldest = c, c, c
		return
	}
	newest := h.oldest.prev
	c.prev, c.next = newest, h.oldest
	newest.next, h.oldest.prev = c, c
}

// unlink takes c out of the ring. h.mu is held.
func (h *historyCache) unlink(c *conversation) {
	if c.next == c {
		h.oldest = nil
	} else {
		c.prev.next, c.next.prev = c.next, c.prev
		if h.oldest == c {
			h.oldest = c.next
		}
	}
	c.prev, c.next = nil, nil
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
	m      *chatModel
	ctx    context.Context
	store  model.ImageSource
	conv   *conversation
	inline map[*harness.Image]bool
	// out is the messages being written, comma-separated; segs the
	// segments before out[mark:]. count is how many messages they hold.
	out   []byte
	mark  int
	segs  [][]byte
	count int
	// enc encodes the messages.
	enc jsonenc.Encoder
	// first is true until the first message is written.
	first bool

	// The user message being gathered.
	parts    []userPart
	hasImage bool
}

type userPart struct {
	text  string
	image string // a data: URL
}

// comma separates a message from the one before.
func (b *messageBuilder) comma() {
	if !b.first {
		b.out = append(b.out, ',')
	}
	b.first = false
}

// insert ends the segment being written and adds kept bytes as one
// after it.
func (b *messageBuilder) insert(kept []byte) {
	if len(b.out) > b.mark {
		b.segs = append(b.segs, b.out[b.mark:len(b.out):len(b.out)])
	}
	if len(kept) > 0 {
		b.segs = append(b.segs, kept)
	}
	// Start a fresh buffer: the old one's bytes are referenced now.
	b.out, b.mark = b.out[len(b.out):], 0
}

func (b *messageBuilder) build(req *model.Request) error {
	b.first = true
	c := b.conv
	if req.System != "" {
		b.comma()
		if c == nil || c.sysJSON == nil || c.system != req.System {
			enc, _ := b.enc.Append(nil, chatMessage{Role: "system", Content: req.System})
			if c == nil {
				b.out = append(b.out, enc...)
			} else {
				c.system, c.sysJSON = req.System, enc
			}
		}
		if c != nil {
			b.insert(c.sysJSON)
		}
		b.count++
	}
	msgs := req.Messages
	i := 0
	// open is true while the units built extend the encoded prefix.
	open := c != nil
	if c != nil {
		if k := c.validPrefix(msgs); k > 0 {
			b.emitPrefix(k)
			i = c.prefix[k-1].end
		}
	}
	// The prefix holds no image: only the rest has images to plan.
	b.planImages(msgs[i:])
	for i < len(msgs) {
		j := i + 1
		if msgs[i].Role == harness.RoleUser {
			for j < len(msgs) && msgs[j].Role == harness.RoleUser {
				j++
			}
		}
		if msgs[i].Role == harness.RoleAssistant {
			b.flush()
		}
		if !open && len(b.parts) == 0 {
			if u := c.cached(msgs, i, j); u != nil {
				b.comma()
				b.insert(u.json)
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
		cacheable := c != nil && !pending && len(b.parts) == 0 && !hasImages(msgs[i:j])
		enc := b.out[start:]
		if len(enc) > 0 && enc[0] == ',' {
			enc = enc[1:]
		}
		switch {
		case cacheable && open:
			c.extend(msgs, i, j, enc, b.count-count)
		case cacheable && b.count > count:
			c.keep(msgs, i, j, enc, b.count-count)
		default:
			open = false
		}
		i = j
	}
	b.flush()
	return nil
}

// hasImages reports whether any of msgs holds an image, directly or in
// a tool result: their encoding depends on the image budget.
func hasImages(msgs []harness.Message) bool {
	for mi := range msgs {
		for bi := range msgs[mi].Content {
			blk := &msgs[mi].Content[bi]
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
	case !slices.Contains(b.m.info.Input, harness.ModalityImage):
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
	msg := chatMessage{Role: "user"}
	if b.hasImage {
		parts := make([]any, len(b.parts))
		for i, p := range b.parts {
			if p.image != "" {
				parts[i] = imagePart{Type: "image_url", ImageURL: imageURL{URL: p.image}}
			} else {
				parts[i] = textPart{Type: "text", Text: p.text}
			}
		}
		msg.Content = parts
	} else {
		texts := make([]string, len(b.parts))
		for i, p := range b.parts {
			texts[i] = p.text
		}
		msg.Content = strings.Join(texts, "\n\n")
	}
	b.message(msg)
	b.parts, b.hasImage = b.parts[:0], false
}

// message appends one message to the body.
func (b *messageBuilder) message(msg chatMessage) {
	b.comma()
	b.out, _ = b.enc.Append(b.out, msg) // cannot fail: a message holds strings only
	b.count++
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
	var calls []chatToolCall
	for _, blk := range msg.Content {
		switch blk.Type {
		case harness.BlockText:
			text.WriteString(blk.Text)
		case harness.BlockReasoning:
			reasoning.WriteString(blk.Text)
		case harness.BlockToolCall:
			tc := blk.ToolCall
			if tc == nil {
				continue
			}
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				// Some providers refuse arguments that are not JSON.
				args = "{}"
			}
			calls = append(calls, chatToolCall{ID: tc.ID, Type: "function", Function: functionCall{Name: tc.Name, Arguments: args}})
		}
	}
	out := chatMessage{Role: "assistant", Content: text.String(), ToolCalls: calls}
	if r := &b.m.rules; r.sendReasoning && (reasoning.Len() > 0 || len(calls) > 0 && r.echoOnToolCalls) {
		out.ReasoningContent = new(reasoning.String())
	}
	b.message(out)
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
		b.message(chatMessage{Role: "tool", ToolCallID: r.CallID, Content: content})
	}
	return nil
}
