package images

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// budgetCase is an image whose decode is measured against its estimate.
type budgetCase struct {
	name string
	data []byte
	lim  Limits
}

func budgetCases(t *testing.T) []budgetCase {
	rng := rand.New(rand.NewPCG(41, 42))
	scale := Limits{LongEdge: 150}
	var cases []budgetCase
	add := func(name string, data []byte, lim Limits) {
		cases = append(cases, budgetCase{name, data, lim})
	}
	for _, s := range []pngSpec{
		{w: 450, h: 350, depth: 16, colour: 6},
		{w: 450, h: 350, depth: 16, colour: 6, interlaced: true},
		{w: 320, h: 240, depth: 8, colour: 2},
		{w: 350, h: 170, depth: 4, colour: 3, plte: 16},
		{w: 170, h: 350, depth: 1, colour: 0, interlaced: true},
	} {
		data := assemblePNG(s.chunks(rng))
		add(filepath.Base(s.String())+".png", data, scale)
		add(filepath.Base(s.String())+"-pass.png", data, Limits{})
	}
	noise := image.NewNRGBA(image.Rect(0, 0, 600, 500))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(rng.IntN(256))
	}
	add("noise.png", encPNG(t, noise), Limits{LongEdge: 550}) // stays noise: a PNG as large as its pixels
	opaque := photo(600, 500)
	for i := range opaque.Pix {
		if i%4 != 3 {
			opaque.Pix[i] = uint8(rng.IntN(256))
		}
	}
	add("noise-opaque.png", encPNG(t, opaque), Limits{LongEdge: 550})
	add("noise.jpg", encJPEG(t, opaque), Limits{LongEdge: 550})
	add("photo.jpg", encJPEG(t, photo(500, 350)), scale)
	add("photo-pass.jpg", encJPEG(t, photo(500, 350)), Limits{})
	gray := image.NewGray(image.Rect(0, 0, 400, 300))
	for i := range gray.Pix {
		gray.Pix[i] = uint8(i)
	}
	add("grey.jpg", encJPEG(t, gray), scale)
	add("cmyk.jpg", fixture(t, "cmyk.jpg"), Limits{})
	add("cmyk-scaled.jpg", fixture(t, "cmyk.jpg"), Limits{LongEdge: 20})
	add("lossy.webp", fixture(t, "lossy.webp"), Limits{LongEdge: 20})
	add("alpha.webp", fixture(t, "lossy_alpha.webp"), Limits{LongEdge: 20})
	add("lossless.webp", fixture(t, "lossless_alpha.webp"), Limits{LongEdge: 20})
	add("wide.webp", fixture(t, "wide.webp"), Limits{})
	add("flat.webp", bombWebPLossless(600, 450, color.NRGBA{1, 2, 3, 200}), scale)
	add("big.gif", encGIF(t, paletted(450, 250, 1)), scale)
	add("anim.gif", encGIF(t, paletted(200, 100, 1), paletted(200, 100, 2)), Limits{})
	small := paletted(50, 40, 1)
	small.Rect = image.Rect(100, 20, 150, 60)
	var buf bytes.Buffer
	require.NoError(t, gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{small, paletted(400, 300, 2)}, Delay: []int{0, 0},
		Config: image.Config{Width: 400, Height: 300, ColorModel: small.Palette}}))
	add("offset.gif", buf.Bytes(), Limits{})
	add("offset-scaled.gif", buf.Bytes(), Limits{LongEdge: 100})
	p := filepath.Join(t.TempDir(), "interlaced.gif")
	writeBombGIF(t, p, 350, 250, true)
	interlaced, err := os.ReadFile(p)
	require.NoError(t, err)
	add("interlaced.gif", interlaced, scale)
	return cases
}

func (s pngSpec) String() string {
	kind := map[byte]string{0: "grey", 2: "rgb", 3: "palette", 4: "greyalpha", 6: "rgba"}[s.colour]
	if s.interlaced {
		kind += "-interlaced"
	}
	return kind + "-" + itoaTest(int(s.depth))
}

func itoaTest(n int) string { return string(rune('0'+n/10%10)) + string(rune('0'+n%10)) }

// TestMemoryNeedCoversDecode checks the estimate against what a decode
// really allocates: every byte it allocates, garbage included, so the
// estimate bounds the peak too.
func TestMemoryNeedCoversDecode(t *testing.T) {
	for _, c := range budgetCases(t) {
		t.Run(c.name, func(t *testing.T) {
			lim := c.lim.withDefaults()
			mt, _ := mediaTypeOf(c.name)
			cfg, err := decodeConfig(mt, c.data)
			require.NoError(t, err)
			need, what := memoryNeed(mt, c.data, cfg.Width, cfg.Height, lim)
			var n *Normalized
			alloc := allocDuring(func() { n, err = Normalize(bg, c.name, c.data, lim) })
			require.NoError(t, err)
			t.Logf("%s (%s, %dx%d -> %dx%d): allocated %d KiB, estimated %d KiB", c.name, what, cfg.Width, cfg.Height, n.Width, n.Height, alloc>>10, need>>10)
			assert.LessOrEqual(t, int64(alloc), need, "the estimate covers the decode")
		})
	}
}

