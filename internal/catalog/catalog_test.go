package catalog_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/internal/catalog"
)

// Every entry is complete and every id appears once.
func TestEntriesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, list := range [][]catalog.Model{catalog.DeepSeekModels(), catalog.AnthropicModels()} {
		for _, m := range list {
			assert.False(t, seen[m.ID], "%s is listed twice", m.ID)
			seen[m.ID] = true
			assert.NotEmpty(t, m.Provider, m.ID)
			assert.Positive(t, m.ContextWindow, m.ID)
			assert.Positive(t, m.MaxOutput, m.ID)
			assert.Positive(t, m.Input, m.ID)
			assert.Positive(t, m.Output, m.ID)
			assert.Less(t, m.CacheHit, m.Input, "%s: a cache hit costs less than a miss", m.ID)
			got, ok := catalog.Lookup(m.ID)
			assert.True(t, ok, m.ID)
			assert.Equal(t, m, got)
		}
	}
	_, ok := catalog.Lookup("deepseek-chat")
	assert.False(t, ok, "retired")
}
