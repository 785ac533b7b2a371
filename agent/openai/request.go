package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

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

// params builds the Chat Completions request for req.
func (m *Model) params(ctx context.Context, req *model.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(m.info.Name)}
	msgs, err := m.messages(ctx, req)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	for _, spec := range req.Tools {
		schema := spec.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(schema) {
			return p, model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("tool %q has an input schema that is not valid JSON; fix the tool's Spec.InputSchema", spec.Name), nil)
		}
		fd := shared.FunctionDefinitionParam{Name: spec.Name}
		if spec.Description != "" {
			fd.Description = oai.String(spec.Description)
		}
		// The schema's bytes go out as they are (compacted), keys in the
		// tool's own order: a map would reorder them, and a stable
		// prefix is what providers cache.
		fd.SetExtraFields(map[string]any{"parameters": schema})
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fd))
	}
	if m.streaming {
		p.StreamOptions.IncludeUsage = oai.Bool(true)
	}
	if m.effort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(m.effort)
	}
	if m.maxTokens > 0 {
		if m.openAIHost {
			p.MaxCompletionTokens = oai.Int(m.maxTokens)
		} else {
			p.MaxTokens = oai.Int(m.maxTokens)
		}
	}
	if m.thinking != nil {
		typ := "disabled"
		if *m.thinking {
			typ = "enabled"
		}
		p.SetExtraFields(map[string]any{"thinking": map[string]string{"type": typ}})
	}
	return p, nil
}

// messageBuilder turns provider-neutral messages into Chat Completions
// messages.
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
	inline map[*harness.Image]bool
	out    []oai.ChatCompletionMessageParamUnion

	// The user message being gathered.
	parts    []oai.ChatCompletionContentPartUnionParam
	texts    []string
	hasImage bool
	fromUser bool
}

func (m *Model) messages(ctx context.Context, req *model.Request) ([]oai.ChatCompletionMessageParamUnion, error) {
	b := &messageBuilder{m: m, ctx: ctx, store: req.Images}
	b.planImages(req.Messages)
	if req.System != "" {
		b.out = append(b.out, oai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		var err error
		switch msg.Role {
		case harness.RoleUser:
			err = b.user(msg)
		case harness.RoleAssistant:
			b.flush()
			b.assistant(msg)
		case harness.RoleTool:
			if b.fromUser {
				b.flush()
			}
			err = b.tool(msg)
		default:
			err = model.NewError(harness.CodeInvalidRequest, fmt.Sprintf("message role %q is not one the model understands", msg.Role), nil)
		}
		if err != nil {
			return nil, err
		}
	}
	b.flush()
	return b.out, nil
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
	b.texts = append(b.texts, s)
	b.parts = append(b.parts, oai.TextContentPart(s))
}

func (b *messageBuilder) addImage(url string) {
	b.hasImage = true
	b.parts = append(b.parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: url}))
}

// flush sends the gathered user message: a string when it is all text,
// content parts when it carries an image.
func (b *messageBuilder) flush() {
	if len(b.parts) > 0 {
		if b.hasImage {
			b.out = append(b.out, oai.UserMessage(b.parts))
		} else {
			b.out = append(b.out, oai.UserMessage(strings.Join(b.texts, "\n\n")))
		}
	}
	b.parts, b.texts, b.hasImage, b.fromUser = nil, nil, false, false
}

func (b *messageBuilder) user(msg harness.Message) error {
	b.fromUser = true
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

func (b *messageBuilder) assistant(msg harness.Message) {
	var text, reasoning strings.Builder
	var calls []oai.ChatCompletionMessageToolCallUnionParam
	for _, blk := range msg.Content {
		switch blk.Type {
		case harness.BlockText:
			text.WriteString(blk.Text)
		case harness.BlockReasoning:
			reasoning.WriteString(blk.Text)
		case harness.BlockToolCall:
			if blk.ToolCall == nil {
				continue
			}
			calls = append(calls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       blk.ToolCall.ID,
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: blk.ToolCall.Name, Arguments: blk.ToolCall.Arguments},
			}})
		}
	}
	am := &oai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
	// Content is always a string, "" on a tool-call-only turn: providers
	// differ on a null or missing one, and none refuses "".
	am.Content.OfString = oai.String(text.String())
	if reasoning.Len() > 0 {
		// DeepSeek refuses a history whose tool-calling turns lack
		// their reasoning; the SDK has no field for it.
		am.SetExtraFields(map[string]any{"reasoning_content": reasoning.String()})
	}
	b.out = append(b.out, oai.ChatCompletionMessageParamUnion{OfAssistant: am})
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
		b.out = append(b.out, oai.ToolMessage(content, r.CallID))
	}
	return nil
}
