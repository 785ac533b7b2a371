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

// Role is the first chunk DeepSeek sends: the role, empty content and an
// empty reasoning piece.
func Role() string {
	return Chunk(map[string]any{"role": "assistant", "content": "", "reasoning_content": ""}, "")
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

// ToolDelta is a chunk with one piece of a tool call: the first piece of
// a call carries its id and name, later ones leave them empty and carry
// more of the arguments.
func ToolDelta(index int, id, name, args string) string {
	fn := map[string]any{"arguments": args}
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

// ToolCall is a chunk with one whole tool call, args encoded as JSON.
func ToolCall(index int, id, name string, args any) string {
	return ToolDelta(index, id, name, mustJSON(args))
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
