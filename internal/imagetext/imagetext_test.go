package imagetext_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/imagetext"
)

func TestPlaceholder(t *testing.T) {
	img := &harness.Image{Digest: "sha256:0123456789abcdef0123", MediaType: "image/webp", Width: 10, Height: 20, Size: 300, Name: "/w/a.webp"}
	assert.Equal(t, "[image /w/a.webp (image/webp, 300 bytes, 10x20, sha256:0123456789ab) not shown: why]", imagetext.Placeholder(img, "why"))
	img.Size = 3 << 20
	assert.Equal(t, "[image /w/a.webp (image/webp, 3.0 MiB, 10x20, sha256:0123456789ab) not shown: why]", imagetext.Placeholder(img, "why"))
	assert.Equal(t, "[image not shown]", imagetext.Placeholder(&harness.Image{}, ""))
}

func TestDescribe(t *testing.T) {
	img := &harness.Image{Digest: "sha256:0123456789abcdef0123", MediaType: "image/png", Width: 640, Height: 480, Size: 1300, Name: "shot.png"}
	assert.Equal(t, "image shot.png (image/png, 1.3 KiB, 640x480)", imagetext.Describe(img), "no digest in a description")
	assert.Equal(t, "image", imagetext.Describe(&harness.Image{}))
}
