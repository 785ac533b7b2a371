package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/tools"
)

func call(id, name, args string) harness.Block {
	return harness.Block{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: name, Arguments: args}}
}

func result(id, name string, content ...harness.Block) harness.Message {
	return harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult,
		ToolResult: &harness.ToolResult{CallID: id, Name: name, Content: content}}}}
}

// sendOne sends req to a fresh provider and returns the request it got.
func sendOne(t *testing.T, req *model.Request, cfg ...openai.Config) captured {
	t.Helper()
	return sendOneTo(t, "deepseek-flash", req, cfg...)
}

// sendOneTo is sendOne with the model id id.
func sendOneTo(t *testing.T, id string, req *model.Request, cfg ...openai.Config) captured {
	t.Helper()
	p := newProvider(t, sse(text("ok"), finish("stop")))
	_, err := drain(t, p.modelNamed(id, cfg...), context.Background(), req)
	require.NoError(t, err)
	require.Len(t, p.Requests(), 1)
	return p.Requests()[0]
}

// Tool schemas go out in the order given, each keeping its own key
// order; the same request always produces the same bytes.
func TestToolSchemasKeepTheirBytes(t *testing.T) {
	zeta := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta"]}`
	req := &model.Request{
		System:   "sys",
		Messages: []harness.Message{userText("hi")},
		Tools: []model.Tool{
			{Name: "zz_last_alphabetically", Description: "first in order", Parameters: json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"zeta\": {\"type\": \"string\"}, \"alpha\": {\"type\": \"integer\"}},\n  \"required\": [\"zeta\"]\n}")},
			{Name: "aa_first_alphabetically", Description: "second", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			{Name: "no_schema"},
		},
	}
	p := newProvider(t, sse(text("a"), finish("stop")), sse(text("b"), finish("stop")))
	m := p.model()
	for range 2 {
		_, err := drain(t, m, context.Background(), req)
		require.NoError(t, err)
	}
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, string(reqs[0].Body), string(reqs[1].Body), "the same request is the same bytes")
	body := string(reqs[0].Body)
	assert.Contains(t, body, `"parameters":`+zeta, "schema keys stay in the tool's order")
	assert.Less(t, strings.Index(body, "zz_last_alphabetically"), strings.Index(body, "aa_first_alphabetically"), "tools in request order")
	tl := reqs[0].JSON(t)["tools"].([]any)
	require.Len(t, tl, 3)
	assert.Equal(t, map[string]any{"type": "function", "function": map[string]any{"name": "no_schema",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}, tl[2])
}

func TestInvalidToolSchemaIsRefusedBeforeSending(t *testing.T) {
	p := newProvider(t)
	_, err := drain(t, p.model(), context.Background(), &model.Request{
		Messages: []harness.Message{userText("x")},
		Tools:    []model.Tool{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}},
	})
	me := modelErr(t, err)
	assert.Equal(t, harness.CodeInvalidRequest, me.Code)
	assert.Contains(t, me.Message, `tool "broken"`)
	assert.Empty(t, p.Requests())
}

func TestRequestOptions(t *testing.T) {
	req := &model.Request{Messages: []harness.Message{userText("x")}}
	plain := sendOne(t, req).JSON(t)
	assert.NotContains(t, plain, "thinking")
	assert.NotContains(t, plain, "reasoning_effort")
	assert.NotContains(t, plain, "max_tokens")

	on := sendOne(t, req, openai.Config{Thinking: new(true), ReasoningEffort: "high", MaxOutputTokens: 4096}).JSON(t)
	assert.Equal(t, map[string]any{"type": "enabled"}, on["thinking"])
	assert.Equal(t, "high", on["reasoning_effort"])
	assert.Equal(t, float64(4096), on["max_tokens"])
	assert.NotContains(t, on, "max_completion_tokens")

	off := sendOneTo(t, "deepseek-v4-pro", req, openai.Config{Thinking: new(false)}).JSON(t)
	assert.Equal(t, map[string]any{"type": "disabled"}, off["thinking"])
	assert.Equal(t, "deepseek-v4-pro", off["model"])
}

