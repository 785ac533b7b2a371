package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/model"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies under testdata/golden")

// history is a conversation with every kind of message: signed and
// redacted reasoning with parallel calls, an unsigned reasoning block
// from another provider, a failed call, a tool image, a reminder after
// the results, arguments that are not JSON, an empty tool result.
func history(img *harness.Image) *model.Request {
	return &model.Request{
		System: "You are terse.",
		Messages: []harness.Message{
			userText("list and read"),
			{Role: harness.RoleAssistant, Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: "List first.", Signature: "sig-A"},
				{Type: harness.BlockReasoning, Signature: "redacted-data", Redacted: true},
				harness.TextBlock("Listing."),
				call("toolu_1", "ls", `{ "path": "." }`),
				call("toolu_2", "read", `{"file_path":"main.go"}`),
			}},
			result("toolu_1", "ls", false, harness.TextBlock("main.go\nshot.png")),
			result("toolu_2", "read", true, harness.TextBlock("main.go is \"quoted\" <tag> & \u2028")),
			userText("<system-reminder>\nbe brief\n</system-reminder>"),
			{Role: harness.RoleAssistant, Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: "unsigned, from another provider"},
				call("toolu_3", "read_image", `not json`),
			}},
			result("toolu_3", "read_image", false, harness.TextBlock("image/png 2x2"), harness.Block{Type: harness.BlockImage, Image: img}),
			{Role: harness.RoleAssistant, Content: []harness.Block{call("toolu_4", "touch", `{}`)}},
			result("toolu_4", "touch", false),
			{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("Done.")}},
			userText("thanks"),
		},
		Tools: []model.Tool{
			{Name: "ls", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{
				"type": "object",
				"properties": {"file_path": {"type": "string"}},
				"required": ["file_path"]
			}`)},
		},
	}
}

func pngImage(store *memImages) *harness.Image {
	data := []byte("\x89PNG\r\n\x1a\nnot really a png")
	return &harness.Image{Digest: store.put(data), MediaType: "image/png", Width: 2, Height: 2, Size: int64(len(data)), Name: "shot.png"}
}

// TestRequestGolden pins the exact bytes sent for the same history under
// several configurations. Run with -update to rewrite them after an
// intended change, and read the diff.
func TestRequestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		cfg  anthropic.Config
	}{
		{"defaults", "claude-sonnet-5-5", anthropic.Config{}},
		{"controls", "claude-opus-5-5", anthropic.Config{MaxOutputTokens: 4096, Thinking: new(true), ThinkingBudget: 2048, ThinkingDisplay: "summarized",
			Effort: "high", Temperature: new(0.5), TopP: new(0.9), ParallelToolCalls: new(false), CacheTTL: "1h"}},
		{"forced-tool", "claude-haiku-4-5", anthropic.Config{Thinking: new(false), ToolChoice: "read", DisablePromptCache: true}},
		{"text-only", "my-compatible-model", anthropic.Config{Thinking: new(true), ToolChoice: "auto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memImages{}
			req := history(pngImage(store))
			req.Images = store
			f := newFake(t, ok(text("ok")))
			_, err := drain(t, f.modelNamed(tc.id, tc.cfg), context.Background(), req)
			require.NoError(t, err)
			got := f.Requests()[0].Body
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, got))
			assert.Equal(t, compact.String(), string(got), "the body is compact")
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, got, "", "  "))
			path := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, append(pretty.Bytes(), '\n'), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), pretty.String()+"\n")
		})
	}
}

// blocksOf returns the content blocks of message i of a request body.
func blocksOf(t *testing.T, body map[string]any, i int) []map[string]any {
	t.Helper()
	msgs := body["messages"].([]any)
	var out []map[string]any
	for _, b := range msgs[i].(map[string]any)["content"].([]any) {
		out = append(out, b.(map[string]any))
	}
	return out
}

// breakpoints returns where the body's cache_control marks are: "tools",
// "system", or "message N block M".
func breakpoints(t *testing.T, body map[string]any) []string {
	t.Helper()
	var out []string
	if tools, ok := body["tools"].([]any); ok {
		for _, tl := range tools {
			if _, ok := tl.(map[string]any)["cache_control"]; ok {
				out = append(out, "tools")
			}
		}
	}
	if sys, ok := body["system"].([]any); ok {
		if _, ok := sys[0].(map[string]any)["cache_control"]; ok {
			out = append(out, "system")
		}
	}
	for i := range body["messages"].([]any) {
		for j, b := range blocksOf(t, body, i) {
			if _, ok := b["cache_control"]; ok {
				out = append(out, "message "+string(rune('0'+i))+" block "+string(rune('0'+j)))
			}
		}
	}
	return out
}

// Breakpoints sit on the stable prefix: the last tool, the system
// prompt, the end of the previous request, the end of this one; never
// more than four, never on a thinking block.
func TestCacheBreakpoints(t *testing.T) {
	send := func(cfg anthropic.Config, req *model.Request) map[string]any {
		f := newFake(t, ok(text("ok")))
		_, err := drain(t, f.model(cfg), context.Background(), req)
		require.NoError(t, err)
		return f.body(0)
	}
	store := &memImages{}
	req := history(pngImage(store))
	req.Images = store
	body := send(anthropic.Config{}, req)
	// Messages: 0 user, 1 assistant, 2 user (results, reminder), 3
	// assistant, 4 user (result), 5 assistant, 6 user, 7 assistant, 8
	// user "thanks".
	assert.Equal(t, []string{"tools", "system", "message 6 block 0", "message 8 block 0"}, breakpoints(t, body))

	// First request: no answer yet, one message breakpoint.
	first := &model.Request{System: "s", Messages: []harness.Message{userText("hi")}}
	assert.Equal(t, []string{"system", "message 0 block 0"}, breakpoints(t, send(anthropic.Config{}, first)))

	// Without system and tools, the two message breakpoints remain.
	req.System, req.Tools = "", nil
	assert.Equal(t, []string{"message 6 block 0", "message 8 block 0"}, breakpoints(t, send(anthropic.Config{}, req)))

	// The breakpoint skips a block that cannot carry one.
	onlyThinking := &model.Request{Messages: []harness.Message{
		userText("a"),
		{Role: harness.RoleAssistant, Content: []harness.Block{{Type: harness.BlockReasoning, Text: "t", Signature: "s"}, harness.TextBlock("x")}},
		userText("b"),
	}}
	assert.Equal(t, []string{"message 0 block 0", "message 2 block 0"}, breakpoints(t, send(anthropic.Config{}, onlyThinking)))

	// The one-hour lifetime is on every breakpoint; none when caching is off.
	body = send(anthropic.Config{CacheTTL: "1h"}, first)
	assert.Equal(t, map[string]any{"type": "ephemeral", "ttl": "1h"}, blocksOf(t, body, 0)[0]["cache_control"])
	assert.Empty(t, breakpoints(t, send(anthropic.Config{DisablePromptCache: true}, history(nil))))
}

// The shapes of the history: reasoning goes back exactly as it came
// (signed thinking with its signature, redacted data), unsigned
// reasoning not at all; results open their user message, images inside;
// arguments that are not an object go back as {}.
func TestHistoryShapes(t *testing.T) {
	store := &memImages{}
	img := pngImage(store)
	req := history(img)
	req.Images = store
	f := newFake(t, ok(text("ok")))
	_, err := drain(t, f.model(), context.Background(), req)
	require.NoError(t, err)
	body := f.body(0)
	assert.Len(t, body["messages"], 9)

	a := blocksOf(t, body, 1)
	assert.Equal(t, map[string]any{"type": "thinking", "thinking": "List first.", "signature": "sig-A"}, a[0])
	assert.Equal(t, map[string]any{"type": "redacted_thinking", "data": "redacted-data"}, a[1])
	assert.Equal(t, map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": map[string]any{"path": "."}}, a[3])

	u := blocksOf(t, body, 2)
	require.Len(t, u, 3)
	assert.Equal(t, "tool_result", u[0]["type"])
	assert.Equal(t, "toolu_1", u[0]["tool_use_id"])
	assert.Nil(t, u[0]["is_error"])
	assert.Equal(t, true, u[1]["is_error"])
	assert.Equal(t, "text", u[2]["type"], "the reminder after the results")

	a = blocksOf(t, body, 3)
	require.Len(t, a, 1, "unsigned reasoning is left out")
	assert.Equal(t, map[string]any{}, a[0]["input"], "arguments that are not an object")

	res := blocksOf(t, body, 4)[0]["content"].([]any)
	require.Len(t, res, 2)
	image := res[1].(map[string]any)
	assert.Equal(t, "image", image["type"])
	assert.Equal(t, "image/png", image["source"].(map[string]any)["media_type"])
	assert.Equal(t, "iVBORw0KGgpub3QgcmVhbGx5IGEgcG5n", image["source"].(map[string]any)["data"])

	empty := blocksOf(t, body, 6)[0]["content"].([]any)
	assert.Equal(t, "(no output)", empty[0].(map[string]any)["text"])

	// A model without image input gets a placeholder.
	f = newFake(t, ok(text("ok")))
	_, err = drain(t, f.modelNamed("my-compatible-model"), context.Background(), req)
	require.NoError(t, err)
	res = blocksOf(t, f.body(0), 4)[0]["content"].([]any)
	assert.Equal(t, "text", res[1].(map[string]any)["type"])
	assert.Contains(t, res[1].(map[string]any)["text"], "does not accept image input")
}

// Newer images win the image budget; older ones become placeholders.
func TestImageBudget(t *testing.T) {
	store := &memImages{}
	var msgs []harness.Message
	for i := range 102 {
		img := pngImage(store)
		img.Name = "shot" + strings.Repeat("x", i%3) + ".png"
		msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{{Type: harness.BlockImage, Image: img}}})
	}
	f := newFake(t, ok(text("ok")))
	_, err := drain(t, f.model(), context.Background(), &model.Request{Messages: msgs, Images: store})
	require.NoError(t, err)
	blocks := blocksOf(t, f.body(0), 0)
	require.Len(t, blocks, 102)
	images := 0
	for i, b := range blocks {
		if b["type"] == "image" {
			images++
			assert.GreaterOrEqual(t, i, 2, "the oldest images are the ones left out")
		}
	}
	assert.Equal(t, 100, images)
}

// A structured answer: output_config.format on Anthropic's own API, the
// schema in the prompt elsewhere.
func TestStructuredOutput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)
	req := &model.Request{Messages: []harness.Message{userText("check")}, Output: &model.Output{Name: "verdict", Schema: schema}}
	f := newFake(t, ok(text(`{"ok":true}`)))
	_, err := drain(t, f.model(), context.Background(), req)
	require.NoError(t, err)
	body := f.body(0)
	assert.Nil(t, body["output_config"])
	msgs := body["messages"].([]any)
	require.Len(t, msgs, 1)
	blocks := blocksOf(t, body, 0)
	require.Len(t, blocks, 2)
	assert.Contains(t, blocks[1]["text"], `{"ok":false}`, "an example")
	assert.Contains(t, blocks[1]["text"], string(schema))

	anthropicHost := anthropic.BodyForHost(t, "https://api.anthropic.com", req)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(anthropicHost, &doc))
	assert.Equal(t, map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
		"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []any{"ok"}, "additionalProperties": false}}}, doc["output_config"])
	assert.Len(t, doc["messages"], 1)
}
