package images

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/webp"

	"github.com/go-harness/harness"
)

var bg = context.Background()

func codeOf(t *testing.T, err error) harness.Code {
	t.Helper()
	require.Error(t, err)
	var e *harness.Error
	require.True(t, errors.As(err, &e), "want *harness.Error, got %T: %v", err, err)
	assert.Equal(t, e.Code, harness.CodeOf(err), "the dispatcher sees the same code")
	return e.Code
}

// decodeOut decodes a normalized image and checks it against its fields.
func decodeOut(t *testing.T, n *Normalized) image.Image {
	t.Helper()
	var img image.Image
	var err error
	switch n.MediaType {
	case typePNG:
		img, err = png.Decode(bytes.NewReader(n.Data))
	case typeJPEG:
		img, err = jpeg.Decode(bytes.NewReader(n.Data))
	case typeGIF:
		img, err = gif.Decode(bytes.NewReader(n.Data))
	case typeWebP:
		img, err = webp.Decode(bytes.NewReader(n.Data))
	default:
		t.Fatalf("media type %q", n.MediaType)
	}
	require.NoError(t, err)
	assert.Equal(t, n.Width, img.Bounds().Dx())
	assert.Equal(t, n.Height, img.Bounds().Dy())
	return img
}

func TestNormalizePassThrough(t *testing.T) {
	sixteen := image.NewNRGBA64(image.Rect(0, 0, 30, 20))
	for i := range sixteen.Pix {
		sixteen.Pix[i] = uint8(i * 7)
	}
	gray16 := image.NewGray16(image.Rect(0, 0, 10, 10))
	for i := range gray16.Pix {
		gray16.Pix[i] = uint8(i)
	}
	exact := encPNG(t, screenshot(2048, 10)) // exactly at the budget
	cases := []struct {
		name string
		data []byte
		mt   string
		w, h int
	}{
		{"shot.png", encPNG(t, screenshot(64, 48)), typePNG, 64, 48},
		{"alpha.PNG", encPNG(t, translucent(33, 17)), typePNG, 33, 17},
		{"photo.jpg", encJPEG(t, photo(120, 80)), typeJPEG, 120, 80},
		{"photo.jpeg", encJPEG(t, photo(80, 120)), typeJPEG, 80, 120},
		{"one.gif", encGIF(t, paletted(16, 9, 1)), typeGIF, 16, 9},
		{"lossy.webp", fixture(t, "lossy.webp"), typeWebP, 40, 30},
		{"alpha.webp", fixture(t, "lossy_alpha.webp"), typeWebP, 40, 30},
		{"lossless.webp", fixture(t, "lossless_alpha.webp"), typeWebP, 40, 30},
		{"deep.png", encPNG(t, sixteen), typePNG, 30, 20},
		{"gray16.png", encPNG(t, gray16), typePNG, 10, 10},
		{"edge.png", exact, typePNG, 2048, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := Normalize(bg, c.name, c.data, Limits{})
			require.NoError(t, err)
			assert.Equal(t, c.data, n.Data, "an image within budget passes through byte-identical")
			assert.False(t, n.Reencoded)
			assert.False(t, n.Scale() > 1)
			assert.Equal(t, 1.0, n.Scale())
			assert.Equal(t, c.mt, n.MediaType)
			assert.Equal(t, c.mt, n.SourceMediaType)
			assert.Equal(t, [2]int{c.w, c.h}, [2]int{n.Width, n.Height})
			assert.Equal(t, [2]int{c.w, c.h}, [2]int{n.SourceWidth, n.SourceHeight})
			assert.Equal(t, len(c.data), n.SourceBytes)
			decodeOut(t, n)
		})
	}
}

