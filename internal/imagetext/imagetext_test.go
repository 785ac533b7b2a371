package imagetext_test

import (
	"strings"
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

// FuzzPlaceholder checks the shape of every placeholder: one bracketed
// line that names the image, says it is not shown and quotes at most the
// start of the digest.
func FuzzPlaceholder(f *testing.F) {
	f.Add("sha256:0123456789abcdef0123", "image/png", "/w/a.png", int64(300), 10, 20, "why")
	f.Add("", "", "", int64(0), 0, 0, "")
	f.Add("sha256:", "x", "]\n[", int64(-1), -5, 7, "the current model does not accept image input")
	f.Fuzz(func(t *testing.T, digest, mediaType, name string, size int64, w, h int, reason string) {
		img := &harness.Image{Digest: digest, MediaType: mediaType, Name: name, Size: size, Width: w, Height: h}
		got := imagetext.Placeholder(img, reason)
		if !strings.HasPrefix(got, "[image") || !strings.HasSuffix(got, "]") || !strings.Contains(got, " not shown") {
			t.Fatalf("malformed placeholder %q", got)
		}
		if d := digest; len(d) > len("sha256:")+12 && strings.Contains(got, d) {
			t.Fatalf("the whole digest %q is quoted in %q", d, got)
		}
		desc := imagetext.Describe(img)
		if !strings.HasPrefix(desc, "image") || strings.Contains(desc, " not shown") && !strings.Contains(name+mediaType, " not shown") {
			t.Fatalf("malformed description %q", desc)
		}
	})
}
