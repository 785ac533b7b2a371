package model_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// allocatedPerByte assembles a write call of about size bytes streamed in
// 4-byte deltas and returns the bytes allocated per argument byte.
func allocatedPerByte(t *testing.T, size int) float64 {
	t.Helper()
	args, chunks := writeArgs(size, 4)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var a model.Assembler
	for _, c := range chunks {
		a.Add(c)
	}
	msg := a.Message()
	runtime.ReadMemStats(&after)
	calls := msg.ToolCalls()
	require.Len(t, calls, 1)
	require.Equal(t, args, calls[0].Arguments, "the pieces are joined in order")
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(args))
}

// TestAssemblerArgumentsLinear: the memory assembling a call's arguments
// costs per byte stays flat as the arguments grow. Joining pieces by
// string concatenation re-copies everything so far on every piece, so
// its cost per byte grows with the size (quadrupling the size quadruples
// it).
func TestAssemblerArgumentsLinear(t *testing.T) {
	small := allocatedPerByte(t, 16<<10)
	large := allocatedPerByte(t, 64<<10)
	t.Logf("bytes allocated per argument byte: %.1f at 16 KiB, %.1f at 64 KiB", small, large)
	assert.Less(t, large, 16.0, "assembling 64 KiB costs a small constant per byte")
	assert.Less(t, large, 2*small+1, "the cost per byte does not grow with the size")
}

func TestAssemblerJoinsCallsByIndex(t *testing.T) {
	var a model.Assembler
	for _, c := range []model.Chunk{
		{Type: model.ChunkReasoning, Text: "think "},
		{Type: model.ChunkReasoning, Text: "more"},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, ID: "b", Name: "grep", Arguments: `{"pattern":`}},
		{Type: model.ChunkText, Text: "hello "},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, ID: "a", Name: "read"}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, Arguments: `"x"}`}},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, Arguments: "  "}},
		{Type: model.ChunkText, Text: "world"},
		{Type: model.ChunkFinish, Finish: model.FinishToolCalls},
	} {
		a.Add(c)
	}
	msg := a.Message()
	require.Len(t, msg.Content, 4)
	assert.Equal(t, "think more", msg.Content[0].Text)
	assert.Equal(t, "hello world", msg.Text())
	calls := msg.ToolCalls()
	require.Len(t, calls, 2)
	assert.Equal(t, "a", calls[0].ID)
	assert.Equal(t, "read", calls[0].Name)
	assert.Equal(t, "{}", calls[0].Arguments, "blank arguments become an empty object")
	assert.Equal(t, "b", calls[1].ID)
	assert.Equal(t, `{"pattern":"x"}`, calls[1].Arguments)
	// Message can be called again and returns its own calls.
	again := a.Message()
	again.Content[2].ToolCall.ID = "changed"
	assert.Equal(t, "a", msg.ToolCalls()[0].ID)
	finish, ok := a.Finish()
	assert.True(t, ok)
	assert.Equal(t, model.FinishToolCalls, finish)
	assert.False(t, a.Empty())
}

func TestAssemblerErr(t *testing.T) {
	for name, tc := range map[string]struct {
		chunks []model.Chunk
		want   harness.Code // "" for a usable answer
	}{
		"text and a finish":          {[]model.Chunk{{Type: model.ChunkText, Text: "hi"}, {Type: model.ChunkFinish, Finish: model.FinishStop}}, ""},
		"a call and a finish":        {[]model.Chunk{{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{ID: "a", Name: "read"}}, {Type: model.ChunkFinish, Finish: model.FinishToolCalls}}, ""},
		"text without a finish":      {[]model.Chunk{{Type: model.ChunkText, Text: "hi"}}, harness.CodeTruncatedStream},
		"nothing at all":             {nil, harness.CodeTruncatedStream},
		"a finish and nothing else":  {[]model.Chunk{{Type: model.ChunkFinish, Finish: model.FinishStop}}, harness.CodeEmptyResponse},
		"only reasoning, finished":   {[]model.Chunk{{Type: model.ChunkReasoning, Text: "hm"}, {Type: model.ChunkFinish, Finish: model.FinishStop}}, harness.CodeEmptyResponse},
		"empty, cut by output limit": {[]model.Chunk{{Type: model.ChunkFinish, Finish: model.FinishLength}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var a model.Assembler
			for _, c := range tc.chunks {
				a.Add(c)
			}
			err := a.Err()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, tc.want, harness.CodeOf(err))
			assert.True(t, model.Retryable(err), "the loop tries such an answer again")
		})
	}
}

// Signed reasoning blocks stay apart, each with its signature; a
// redacted block is a block of its own; a ChunkModel names the model
// that answered.
func TestAssemblerKeepsSignedReasoningBlocks(t *testing.T) {
	var a model.Assembler
	for _, c := range []model.Chunk{
		{Type: model.ChunkModel, Text: "fallback-model"},
		{Type: model.ChunkReasoning, Text: "first "},
		{Type: model.ChunkReasoning, Text: "thought"},
		{Type: model.ChunkReasoning, Signature: "sig-1"},
		{Type: model.ChunkReasoning, Redacted: true, Signature: "opaque"},
		{Type: model.ChunkReasoning, Text: "second", Signature: "sig-2"},
		{Type: model.ChunkText, Text: "answer"},
		{Type: model.ChunkReasoning, Text: "unsigned tail"},
		{Type: model.ChunkFinish, Finish: model.FinishStop},
	} {
		a.Add(c)
	}
	assert.Equal(t, []harness.Block{
		{Type: harness.BlockReasoning, Text: "first thought", Signature: "sig-1"},
		{Type: harness.BlockReasoning, Signature: "opaque", Redacted: true},
		{Type: harness.BlockReasoning, Text: "second", Signature: "sig-2"},
		{Type: harness.BlockReasoning, Text: "unsigned tail"},
		harness.TextBlock("answer"),
	}, a.Message().Content)
	assert.Equal(t, "fallback-model", a.Model())
	var plain model.Assembler
	assert.Empty(t, plain.Model())
}

// Thinking interleaved with tool use keeps its place after the calls
// that preceded it.
func TestAssemblerKeepsInterleavedThinkingInPlace(t *testing.T) {
	var a model.Assembler
	for _, c := range []model.Chunk{
		{Type: model.ChunkReasoning, Text: "first", Signature: "s1"},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, ID: "a", Name: "ls", Arguments: "{}"}},
		{Type: model.ChunkReasoning, Text: "between", Signature: "s2"},
		{Type: model.ChunkReasoning, Redacted: true, Signature: "enc"},
		{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 1, ID: "b", Name: "ls", Arguments: "{}"}},
		{Type: model.ChunkFinish, Finish: model.FinishToolCalls},
	} {
		a.Add(c)
	}
	var order []string
	for _, b := range a.Message().Content {
		switch b.Type {
		case harness.BlockReasoning:
			order = append(order, "reasoning "+b.Signature)
		case harness.BlockToolCall:
			order = append(order, "call "+b.ToolCall.ID)
		}
	}
	assert.Equal(t, []string{"reasoning s1", "call a", "reasoning s2", "reasoning enc", "call b"}, order)
}