func TestNormalizeDownscale(t *testing.T) {
	small := Limits{LongEdge: 200} // small images keep the test fast under -race
	cases := []struct {
		name   string
		data   []byte
		lim    Limits
		mt     string
		w, h   int
		sw, sh int
	}{
		// Opaque photos become JPEG; screenshots, alpha and palettes PNG.
		{"photo.jpg", encJPEG(t, photo(300, 200)), small, typeJPEG, 200, 133, 300, 200},
		{"photo.png", encPNG(t, photo(250, 400)), small, typeJPEG, 125, 200, 250, 400},
		{"shot.png", encPNG(t, screenshot(640, 360)), small, typePNG, 200, 113, 640, 360},
		{"alpha.png", encPNG(t, translucent(300, 100)), small, typePNG, 200, 67, 300, 100},
		{"big.gif", encGIF(t, paletted(210, 50, 2)), small, typePNG, 200, 48, 210, 50},
		{"lossy.webp", fixture(t, "lossy.webp"), Limits{LongEdge: 20}, typeJPEG, 20, 15, 40, 30},
		{"alpha.webp", fixture(t, "lossy_alpha.webp"), Limits{LongEdge: 20}, typePNG, 20, 15, 40, 30},
		// The default budget, 2048 px.
		{"wide.webp", fixture(t, "wide.webp"), Limits{}, typePNG, 2048, 27, 3000, 40},
		{"wide.png", encPNG(t, screenshot(2100, 30)), Limits{}, typePNG, 2048, 29, 2100, 30},
		{"tall.jpg", encJPEG(t, photo(20, 2500)), Limits{}, typeJPEG, 16, 2048, 20, 2500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := Normalize(bg, c.name, c.data, c.lim)
			require.NoError(t, err)
			longEdge := c.lim.withDefaults().LongEdge
			assert.True(t, n.Reencoded)
			assert.True(t, n.Scale() > 1)
			assert.Equal(t, c.mt, n.MediaType)
			assert.Equal(t, [2]int{c.w, c.h}, [2]int{n.Width, n.Height})
			assert.Equal(t, [2]int{c.sw, c.sh}, [2]int{n.SourceWidth, n.SourceHeight})
			assert.InDelta(t, float64(max(c.sw, c.sh))/float64(longEdge), n.Scale(), 1e-9)
			assert.Equal(t, longEdge, max(n.Width, n.Height))
			decodeOut(t, n)
		})
	}
}

func TestNormalizeDownscaleKeepsContent(t *testing.T) {
	// Left half red, right half blue, bottom-right corner transparent.
	src := image.NewNRGBA(image.Rect(0, 0, 800, 200))
	for y := range 200 {
		for x := range 800 {
			c := color.NRGBA{255, 0, 0, 255}
			if x >= 400 {
				c = color.NRGBA{0, 0, 255, 255}
			}
			if x >= 600 && y >= 100 {
				c = color.NRGBA{}
			}
			src.SetNRGBA(x, y, c)
		}
	}
	n, err := Normalize(bg, "halves.png", encPNG(t, src), Limits{LongEdge: 400})
	require.NoError(t, err)
	require.Equal(t, typePNG, n.MediaType)
	out := decodeOut(t, n)
	assert.Equal(t, 400, n.Width)
	assert.Equal(t, 100, n.Height)
	r, _, b, a := out.At(50, 20).RGBA()
	assert.Equal(t, [3]uint32{0xffff, 0, 0xffff}, [3]uint32{r, b, a}, "left is red")
	r, _, b, a = out.At(250, 20).RGBA()
	assert.Equal(t, [3]uint32{0, 0xffff, 0xffff}, [3]uint32{r, b, a}, "right is blue")
	_, _, _, a = out.At(380, 90).RGBA()
	assert.Zero(t, a, "transparency survives")
}

func TestNormalizeGIFFirstFrame(t *testing.T) {
	data := encGIF(t, paletted(20, 10, 1), paletted(20, 10, 2))
	assert.Equal(t, 2, gifFrames(data))
	n, err := Normalize(bg, "anim.gif", data, Limits{})
	require.NoError(t, err)
	assert.True(t, n.Reencoded, "an animated GIF is reduced to its first frame")
	assert.False(t, n.Scale() > 1)
	assert.Equal(t, typePNG, n.MediaType)
	out := decodeOut(t, n)
	r, g, b, _ := out.At(5, 5).RGBA()
	assert.Equal(t, [3]uint32{0xffff, 0, 0}, [3]uint32{r, g, b}, "the first frame (red), not the second (blue)")

	// A first frame smaller than the logical screen lands on a
	// transparent canvas of the screen's size.
	small := paletted(4, 4, 1)
	small.Rect = image.Rect(2, 2, 6, 6)
	var buf bytes.Buffer
	require.NoError(t, gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{small, paletted(10, 10, 2)}, Delay: []int{0, 0},
		Config: image.Config{Width: 10, Height: 10, ColorModel: small.Palette}}))
	n, err = Normalize(bg, "offset.gif", buf.Bytes(), Limits{})
	require.NoError(t, err)
	out = decodeOut(t, n)
	assert.Equal(t, [2]int{10, 10}, [2]int{n.Width, n.Height})
	_, _, _, a := out.At(0, 0).RGBA()
	assert.Zero(t, a)
	r, _, _, a = out.At(3, 3).RGBA()
	assert.Equal(t, [2]uint32{0xffff, 0xffff}, [2]uint32{r, a})
}

