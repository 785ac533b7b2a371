// Package imagetext names images for a model: the one shape of the text a
// model sees instead of an image it is not shown, used by the loop and by
// model adapters alike.
//
// It imports harness only.
package imagetext

import (
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/units"
)

// Placeholder returns the text a model sees instead of img, with the
// reason it is not shown: "[image shot.png (image/png, 1.2 KiB, 640x480,
// sha256:0123456789ab) not shown: reason]".
func Placeholder(img *harness.Image, reason string) string {
	s := "[" + describe(img, true) + " not shown"
	if reason != "" {
		s += ": " + reason
	}
	return s + "]"
}

// Describe names an image for a model: where it came from, its type, size
// and dimensions: "image shot.png (image/png, 1.2 KiB, 640x480)".
func Describe(img *harness.Image) string { return describe(img, false) }

func describe(img *harness.Image, digest bool) string {
	var b strings.Builder
	b.WriteString("image")
	if img.Name != "" {
		b.WriteString(" " + img.Name)
	}
	var facts []string
	if img.MediaType != "" {
		facts = append(facts, img.MediaType)
	}
	if img.Size > 0 {
		facts = append(facts, units.Bytes(img.Size))
	}
	if img.Width > 0 && img.Height > 0 {
		facts = append(facts, fmt.Sprintf("%dx%d", img.Width, img.Height))
	}
	if d := img.Digest; digest && d != "" {
		if len(d) > len("sha256:")+12 {
			d = d[:len("sha256:")+12]
		}
		facts = append(facts, d)
	}
	if len(facts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(facts, ", "))
	}
	return b.String()
}
