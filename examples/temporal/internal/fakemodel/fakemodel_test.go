package fakemodel

import (
	"encoding/json"
	"strings"
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
	assert.Contains(t, first[0], `"record_effect"`)
	assert.Contains(t, first[0], `{\"sleep_ms\":5}`)
	assert.Contains(t, first[2], `"tool_calls"`)
	assert.Equal(t, first, answer(msgs(t, `[{"role":"user","content":"effects=2 steps=1 sleep=5 (a)"}]`)), "the same messages, the same answer")
	other := answer(msgs(t, `[{"role":"user","content":"effects=2 steps=1 sleep=5 (b)"}]`))
	assert.NotEqual(t, first[0], other[0], "another prompt, other call ids")

	done := answer(msgs(t, `[{"role":"user","content":[{"type":"text","text":"effects=2 steps=1 sleep=5 (a)"}]},
		{"role":"assistant","tool_calls":[{},{}]},
		{"role":"tool","content":"recorded effect x"},
		{"role":"tool","content":"The outcome of this record_effect call is unknown: ..."}]`))
	assert.Contains(t, done[0], "done: 2 results, 1 outcome unknown")

	plain := answer(msgs(t, `[{"role":"user","content":"hello"}]`))
	assert.True(t, strings.Contains(plain[0], "You said: hello"))
}