func TestGIFFrames(t *testing.T) {
	assert.Equal(t, 1, gifFrames(encGIF(t, paletted(3, 3, 0))))
	assert.Equal(t, 2, gifFrames(encGIF(t, paletted(3, 3, 0), paletted(3, 3, 1), paletted(3, 3, 2))), "counting stops at two")
	assert.Equal(t, 0, gifFrames([]byte("GIF89a")))
	assert.Equal(t, 0, gifFrames(nil))
}

func TestNormalizeSixteenBitPNG(t *testing.T) {
	src := image.NewRGBA64(image.Rect(0, 0, 2500, 30))
	for y := range 30 {
		for x := range 2500 {
			src.SetRGBA64(x, y, color.RGBA64{uint16(x * 26), 0x8000, uint16(y * 2000), 0xffff})
		}
	}
	data := encPNG(t, src)
	require.Equal(t, byte(16), data[24], "the fixture is a 16-bit PNG")
	n, err := Normalize(bg, "deep.png", data, Limits{})
	require.NoError(t, err)
	assert.True(t, n.Scale() > 1)
	assert.Equal(t, [2]int{2048, 25}, [2]int{n.Width, n.Height})
	out := decodeOut(t, n)
	_, g, _, _ := out.At(1024, 10).RGBA()
	assert.InDelta(t, 0x8000, g, 0x300, "colours survive the conversion to 8 bits")
}

func TestNormalizeCMYKJPEG(t *testing.T) {
	// A real CMYK JPEG (Adobe marker, four components).
	data := fixture(t, "cmyk.jpg")
	img, err := jpeg.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	require.IsType(t, &image.CMYK{}, img, "the fixture decodes as CMYK")
	n, err := Normalize(bg, "print.jpg", data, Limits{})
	require.NoError(t, err)
	assert.True(t, n.Reencoded, "CMYK is re-encoded as RGB, which every model reads")
	assert.False(t, n.Scale() > 1)
	assert.Equal(t, typeJPEG, n.MediaType)
	out := decodeOut(t, n)
	assert.IsType(t, &image.YCbCr{}, out)
	for _, c := range []struct {
		x, y    int
		r, g, b uint32
	}{{5, 5, 255, 0, 0}, {35, 5, 0, 255, 0}, {5, 25, 0, 0, 255}, {35, 25, 255, 255, 255}} {
		r, g, b, _ := out.At(c.x, c.y).RGBA()
		assert.InDelta(t, c.r, r>>8, 24, "red at %d,%d", c.x, c.y)
		assert.InDelta(t, c.g, g>>8, 24, "green at %d,%d", c.x, c.y)
		assert.InDelta(t, c.b, b>>8, 24, "blue at %d,%d", c.x, c.y)
	}

	// An image.CMYK written by image/jpeg (which converts it to YCbCr)
	// and larger than the budget.
	cmyk := image.NewCMYK(image.Rect(0, 0, 2200, 30))
	for i := 0; i < len(cmyk.Pix); i += 4 {
		cmyk.Pix[i], cmyk.Pix[i+1], cmyk.Pix[i+2], cmyk.Pix[i+3] = uint8(i), 40, 200, 10
	}
	n, err = Normalize(bg, "big.jpg", encJPEG(t, cmyk), Limits{})
	require.NoError(t, err)
	assert.Equal(t, [2]int{2048, 28}, [2]int{n.Width, n.Height})
	decodeOut(t, n)
}

