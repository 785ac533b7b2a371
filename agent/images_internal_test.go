package agent

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/fingerprint"
)

func imageHistory() []harness.Message {
	img := func(name string) *harness.Image {
		return &harness.Image{Digest: attdigest.Of([]byte(name)), MediaType: "image/png", Width: 2, Height: 2, Size: 100, Name: name}
	}
	return []harness.Message{
		{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("see"), {Type: harness.BlockImage, Image: img("u.png")}}},
		{Role: harness.RoleAssistant, Content: []harness.Block{{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "read_image", Arguments: "{}"}}}},
		{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
			CallID: "c1", Name: "read_image", Content: []harness.Block{harness.TextBlock("image/png"), harness.Block{Type: harness.BlockImage, Image: new(*img("t.png"))}}}}}},
		{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("plain")}},
	}
}

func TestProjectImagesNeverMutates(t *testing.T) {
	msgs := imageHistory()
	before, _ := json.Marshal(msgs)
	out := projectImages(msgs, false, true, imageBudget{}, nil)
	after, _ := json.Marshal(msgs)
	assert.JSONEq(t, string(before), string(after), "the input (shared with the history) is unchanged")
	require.Len(t, out, 4)
	assert.Equal(t, harness.BlockText, out[0].Content[1].Type)
	assert.Contains(t, out[0].Content[1].Text, "u.png")
	assert.Equal(t, harness.BlockText, out[2].Content[0].ToolResult.Content[1].Type)
	assert.Equal(t, "image/png", out[2].Content[0].ToolResult.Content[0].Text)
	assert.Equal(t, "c1", out[2].Content[0].ToolResult.CallID)
	assert.Same(t, &msgs[1].Content[0], &out[1].Content[0], "messages without images are shared, not copied")
	assert.Same(t, &msgs[3].Content[0], &out[3].Content[0])

	// Images the model can see pass through untouched.
	same := projectImages(msgs, true, true, imageBudget{}, nil)
	for i := range msgs {
		assert.Same(t, &msgs[i].Content[0], &same[i].Content[0])
	}
	// No images: the very same slice.
	plain := msgs[1:2]
	assert.Equal(t, &plain[0], &projectImages(plain, false, true, imageBudget{}, nil)[0])
}

func TestProjectImagesCacheKeepsSlices(t *testing.T) {
	msgs := imageHistory()
	cache := &imageCache{}
	a := projectImages(msgs, false, true, imageBudget{}, cache)
	b := projectImages(msgs, false, true, imageBudget{}, cache)
	assert.Same(t, &a[0].Content[0], &b[0].Content[0], "an unchanged projection reuses its slice")
	assert.Same(t, &a[2].Content[0], &b[2].Content[0])

	// So the fingerprint chain is reused rather than recomputed.
	var c chainCache
	fa := c.fingerprint(&model.Request{Messages: a})
	fb := c.fingerprint(&model.Request{Messages: b})
	assert.Equal(t, fa, fb)
	assert.Equal(t, fingerprint.Request(&model.Request{Messages: b}).History, fb.History)

	// A different decision is a different projection.
	d := projectImages(msgs, true, true, imageBudget{Count: 1}, cache)
	assert.Equal(t, harness.BlockText, d[0].Content[1].Type, "the older image is over the budget")
	assert.Equal(t, harness.BlockImage, d[2].Content[0].ToolResult.Content[1].Type, "the newest is kept")
	assert.Contains(t, d[0].Content[1].Text, "one of the oldest images past what a request carries (1 images")
}

// Past the image budget the oldest images leave in steps of a quarter of
// the budget, so that a new image moves the changed point of the history
// (where the provider's prefix cache stops hitting) once every few
// images; a byte budget still holds exactly.
func TestImagesLeaveInSteps(t *testing.T) {
	refs := func(n int, size int64) []imageRef {
		out := make([]imageRef, n)
		for i := range out {
			out[i] = imageRef{img: &harness.Image{Size: size}}
		}
		return out
	}
	b := imageBudget{}.withDefaults() // 20 images, 20 MiB
	for _, tt := range []struct{ n, want int }{{19, 0}, {20, 0}, {21, 5}, {25, 5}, {26, 10}, {30, 10}, {31, 15}} {
		assert.Equal(t, tt.want, omitted(refs(tt.n, 1000), b), "%d images", tt.n)
	}
	small := imageBudget{Count: 3}.withDefaults()
	assert.Equal(t, 2, omitted(refs(5, 1000), small), "a budget under 4 images leaves one at a time")
	bytes := imageBudget{Bytes: 2500}.withDefaults()
	assert.Equal(t, 3, omitted(refs(5, 1000), bytes), "the byte budget is exact")

	// Over 40 images, the earliest changed message moves 5 times, not 20.
	var msgs []harness.Message
	moves, prevOmitted := 0, 0
	for i := range 40 {
		msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{{Type: harness.BlockImage,
			Image: &harness.Image{Name: fmt.Sprint(i), Size: 1000, MediaType: "image/png"}}}})
		out := projectImages(msgs, true, true, imageBudget{}, nil)
		n := 0
		for _, m := range out {
			if m.Content[0].Type == harness.BlockText {
				n++
			}
		}
		if n != prevOmitted {
			moves++
			prevOmitted = n
		}
	}
	assert.Equal(t, 4, moves)
	assert.Equal(t, 20, prevOmitted)
}
