package spillname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSanitize(t *testing.T) {
	assert.Equal(t, "none", Sanitize("", 10))
	assert.Equal(t, "a_b-c_9", Sanitize("a/b-c.9", 10))
	assert.Equal(t, "______", Sanitize("../\x00é", 10), "no separator, dot or NUL survives; each byte becomes one '_'")
	assert.Equal(t, "abc", Sanitize("abcdef", 3))
}

func TestSessionDir(t *testing.T) {
	a, b := SessionDir("s/1"), SessionDir("s_1")
	assert.True(t, strings.HasPrefix(a, "s_1-"))
	assert.True(t, strings.HasPrefix(b, "s_1-"))
	assert.NotEqual(t, a, b, "ids that sanitize alike get different directories")
	assert.Equal(t, a, SessionDir("s/1"))
}

func FuzzSanitize(f *testing.F) {
	f.Add("call_1", 48)
	f.Add("../../etc", 8)
	f.Fuzz(func(t *testing.T, id string, limit int) {
		if limit < 1 || limit > 256 {
			return
		}
		got := Sanitize(id, limit)
		assert.LessOrEqual(t, len(got), max(limit, len("none")))
		assert.NotContains(t, got, "/")
		assert.NotContains(t, got, "\x00")
		assert.NotEqual(t, ".", got)
		assert.NotEqual(t, "..", got)
	})
}