func TestNormalizeWebP(t *testing.T) {
	n, err := Normalize(bg, "x.webp", fixture(t, "lossless_alpha.webp"), Limits{})
	require.NoError(t, err)
	img := decodeOut(t, n)
	c := color.NRGBAModel.Convert(img.At(10, 20)).(color.NRGBA)
	assert.Equal(t, color.NRGBA{200, 60, 40, 160}, c, "lossless pixels decode exactly")

	_, err = Normalize(bg, "anim.webp", fixture(t, "animated.webp"), Limits{})
	assert.Equal(t, CodeUnsupportedImageType, codeOf(t, err))
	assert.Contains(t, err.Error(), "animated WebP")

	assert.True(t, webpLossless(fixture(t, "wide.webp")))
	assert.False(t, webpLossless(fixture(t, "lossy.webp")))
	assert.False(t, webpLossless(fixture(t, "lossy_alpha.webp")))
	assert.False(t, webpAnimated(fixture(t, "lossy_alpha.webp")))
	assert.True(t, webpAnimated(fixture(t, "animated.webp")))
}

func TestNormalizeTypeMismatch(t *testing.T) {
	pngData := encPNG(t, screenshot(8, 8))
	cases := []struct {
		name, msg string
		data      []byte
	}{
		{"dir/shot.jpg", "Rename it to dir/shot.png", pngData},
		{"shot.webp", "Rename it to shot.png", pngData},
		{"photo.png", "Rename it to photo.jpg", encJPEG(t, photo(8, 8))},
		{"a.gif", "Rename it to a.webp", fixture(t, "lossy.webp")},
		{"a.png", "Rename it to a.gif", encGIF(t, paletted(2, 2, 0))},
		{"a.png", "image/bmp", bmpHeader()},
	}
	for _, c := range cases {
		_, err := Normalize(bg, c.name, c.data, Limits{})
		assert.Equal(t, CodeImageTypeMismatch, codeOf(t, err), c.name)
		assert.Contains(t, err.Error(), c.msg)
	}
}

func TestNormalizeRefusals(t *testing.T) {
	whole := encPNG(t, photo(200, 150))
	jpg := encJPEG(t, photo(200, 150))
	gifData := encGIF(t, paletted(100, 100, 1))
	webpData := fixture(t, "lossy.webp")
	flipped := bytes.Clone(whole)
	flipped[len(flipped)/2] ^= 0xff
	cases := []struct {
		name string
		data []byte
		lim  Limits
		code harness.Code
		msg  string
	}{
		{"notes.txt", whole, Limits{}, CodeUnsupportedImageType, `extension ".txt"`},
		{"Makefile", whole, Limits{}, CodeUnsupportedImageType, "no extension"},
		{"pic.bmp", whole, Limits{}, CodeUnsupportedImageType, "convert other image formats"},
		{"empty.png", nil, Limits{}, CodeCorruptImage, "is empty"},
		{"text.png", []byte("hello, I am text\n"), Limits{}, CodeCorruptImage, "text/plain"},
		{"half.png", whole[:len(whole)/2], Limits{}, CodeCorruptImage, "truncated"},
		{"header.png", whole[:40], Limits{}, CodeCorruptImage, "truncated"},
		{"magic.png", whole[:8], Limits{}, CodeCorruptImage, "not a whole PNG"},
		{"flipped.png", flipped, Limits{}, CodeCorruptImage, "corrupt"},
		{"half.jpg", jpg[:len(jpg)/2], Limits{}, CodeCorruptImage, "not a whole JPEG"},
		{"half.gif", gifData[:len(gifData)/2], Limits{}, CodeCorruptImage, "not a whole GIF"},
		{"half.webp", webpData[:len(webpData)-30], Limits{}, CodeCorruptImage, "not a whole WebP"},
		{"big.png", whole, Limits{MaxBytes: 1000}, harness.CodeTooLarge, "over the 1000-byte limit"},
		{"wide.png", whole, Limits{MaxSide: 199}, harness.CodeTooLarge, "200x150"},
		{"many.png", whole, Limits{MaxPixels: 29_999}, harness.CodeTooLarge, "29999 pixels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := Normalize(bg, c.name, c.data, c.lim)
			assert.Nil(t, n)
			assert.Equal(t, c.code, codeOf(t, err))
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// allocDuring returns the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestNormalizeBombRefusedBeforeDecode(t *testing.T) {
	jpg := encJPEG(t, photo(16, 16))
	gifData := encGIF(t, paletted(16, 16, 1))
	hugeGIF := bytes.Clone(gifData)
	binary.LittleEndian.PutUint16(hugeGIF[6:], 65535)
	binary.LittleEndian.PutUint16(hugeGIF[8:], 65535)
	hugeWebP := bytes.Clone(fixture(t, "lossy_alpha.webp"))
	hugeWebP[24], hugeWebP[25], hugeWebP[26] = 0xff, 0x3f, 0 // 16384 wide
	hugeWebP[27], hugeWebP[28], hugeWebP[29] = 0xff, 0x3f, 0 // 16384 high
	cases := []struct {
		name string
		data []byte
	}{
		{"bomb.png", bombPNG(100_000, 100_000)},
		{"square.png", bombPNG(8192, 8192)}, // within the side limit, over the pixel limit
		{"tall.png", bombPNG(1, 1<<30)},
		{"bomb.jpg", withJPEGSize(t, jpg, 65000, 65000)},
		{"bomb.gif", hugeGIF},
		{"bomb.webp", hugeWebP},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Less(t, len(c.data), 2000, "the bomb is tiny")
			var err error
			alloc := allocDuring(func() { _, err = Normalize(bg, c.name, c.data, Limits{}) })
			assert.Equal(t, harness.CodeTooLarge, codeOf(t, err))
			assert.Less(t, alloc, uint64(256<<10), "refused from the header: %d bytes allocated", alloc)
		})
	}
}

func TestNormalizeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := Normalize(ctx, "x.png", encPNG(t, photo(30, 10)), Limits{LongEdge: 10})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestMediaTypeOf(t *testing.T) {
	for name, want := range map[string]string{"a.png": typePNG, "B.JPG": typeJPEG, "c.jpeg": typeJPEG, "d.WebP": typeWebP, "e.gif": typeGIF, "/x.y/z.png": typePNG} {
		got, ok := mediaTypeOf(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	for _, name := range []string{"a.bmp", "png", "a.png.txt", "a.", ""} {
		_, ok := mediaTypeOf(name)
		assert.False(t, ok, name)
	}
}

func TestLimitsDefaults(t *testing.T) {
	assert.Equal(t, Limits{MaxBytes: 20 << 20, MaxPixels: 64_000_000, MaxSide: 8192, LongEdge: 2048, MaxDecodeBytes: 128 << 20}, Limits{}.withDefaults())
	assert.Equal(t, 100, Limits{LongEdge: 100}.withDefaults().LongEdge)
}

func TestNormalizeGIFOffsetFrameDownscaled(t *testing.T) {
	// A first frame in the lower right quarter of a 400x200 screen,
	// downscaled without drawing a canvas: the rest is transparent.
	frame := paletted(200, 100, 1)
	frame.Rect = image.Rect(200, 100, 400, 200)
	var buf bytes.Buffer
	require.NoError(t, gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{Width: 400, Height: 200, ColorModel: frame.Palette}}))
	n, err := Normalize(bg, "corner.gif", buf.Bytes(), Limits{LongEdge: 100})
	require.NoError(t, err)
	assert.Equal(t, typePNG, n.MediaType)
	out := decodeOut(t, n)
	assert.Equal(t, [2]int{100, 50}, [2]int{n.Width, n.Height})
	_, _, _, a := out.At(10, 10).RGBA()
	assert.Zero(t, a, "outside the frame")
	r, g, b, a := out.At(80, 40).RGBA()
	assert.Equal(t, [4]uint32{0xffff, 0, 0, 0xffff}, [4]uint32{r, g, b, a}, "inside: the frame's red")
	_, _, _, a = out.At(50, 25).RGBA()
	assert.Equal(t, uint32(0xffff), a, "the frame's corner pixel is whole")
	_, _, _, a = out.At(49, 24).RGBA()
	assert.Zero(t, a)
}