func TestMemoryNeedFromHeaders(t *testing.T) {
	jpg := encJPEG(t, photo(64, 48))
	f, ok := readJPEGFrame(jpg)
	require.True(t, ok)
	assert.Equal(t, 3, f.comps)
	assert.Equal(t, [2]int{2, 2}, [2]int{f.h[0], f.v[0]}, "image/jpeg writes 4:2:0")
	assert.False(t, f.progressive)
	cm, ok := readJPEGFrame(fixture(t, "cmyk.jpg"))
	require.True(t, ok)
	assert.Equal(t, 4, cm.comps)
	assert.True(t, cm.adobe)

	lim := defaultLimits()
	need := func(data []byte, w, h int) int64 { n, _ := memoryNeed(typeJPEG, data, w, h, lim); return n }
	base := need(withJPEGSize(t, jpg, 8000, 6000), 8000, 6000)
	// 4:2:0 is 1.5 bytes a pixel; 4:4:4 three; progressive adds 4 a sample.
	assert.InDelta(t, 1.5*48e6, float64(base)-float64(scaledNeed(8000, 2048, 1536, false, lim.MaxBytes))-decoderState, 1e6)
	s444 := withJPEGSize(t, jpg, 8000, 6000)
	s444[bytes.Index(s444, []byte{0xff, 0xc0})+11] = 0x11
	assert.InDelta(t, 1.5*48e6, float64(need(s444, 8000, 6000)-base), 1e6)
	prog := withJPEGSize(t, jpg, 8000, 6000)
	prog[bytes.Index(prog, []byte{0xff, 0xc0})+1] = 0xc2
	assert.InDelta(t, 4*1.5*48e6, float64(need(prog, 8000, 6000)-base), 1e6)

	// A PNG's depth matters only for its rows; interlacing adds sums for
	// the output.
	deep := assemblePNG([]pngChunk{{typ: "IHDR", data: ihdrData(8000, 6000, 16, 6, false)}})
	inter := assemblePNG([]pngChunk{{typ: "IHDR", data: ihdrData(8000, 6000, 16, 6, true)}})
	d, _ := memoryNeed(typePNG, deep, 8000, 6000, lim)
	i, what := memoryNeed(typePNG, inter, 8000, 6000, lim)
	assert.Less(t, d, int64(48<<20))
	assert.InDelta(t, 16*2048*1536, float64(i-d), 2e5)
	assert.Equal(t, "interlaced 16-bit RGBA PNG", what)
}

func TestNormalizeOverDecodeBudget(t *testing.T) {
	prog := withJPEGSize(t, encJPEG(t, photo(64, 48)), 8000, 6000)
	prog[bytes.Index(prog, []byte{0xff, 0xc0})+1] = 0xc2
	var err error
	alloc := allocDuring(func() { _, err = Normalize(bg, "shots/huge.jpg", prog, Limits{}) })
	assert.Equal(t, harness.CodeTooLarge, codeOf(t, err))
	assert.Less(t, alloc, uint64(256<<10), "refused from the header: %d bytes allocated", alloc)
	msg := err.Error()
	assert.Contains(t, msg, "shots/huge.jpg (progressive JPEG with 4:2:0 chroma, 8000x6000 pixels) would take about 364.8 MiB of memory to decode")
	assert.Contains(t, msg, "over the 128.0 MiB read_image allows")
	assert.Contains(t, msg, "convert huge.jpg -resize 2048x2048 smaller.png")

	// The budget is a limit like the others: raised, the same file is
	// decoded (and found corrupt, its scan being a small image's).
	_, err = Normalize(bg, "huge.jpg", prog, Limits{MaxDecodeBytes: 1 << 30})
	assert.Equal(t, CodeCorruptImage, codeOf(t, err))

	// A PNG is cheap to validate, whatever its depth; to downscale one,
	// the budget must hold the output.
	png16 := encPNG(t, image.NewNRGBA64(image.Rect(0, 0, 400, 300)))
	_, err = Normalize(bg, "deep.png", png16, Limits{MaxDecodeBytes: 1 << 20})
	require.NoError(t, err)
	_, err = Normalize(bg, "deep.png", png16, Limits{MaxDecodeBytes: 1 << 20, LongEdge: 200})
	assert.Equal(t, harness.CodeTooLarge, codeOf(t, err))
	assert.Contains(t, err.Error(), "16-bit RGBA PNG")
}
