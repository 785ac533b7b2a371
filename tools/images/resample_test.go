package images

import (
	"context"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceScale is the definition of area averaging in floating point:
// each output pixel averages the premultiplied source over the area it
// covers, weighted by overlap.
func referenceScale(src image.Image, w, h int) [][4]float64 {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	out := make([][4]float64, w*h)
	fx, fy := float64(sw)/float64(w), float64(sh)/float64(h)
	for y := range h {
		for x := range w {
			var sum [4]float64
			for sy := range sh {
				oy := math.Min(float64(sy+1), float64(y+1)*fy) - math.Max(float64(sy), float64(y)*fy)
				if oy <= 0 {
					continue
				}
				for sx := range sw {
					ox := math.Min(float64(sx+1), float64(x+1)*fx) - math.Max(float64(sx), float64(x)*fx)
					if ox <= 0 {
						continue
					}
					r, g, bl, a := src.At(b.Min.X+sx, b.Min.Y+sy).RGBA()
					for i, v := range []uint32{r, g, bl, a} {
						sum[i] += ox * oy * float64(v)
					}
				}
			}
			for i := range sum {
				sum[i] /= fx * fy * 257 // to 8 bits
			}
			out[y*w+x] = sum
		}
	}
	return out
}

func randomImages(rng *rand.Rand, w, h int) map[string]image.Image {
	r := image.Rect(3, 5, 3+w, 5+h) // a non-zero origin
	rgba, nrgba, gray := image.NewRGBA(r), image.NewNRGBA(r), image.NewGray(r)
	rgba64, cmyk := image.NewRGBA64(r), image.NewCMYK(r)
	pal := color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{255, 10, 20, 255}, color.NRGBA{0, 255, 0, 128}, color.Transparent}
	pl := image.NewPaletted(r, pal)
	ycc := image.NewYCbCr(r, image.YCbCrSubsampleRatio420)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			a := uint8(rng.IntN(256))
			rgba.SetRGBA(x, y, color.RGBA{uint8(rng.IntN(int(a) + 1)), uint8(rng.IntN(int(a) + 1)), uint8(rng.IntN(int(a) + 1)), a})
			nrgba.SetNRGBA(x, y, color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))})
			gray.SetGray(x, y, color.Gray{uint8(rng.IntN(256))})
			rgba64.SetRGBA64(x, y, color.RGBA64{uint16(rng.IntN(0x8000)), uint16(rng.IntN(0x8000)), 0, 0xffff})
			cmyk.SetCMYK(x, y, color.CMYK{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))})
			pl.SetColorIndex(x, y, uint8(rng.IntN(len(pal))))
		}
	}
	for i := range ycc.Y {
		ycc.Y[i] = uint8(rng.IntN(256))
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = uint8(rng.IntN(256)), uint8(rng.IntN(256))
	}
	return map[string]image.Image{"RGBA": rgba, "NRGBA": nrgba, "Gray": gray, "RGBA64": rgba64, "CMYK": cmyk, "Paletted": pl, "YCbCr": ycc}
}

func TestAreaScaleMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][4]int{{7, 5, 3, 2}, {10, 10, 5, 5}, {13, 4, 13, 4}, {9, 17, 4, 6}, {31, 7, 8, 2}, {5, 5, 1, 1}, {6, 3, 4, 2}}
	for _, s := range sizes {
		for name, img := range randomImages(rng, s[0], s[1]) {
			got := mustScale(t, img, s[2], s[3])
			want := referenceScale(img, s[2], s[3])
			require.Equal(t, image.Rect(0, 0, s[2], s[3]), got.Bounds())
			for i, px := range want {
				for c := range 4 {
					v := got.Pix[4*i+c]
					if math.Abs(float64(v)-px[c]) > 1.01 {
						t.Fatalf("%s %v: pixel %d channel %d = %d, want %.2f", name, s, i, c, v, px[c])
					}
				}
			}
		}
	}
}

func TestAreaScaleExact(t *testing.T) {
	// A 2x reduction of a 4x2 image averages 2x2 blocks.
	src := image.NewRGBA(image.Rect(0, 0, 4, 2))
	copy(src.Pix, []uint8{
		0, 0, 0, 255, 100, 100, 100, 255, 10, 20, 30, 255, 10, 20, 30, 255,
		200, 200, 200, 255, 100, 100, 100, 255, 10, 20, 30, 255, 10, 20, 30, 255,
	})
	got := mustScale(t, src, 2, 1)
	assert.Equal(t, []uint8{100, 100, 100, 255, 10, 20, 30, 255}, got.Pix)

	// Fully transparent pixels do not darken their neighbours
	// (premultiplied averaging).
	n := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	copy(n.Pix, []uint8{255, 0, 0, 255, 0, 255, 0, 0})
	got = mustScale(t, n, 1, 1)
	assert.Equal(t, color.NRGBA{255, 0, 0, 128}, color.NRGBAModel.Convert(got.At(0, 0)))

	// Indices past a palette read as transparent black, not a panic.
	pl := image.NewPaletted(image.Rect(0, 0, 2, 1), color.Palette{color.White})
	pl.Pix[1] = 7
	got = mustScale(t, pl, 1, 1)
	assert.Equal(t, []uint8{128, 128, 128, 128}, got.Pix)

	// An opaque source stays exactly opaque.
	rng := rand.New(rand.NewPCG(3, 4))
	ycc := randomImages(rng, 97, 61)["YCbCr"]
	got = mustScale(t, ycc, 40, 25)
	assert.True(t, got.Opaque())
}

