package fakemodel

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func msgs(t *testing.T, s string) []message {
	t.Helper()
	var out []message
	require.NoError(t, json.Unmarshal([]byte(s), &out))
	return out
}

func TestAnswer(t *testing.T) {
	first := answer(msgs(t, `[{"role":"user","content":"effects=2 steps=1 sleep=5 (a)"}]`))
	require.Len(t, first, 4, "two calls, the finish, the usage")
	require.NotNil(t, first[0].ToolCall)
	assert.Equal(t, "record_effect", first[0].ToolCall.Name)
	assert.Equal(t, `{"sleep_ms":5}`, first[0].ToolCall.Arguments)
	assert.Equal(t, 1, first[1].ToolCall.Index)
	assert.Equal(t, "tool_calls", first[2].Finish)
	require.NotNil(t, first[3].Usage)
	assert.Equal(t, int64(110), first[3].Usage.InputTokens)
	assert.Equal(t, first, answer(msgs(t, `[{"role":"user","content":"effects=2 steps=1 sleep=5 (a)"}]`)), "the same messages, the same answer")
	other := answer(msgs(t, `[{"role":"user","content":"effects=2 steps=1 sleep=5 (b)"}]`))
	assert.NotEqual(t, first[0].ToolCall.ID, other[0].ToolCall.ID, "another prompt, other call ids")

	done := answer(msgs(t, `[{"role":"user","content":[{"type":"text","text":"effects=2 steps=1 sleep=5 (a)"}]},
		{"role":"assistant","tool_calls":[{},{}]},
		{"role":"tool","content":"recorded effect x"},
		{"role":"tool","content":"The outcome of this record_effect call is unknown: ..."}]`))
	assert.Equal(t, "done: 2 results, 1 outcome unknown", done[0].Text)

	plain := answer(msgs(t, `[{"role":"user","content":"hello"}]`))
	assert.Equal(t, "You said: hello", plain[0].Text)
}
