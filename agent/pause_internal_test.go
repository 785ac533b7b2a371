package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAnswerIDs(t *testing.T) {
	unknown, missing := answerIDs([]string{"c3", "c1", "c2"}, map[string]int{"c2": 1, "x": 1, "a": 1})
	assert.Equal(t, []string{"a", "x"}, unknown)
	assert.Equal(t, []string{"c1", "c3"}, missing)
	unknown, missing = answerIDs([]string{"c1"}, map[string]bool{"c1": true})
	assert.Empty(t, unknown)
	assert.Empty(t, missing)
}