func FuzzAreaScale(f *testing.F) {
	f.Add(uint8(7), uint8(5), uint8(3), uint8(2), uint64(1))
	f.Add(uint8(1), uint8(1), uint8(1), uint8(1), uint64(2))
	f.Add(uint8(200), uint8(3), uint8(64), uint8(1), uint64(3))
	f.Fuzz(func(t *testing.T, sw, sh, w, h uint8, seed uint64) {
		if sw == 0 || sh == 0 || w == 0 || h == 0 || w > sw || h > sh || int(sw)*int(sh) > 4096 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, seed))
		for name, img := range randomImages(rng, int(sw), int(sh)) {
			got := mustScale(t, img, int(w), int(h))
			want := referenceScale(img, int(w), int(h))
			for i, px := range want {
				for c := range 4 {
					if v := got.Pix[4*i+c]; math.Abs(float64(v)-px[c]) > 1.01 {
						t.Fatalf("%s %dx%d->%dx%d: pixel %d channel %d = %d, want %.2f", name, sw, sh, w, h, i, c, v, px[c])
					}
				}
			}
		}
	})
}

func mustScale(t testing.TB, img image.Image, w, h int) *image.RGBA {
	t.Helper()
	out, err := areaScale(context.Background(), img, w, h)
	require.NoError(t, err)
	return out
}

func TestAreaScaleCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := areaScale(ctx, image.NewGray(image.Rect(0, 0, 10, 10)), 5, 5)
	assert.ErrorIs(t, err, context.Canceled)
}

// scatterAll feeds img to a scatterScaler in Adam7 pass order, as an
// interlaced PNG delivers it.
func scatterAll(t testing.TB, img image.Image, w, h int) *image.RGBA {
	t.Helper()
	b := img.Bounds()
	s, err := newScatterScaler(b.Dx(), b.Dy(), w, h)
	require.NoError(t, err)
	read := rowReader(img)
	row := make([]uint16, 4*b.Dx())
	var px []uint16
	for _, p := range adam7 {
		for y := p.y0; y < b.Dy(); y += p.dy {
			read(b.Min.Y+y, row)
			px = px[:0]
			for x := p.x0; x < b.Dx(); x += p.dx {
				px = append(px, row[4*x:4*x+4]...)
			}
			s.push(y, p.x0, p.dx, px)
		}
	}
	return s.image()
}

func TestScatterScaleMatchesAreaScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sizes := [][4]int{{7, 5, 3, 2}, {10, 10, 5, 5}, {13, 4, 13, 4}, {9, 17, 4, 6}, {31, 7, 8, 2}, {5, 5, 1, 1}, {97, 61, 40, 25}, {200, 3, 64, 1}}
	for _, s := range sizes {
		for name, img := range randomImages(rng, s[0], s[1]) {
			want := mustScale(t, img, s[2], s[3])
			got := scatterAll(t, img, s[2], s[3])
			require.Equal(t, want.Rect, got.Rect)
			for i := range want.Pix {
				if d := int(want.Pix[i]) - int(got.Pix[i]); d < -1 || d > 1 {
					t.Fatalf("%s %v: byte %d is %d, area averaging gives %d", name, s, i, got.Pix[i], want.Pix[i])
				}
			}
		}
	}
	// Opaque stays opaque, transparent stays transparent.
	ycc := randomImages(rng, 97, 61)["YCbCr"]
	assert.True(t, scatterAll(t, ycc, 40, 25).Opaque())
	clear := scatterAll(t, image.NewNRGBA(image.Rect(0, 0, 30, 20)), 7, 3)
	assert.Equal(t, make([]uint8, len(clear.Pix)), clear.Pix)

	_, err := newScatterScaler(10, 10, 11, 5)
	assert.Error(t, err, "it only reduces")
}

func TestAreaScalerUpscales(t *testing.T) {
	// The row-pushing scaler also enlarges (a source row then spans
	// several output rows), matching the definition.
	rng := rand.New(rand.NewPCG(11, 12))
	for name, img := range randomImages(rng, 3, 2) {
		got := mustScale(t, img, 7, 5)
		for i, px := range referenceScale(img, 7, 5) {
			for c := range 4 {
				if v := got.Pix[4*i+c]; math.Abs(float64(v)-px[c]) > 1.01 {
					t.Fatalf("%s: pixel %d channel %d = %d, want %.2f", name, i, c, v, px[c])
				}
			}
		}
	}
}

func TestPremultiplyMatchesColorModel(t *testing.T) {
	src := make([]uint8, 0, 4*256*8)
	for a := range 256 {
		for _, v := range []uint8{0, 1, 127, 128, 200, 254, 255, uint8(a)} {
			src = append(src, v, 255-v, v/2, uint8(a))
		}
	}
	dst := make([]uint16, len(src))
	premultiply(dst, src)
	for i := 0; i < len(src); i += 4 {
		r, g, b, a := color.NRGBA{src[i], src[i+1], src[i+2], src[i+3]}.RGBA()
		require.Equal(t, [4]uint16{uint16(r), uint16(g), uint16(b), uint16(a)}, [4]uint16(dst[i:i+4]), "pixel %v", src[i:i+4])
	}
}
