package files

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/fs"
)

func TestWindowComplete(t *testing.T) {
	whole := &fs.Text{Lines: []fs.Line{{Text: "a"}, {Text: "b"}}, Offset: 1, TotalLines: 2}
	assert.True(t, windowComplete(whole))
	assert.Equal(t, 2, windowEnd(whole))
	assert.Zero(t, cutLines(whole))

	head := &fs.Text{Lines: []fs.Line{{Text: "a"}}, Offset: 1, TotalLines: 2}
	assert.False(t, windowComplete(head), "lines past the window")
	assert.Equal(t, 1, windowEnd(head))

	tail := &fs.Text{Lines: []fs.Line{{Text: "b"}}, Offset: 2, TotalLines: 2}
	assert.False(t, windowComplete(tail), "lines before the window")
	assert.Equal(t, 2, windowEnd(tail))

	cut := &fs.Text{Lines: []fs.Line{{Text: "a"}, {Text: "bb", Cut: 2}}, Offset: 1, TotalLines: 2}
	assert.False(t, windowComplete(cut), "a cut line makes the window incomplete")
	assert.Equal(t, 1, cutLines(cut))

	empty := &fs.Text{Offset: 1}
	assert.True(t, windowComplete(empty), "an empty file is whole")
	assert.Zero(t, windowEnd(empty))
}
