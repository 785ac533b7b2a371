package images

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Fixtures are generated with the standard encoders; the few formats they
// cannot write (WebP, CMYK JPEG) are in testdata (see its README).

func encPNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func encJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}))
	return b.Bytes()
}

func encGIF(t testing.TB, frames ...*image.Paletted) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, gif.EncodeAll(&b, &gif.GIF{Image: frames, Delay: make([]int, len(frames))}))
	return b.Bytes()
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// photo returns an opaque image with smooth gradients and noise: many
// distinct colours, like a photograph.
func photo(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	seed := uint32(1)
	for y := range h {
		for x := range w {
			seed = seed*1664525 + 1013904223
			n := uint8(seed >> 29)
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*255/max(w, 1)) ^ n, uint8(y*255/max(h, 1)) + n, uint8((x+y)/3) + n, 255})
		}
	}
	return img
}

// screenshot returns an opaque image of a few flat colours, like a
// screenshot or a diagram.
func screenshot(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cols := []color.NRGBA{{255, 255, 255, 255}, {30, 30, 30, 255}, {0, 120, 215, 255}, {230, 230, 230, 255}}
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, cols[(x/37+y/23)%len(cols)])
		}
	}
	return img
}

// translucent returns an image with an alpha ramp.
func translucent(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{200, 40, 90, uint8(x * 255 / max(w, 1))})
		}
	}
	return img
}

func paletted(w, h int, idx uint8) *image.Paletted {
	pal := color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}}
	img := image.NewPaletted(image.Rect(0, 0, w, h), pal)
	for i := range img.Pix {
		img.Pix[i] = idx
	}
	return img
}

// bombPNG returns a tiny PNG whose header declares w x h RGBA pixels, with
// one valid, compressed, all-zero row and nothing else.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		b.Write(n[:])
		c := crc32.NewIEEE()
		c.Write([]byte(typ))
		c.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.BigEndian.PutUint32(n[:], c.Sum32())
		b.Write(n[:])
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 1+4*min(int(w), 1024)))
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// withJPEGSize rewrites the dimensions in a baseline JPEG's SOF0 header.
func withJPEGSize(t testing.TB, data []byte, w, h uint16) []byte {
	t.Helper()
	out := bytes.Clone(data)
	i := bytes.Index(out, []byte{0xff, 0xc0})
	require.Positive(t, i, "SOF0 marker")
	binary.BigEndian.PutUint16(out[i+5:], h)
	binary.BigEndian.PutUint16(out[i+7:], w)
	return out
}

// bmpHeader returns the start of a BMP file (a Windows DIB header).
func bmpHeader() []byte {
	b := make([]byte, 64)
	copy(b, "BM")
	binary.LittleEndian.PutUint32(b[14:], 40)
	return b
}