func TestHistoryShapes(t *testing.T) {
	req := &model.Request{Messages: []harness.Message{
		userText("first"),
		// An interrupted turn leaves two user messages in a row.
		userText("second"),
		{Role: harness.RoleAssistant, Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: "plan"},
			harness.TextBlock("I will run two things."),
			call("c1", "bash", `{"command":"ls"}`),
			call("c2", "bash", `{"command": "pwd" `), // malformed, sent back unchanged
		}},
		result("c1", "bash"),
		result("c2", "bash", harness.TextBlock("line 1"), harness.TextBlock("line 2")),
		userText("<system-reminder>\nyou ran ls twice\n</system-reminder>"),
		{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("done")}},
		userText("thanks"),
	}}
	msgs := sendOne(t, req, openai.Config{Dialect: openai.DialectDeepSeek}).Messages(t)
	require.Len(t, msgs, 7)
	assert.Equal(t, map[string]any{"role": "user", "content": "first\n\nsecond"}, msgs[0], "consecutive user messages are merged")
	assert.Equal(t, "I will run two things.", msgs[1]["content"])
	assert.Equal(t, "plan", msgs[1]["reasoning_content"])
	calls := msgs[1]["tool_calls"].([]any)
	assert.Equal(t, `{"command": "pwd" `, calls[1].(map[string]any)["function"].(map[string]any)["arguments"])
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": "c1", "content": "(no output)"}, msgs[2])
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": "c2", "content": "line 1\nline 2"}, msgs[3])
	assert.Equal(t, map[string]any{"role": "user", "content": "<system-reminder>\nyou ran ls twice\n</system-reminder>"}, msgs[4])
	assert.Equal(t, map[string]any{"role": "assistant", "content": "done"}, msgs[5], "no reasoning_content on a turn without reasoning")
	assert.Equal(t, "thanks", msgs[6]["content"])
}

var pngBytes = []byte("\x89PNG\r\n\x1a\n fake image bytes for the wire test")

func storeImage(t *testing.T, s *memAttachments, name string) harness.Image {
	t.Helper()
	d, err := s.Put(context.Background(), pngBytes)
	require.NoError(t, err)
	return harness.Image{Digest: d, MediaType: "image/png", Width: 640, Height: 480, Size: int64(len(pngBytes)), Name: name}
}

func imageHistory(t *testing.T, store *memAttachments) []harness.Message {
	shot := storeImage(t, store, "shot.png")
	other := storeImage(t, store, "diagram.png")
	return []harness.Message{
		userText("look at these"),
		{Role: harness.RoleAssistant, Content: []harness.Block{call("c1", "read_image", `{"file_path":"shot.png"}`), call("c2", "read_image", `{"file_path":"diagram.png"}`)}},
		result("c1", "read_image", harness.TextBlock("Read shot.png."), harness.Block{Type: harness.BlockImage, Image: new(shot)}),
		result("c2", "read_image", harness.Block{Type: harness.BlockImage, Image: new(other)}),
		userText("<system-reminder>\na reminder\n</system-reminder>"),
	}
}

func TestToolImagesGoInOneUserMessageAfterTheResults(t *testing.T) {
	store := newAttachments()
	req := &model.Request{Messages: imageHistory(t, store), Images: store}
	msgs := sendOne(t, req).Messages(t) // deepseek-flash declares image input
	require.Len(t, msgs, 5)
	assert.Equal(t, "tool", msgs[2]["role"])
	assert.Equal(t, "Read shot.png.\n[image shot.png (image/png, 43 bytes, 640x480) is attached to the next user message]", msgs[2]["content"])
	assert.Equal(t, "[image diagram.png (image/png, 43 bytes, 640x480) is attached to the next user message]", msgs[3]["content"])
	user := msgs[4]
	assert.Equal(t, "user", user["role"])
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes)
	assert.Equal(t, []any{
		map[string]any{"type": "text", "text": "The image shot.png (image/png, 43 bytes, 640x480) from the read_image call c1:"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL}},
		map[string]any{"type": "text", "text": "The image diagram.png (image/png, 43 bytes, 640x480) from the read_image call c2:"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL}},
		map[string]any{"type": "text", "text": "<system-reminder>\na reminder\n</system-reminder>"},
	}, user["content"], "both images and the reminder form one user message")
}

func TestTextOnlyModelGetsImagePlaceholders(t *testing.T) {
	store := newAttachments()
	req := &model.Request{Messages: imageHistory(t, store), Images: store}
	for _, send := range []func() captured{
		func() captured { return sendOneTo(t, "deepseek-v4-pro", req) },
		func() captured {
			return sendOne(t, req, openai.Config{Input: []harness.Modality{harness.ModalityText}})
		},
	} {
		c := send()
		assert.NotContains(t, string(c.Body), "image_url")
		assert.NotContains(t, string(c.Body), "base64")
		msgs := c.Messages(t)
		require.Len(t, msgs, 5)
		assert.Equal(t, "Read shot.png.\n[image shot.png (image/png, 43 bytes, 640x480, sha256:0a44606d79d6) not shown: this model does not accept image input]", msgs[2]["content"])
		assert.Equal(t, "[image diagram.png (image/png, 43 bytes, 640x480, sha256:0a44606d79d6) not shown: this model does not accept image input]", msgs[3]["content"])
		assert.Equal(t, "<system-reminder>\na reminder\n</system-reminder>", msgs[4]["content"])
	}
}

