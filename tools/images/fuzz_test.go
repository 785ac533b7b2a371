package images

import (
	"bytes"
	"errors"
	"image"
	"runtime"
	"testing"

	"github.com/go-harness/harness"
)

// FuzzNormalize feeds arbitrary bytes under every accepted extension:
// Normalize must not panic, must fail only with an *harness.Error (or a context
// error), must stay within a memory bound set by the pixel limit, and
// what it accepts must decode to what it reports.
func FuzzNormalize(f *testing.F) {
	sixteen := image.NewNRGBA64(image.Rect(0, 0, 5, 4))
	for i := range sixteen.Pix {
		sixteen.Pix[i] = uint8(i * 13)
	}
	for _, seed := range [][]byte{
		encPNG(f, screenshot(8, 8)),
		encPNG(f, translucent(70, 3)),
		encPNG(f, sixteen),
		encJPEG(f, photo(16, 12)),
		encJPEG(f, photo(80, 3)),
		encGIF(f, paletted(4, 4, 1)),
		encGIF(f, paletted(4, 4, 1), paletted(4, 4, 2)),
		bombPNG(100_000, 100_000),
		bombPNG(300, 300),
		fixture(f, "lossy.webp"),
		fixture(f, "lossy_alpha.webp"),
		fixture(f, "lossless_alpha.webp"),
		fixture(f, "wide.webp"),
		fixture(f, "animated.webp"),
		fixture(f, "cmyk.jpg"),
		[]byte("not an image"),
	} {
		for ext := range uint8(len(extensions())) {
			if t, _ := mediaTypeOf("x" + extensions()[ext]); t == sniffOnly(seed) {
				f.Add(seed, ext)
			}
		}
	}
	lim := Limits{MaxBytes: 1 << 20, MaxPixels: 1 << 20, MaxSide: 4096, LongEdge: 64}
	f.Fuzz(func(t *testing.T, data []byte, ext uint8) {
		name := "fuzz" + extensions()[int(ext)%len(extensions())]
		var n *Normalized
		var err error
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n, err = Normalize(bg, name, data, lim)
		runtime.ReadMemStats(&after)
		// A 1 Mpx image decodes to at most 8 MiB (16-bit RGBA); the rest
		// is decoder and encoder state.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 96<<20 {
			t.Fatalf("allocated %d bytes for a %d-byte input", alloc, len(data))
		}
		if err != nil {
			var e *harness.Error
			if !errors.As(err, &e) || e.Code == "" || e.Message == "" {
				t.Fatalf("error without a code or message: %T %v", err, err)
			}
			if n != nil {
				t.Fatal("a result with an error")
			}
			return
		}
		if n.Width <= 0 || n.Height <= 0 || n.SourceWidth <= 0 || n.SourceHeight <= 0 {
			t.Fatalf("bad dimensions %+v", n)
		}
		// The header walkers that cost the decode found what the decoders
		// decoded, so the estimate was not a worst-case guess.
		switch n.SourceMediaType {
		case typePNG:
			if hd, ok := readPNGHeader(data); !ok || hd.width != n.SourceWidth || hd.height != n.SourceHeight {
				t.Fatalf("the PNG header walk found %+v, %v", hd, ok)
			}
		case typeJPEG:
			if _, ok := readJPEGFrame(data); !ok {
				t.Fatal("the JPEG marker walk found no frame")
			}
		case typeGIF:
			if _, _, _, ok := gifFirstFrame(data); !ok {
				t.Fatal("the GIF block walk found no frame")
			}
		case typeWebP:
			if need, _, _ := webpNeed(data, n.SourceWidth, n.SourceHeight); need == 7*int64(n.SourceWidth)*int64(n.SourceHeight) {
				t.Fatal("the WebP chunk walk found no frame")
			}
		}
		if !n.Reencoded {
			if !bytes.Equal(n.Data, data) {
				t.Fatal("a pass-through changed the bytes")
			}
			if max(n.Width, n.Height) > lim.LongEdge {
				t.Fatalf("passed through %dx%d over the budget", n.Width, n.Height)
			}
			return
		}
		if max(n.Width, n.Height) > lim.LongEdge {
			t.Fatalf("re-encoded to %dx%d, over the budget", n.Width, n.Height)
		}
		img, _, err := decodeAny(n)
		if err != nil {
			t.Fatalf("the re-encoded %s does not decode: %v", n.MediaType, err)
		}
		if b := img.Bounds(); b.Dx() != n.Width || b.Dy() != n.Height {
			t.Fatalf("reported %dx%d, decoded %v", n.Width, n.Height, b)
		}
	})
}

func sniffOnly(data []byte) string {
	t, err := sniff("x", typePNG, data)
	if err != nil {
		return ""
	}
	return t
}

func decodeAny(n *Normalized) (image.Image, string, error) {
	img, err := decode(n.MediaType, n.Data)
	return img, n.MediaType, err
}
