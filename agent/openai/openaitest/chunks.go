package openaitest

import (
	"encoding/json"
	"fmt"
)

// model is the model name the builders put in chunks.
const model = "test-model"

// Chunk returns a chat.completion.chunk with one choice whose delta is
// delta and whose finish reason is finish ("" for null).
func Chunk(delta any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
		"choices": []any{choice},
	})
}

// Text is a chunk with a piece of answer text.
func Text(s string) string { return Chunk(map[string]any{"content": s}, "") }

// Reasoning is a chunk with a piece of reasoning (DeepSeek's
// reasoning_content).
func Reasoning(s string) string {
	return Chunk(map[string]any{"reasoning_content": s, "content": nil}, "")
}

// Finish is a chunk with only a finish reason ("stop", "tool_calls",
// "length", "content_filter").
func Finish(reason string) string { return Chunk(map[string]any{}, reason) }

// ToolCall is a chunk with a tool call, or one piece of it. A string args
// is sent as the raw argument text, so a call can come in pieces: the
// first piece carries the id and the name, later ones leave them empty
// and carry more of the arguments (as replay.ToolCall, a string is the
// raw text). Any other args is encoded as JSON, a whole call in one
// chunk.
func ToolCall(index int, id, name string, args any) string {
	raw, ok := args.(string)
	if !ok {
		raw = mustJSON(args)
	}
	fn := map[string]any{"arguments": raw}
	tc := map[string]any{"index": index, "function": fn}
	if id != "" {
		tc["id"] = id
		tc["type"] = "function"
	}
	if name != "" {
		fn["name"] = name
	}
	return Chunk(map[string]any{"tool_calls": []any{tc}}, "")
}

// Usage is DeepSeek's final usage chunk (no choices), with its cache
// counters and reasoning tokens.
func Usage(prompt, completion, hit, miss, reasoning int) string {
	return mustJSON(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
		"choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss,
			"completion_tokens_details": map[string]any{"reasoning_tokens": reasoning},
		},
	})
}

// mustJSON encodes v, which the builders only call with values that
// encode; a failure still yields valid JSON (the error as a string).
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return string(b)
}
