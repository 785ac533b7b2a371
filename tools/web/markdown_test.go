package web

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConvertHostileHTML: pages built to make a converter recurse deep
// or work long are cut or reduced to text.
func TestConvertHostileHTML(t *testing.T) {
	// Deeper than the parser accepts: reduced to its text.
	p, err := toMarkdown(context.Background(), "<title>T</title>"+strings.Repeat("<div>", 100_000)+"bottom text"+strings.Repeat("</div>", 100_000), nil)
	require.NoError(t, err)
	assert.Contains(t, p.plain, "could not be parsed as a tree")
	assert.Equal(t, "bottom text", p.markdown)
	assert.Equal(t, "T", p.title)

	// Deeper than the conversion goes, within what the parser accepts:
	// the deep part is cut off and counted.
	p, err = toMarkdown(context.Background(), "<p>top</p>"+strings.Repeat("<span>", 300)+"deep"+strings.Repeat("</span>", 300), nil)
	require.NoError(t, err)
	assert.Empty(t, p.plain)
	assert.Equal(t, 300-(maxDepth-2), p.pruned, "spans under html and body, deeper than %d", maxDepth)
	assert.Contains(t, p.markdown, "top")
	assert.NotContains(t, p.markdown, "deep")

	// More elements than the conversion takes: reduced to its text.
	p, err = toMarkdown(context.Background(), "<script>var hidden=1</script>"+strings.Repeat("<p>para</p>", maxElements+10), nil)
	require.NoError(t, err)
	assert.Contains(t, p.plain, "more than 200000 elements")
	assert.True(t, strings.HasPrefix(p.markdown, "para\n\npara\n\n"))
	assert.NotContains(t, p.markdown, "hidden")

	// A cancelled context stops the text reduction.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = toMarkdown(ctx, strings.Repeat("<p>para</p>", maxElements+10), nil)
	assert.ErrorIs(t, err, context.Canceled)
}