func TestUserImages(t *testing.T) {
	store := newAttachments()
	img := storeImage(t, store, "paste.png")
	bmp := img
	bmp.MediaType, bmp.Name = "image/bmp", "old.bmp"
	missing := img
	missing.Digest, missing.Name = "sha256:00", "gone.png"
	req := &model.Request{Images: store, Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{
		harness.TextBlock("what is this?"),
		{Type: harness.BlockImage, Image: &img},
		{Type: harness.BlockImage, Image: &bmp},
		{Type: harness.BlockImage, Image: &missing},
	}}}}

	msgs := sendOne(t, req).Messages(t)
	require.Len(t, msgs, 1)
	parts := msgs[0]["content"].([]any)
	require.Len(t, parts, 3)
	assert.Equal(t, map[string]any{"type": "text", "text": "what is this?"}, parts[0])
	assert.Equal(t, "image_url", parts[1].(map[string]any)["type"])
	last := parts[2].(map[string]any)["text"].(string)
	assert.Contains(t, last, "[image old.bmp (image/bmp, 43 bytes, 640x480, sha256:0a44606d79d6) not shown: its type is not one the model accepts")
	assert.Contains(t, last, "[image gone.png (image/png, 43 bytes, 640x480, sha256:00) not shown: it could not be loaded: attachment sha256:00 not found]")

	textOnly := sendOneTo(t, "deepseek-v4-pro", req).Messages(t)
	assert.Equal(t, "what is this?\n[image paste.png (image/png, 43 bytes, 640x480, sha256:0a44606d79d6) not shown: this model does not accept image input]\n"+
		"[image old.bmp (image/bmp, 43 bytes, 640x480, sha256:0a44606d79d6) not shown: this model does not accept image input]\n"+
		"[image gone.png (image/png, 43 bytes, 640x480, sha256:00) not shown: this model does not accept image input]", textOnly[0]["content"])

	noStore := sendOne(t, &model.Request{Messages: req.Messages}).Messages(t)
	assert.Contains(t, noStore[0]["content"], "not shown: no attachment store is configured")
}

// The newest images that fit the request budget are sent; older ones
// become placeholders.
func TestOldImagesPastTheBudgetBecomePlaceholders(t *testing.T) {
	store := newAttachments()
	big := storeImage(t, store, "old.png")
	big.Size = 30 << 20 // declared size decides
	recent := storeImage(t, store, "new.png")
	recent.Size = 5 << 20
	req := &model.Request{Images: store, Messages: []harness.Message{
		{Role: harness.RoleUser, Content: []harness.Block{{Type: harness.BlockImage, Image: &big}}},
		{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("seen")}},
		{Role: harness.RoleUser, Content: []harness.Block{{Type: harness.BlockImage, Image: &recent}}},
	}}
	msgs := sendOne(t, req).Messages(t)
	assert.Contains(t, msgs[0]["content"], "[image old.png (image/png, 30.0 MiB, 640x480, sha256:0a44606d79d6) not shown: older images are left out")
	assert.Equal(t, "image_url", msgs[2]["content"].([]any)[0].(map[string]any)["type"])
}

type shotIn struct {
	Path string `json:"path"`
}

// Through the real loop: a tool returns an image; the next request
// carries it after the tool result on an image model and a placeholder
// on a text-only one.
func TestImageToolThroughTheLoop(t *testing.T) {
	for _, tc := range []struct {
		model   string
		inlined bool
	}{{"deepseek-flash", true}, {"deepseek-v4-pro", false}} {
		t.Run(tc.model, func(t *testing.T) {
			store := newAttachments()
			screenshot := tools.Define(tools.Spec{Name: "screenshot", Description: "Take a screenshot."},
				func(ctx context.Context, c *tools.Call, in shotIn) (*harness.ToolResult, error) {
					if !slices.Contains(c.Env.ModelInput, harness.ModalityImage) {
						return harness.TextResult("[screenshot not taken: the model cannot see images]"), nil
					}
					d, err := c.Env.Attachments.Put(ctx, pngBytes)
					if err != nil {
						return nil, err
					}
					return &harness.ToolResult{Content: []harness.Block{harness.TextBlock("captured " + in.Path),
						harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: d, MediaType: "image/png", Size: int64(len(pngBytes)), Name: in.Path}}}}, nil
				})
			p := newProvider(t,
				sse(toolDelta(0, "call_s", "screenshot", `{"path":"ui.png"}`), finish("tool_calls")),
				sse(text("I see it"), finish("stop")),
			)
			loop, err := agent.New(agent.WithModel(p.modelNamed(tc.model)), agent.WithTools(screenshot), agent.WithStores(agent.Stores{Attachments: store}))
			require.NoError(t, err)
			t.Cleanup(func() { loop.Close() })
			_, _, end := runTurn(t, loop, "show me")
			require.Equal(t, "completed", end.Reason)
			msgs := p.Requests()[1].Messages(t)
			if tc.inlined {
				require.Len(t, msgs, 4)
				assert.Equal(t, "captured ui.png\n[image ui.png (image/png, 43 bytes) is attached to the next user message]", msgs[2]["content"])
				parts := msgs[3]["content"].([]any)
				assert.Equal(t, "image_url", parts[1].(map[string]any)["type"])
			} else {
				require.Len(t, msgs, 3)
				assert.Equal(t, "[screenshot not taken: the model cannot see images]", msgs[2]["content"])
			}
		})
	}
}
