package images

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longTests reports whether the long randomized trials run in full.
func longTests() bool { return os.Getenv("HARNESS_LONG_TESTS") == "1" }

// pngTooBig reports whether image/png would need too much memory for a
// test to let it decode data.
func pngTooBig(data []byte) bool {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	return err == nil && (cfg.Width > 2048 || cfg.Height > 2048 || cfg.Width*cfg.Height > 1<<18)
}

// nrgba8 converts what image/png decoded to 8-bit straight RGBA the way
// pngReader does: the high byte of a 16-bit sample.
func nrgba8(t testing.TB, img image.Image) []uint8 {
	b := img.Bounds()
	out := make([]uint8, 0, 4*b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var c color.NRGBA
			switch m := img.(type) {
			case *image.Gray:
				v := m.GrayAt(x, y).Y
				c = color.NRGBA{v, v, v, 0xff}
			case *image.Gray16:
				v := uint8(m.Gray16At(x, y).Y >> 8)
				c = color.NRGBA{v, v, v, 0xff}
			case *image.RGBA:
				p := m.RGBAAt(x, y)
				c = color.NRGBA{p.R, p.G, p.B, p.A}
			case *image.RGBA64:
				p := m.RGBA64At(x, y)
				c = color.NRGBA{uint8(p.R >> 8), uint8(p.G >> 8), uint8(p.B >> 8), uint8(p.A >> 8)}
			case *image.NRGBA:
				c = m.NRGBAAt(x, y)
			case *image.NRGBA64:
				p := m.NRGBA64At(x, y)
				c = color.NRGBA{uint8(p.R >> 8), uint8(p.G >> 8), uint8(p.B >> 8), uint8(p.A >> 8)}
			case *image.Paletted:
				i := int(m.ColorIndexAt(x, y))
				if i >= len(m.Palette) {
					t.Fatalf("image/png left index %d outside its palette of %d", i, len(m.Palette))
				}
				switch pc := m.Palette[i].(type) {
				case color.RGBA:
					c = color.NRGBA{pc.R, pc.G, pc.B, pc.A}
				case color.NRGBA:
					c = pc
				default:
					t.Fatalf("palette colour %T", pc)
				}
			default:
				t.Fatalf("image/png returned a %T", img)
			}
			out = append(out, c.R, c.G, c.B, c.A)
		}
	}
	return out
}

// pngDiff decodes data with image/png and with pngReader (validating only,
// and reading pixels) and describes how they differ, or returns "".
func pngDiff(t testing.TB, data []byte) string {
	want, wantErr := png.Decode(bytes.NewReader(data))
	_, checkErr := readPNG(context.Background(), data, nil)
	var got []uint8
	var w, h, emitted int
	if hd, ok := readPNGHeader(data); ok && int64(hd.width)*int64(hd.height) <= 1<<20 {
		w, h = hd.width, hd.height
		got = make([]uint8, 4*w*h)
	}
	bad := ""
	info, gotErr := readPNG(context.Background(), data, func(y, x0, dx int, px []uint8) {
		for i := 0; 4*i < len(px); i++ {
			x := x0 + i*dx
			if x < 0 || x >= w || y < 0 || y >= h {
				bad = fmt.Sprintf("pixel (%d,%d) outside %dx%d", x, y, w, h)
				return
			}
			copy(got[4*(y*w+x):], px[4*i:4*i+4])
			emitted++
		}
	})
	switch {
	case (wantErr == nil) != (gotErr == nil):
		return fmt.Sprintf("image/png: %v; pngReader: %v", wantErr, gotErr)
	case (checkErr == nil) != (gotErr == nil):
		return fmt.Sprintf("validating: %v; reading pixels: %v", checkErr, gotErr)
	case wantErr != nil:
		return ""
	case bad != "":
		return bad
	}
	b := want.Bounds()
	if b.Dx() != w || b.Dy() != h || info.Width != w || info.Height != h {
		return fmt.Sprintf("size %v, pngReader %dx%d", b, info.Width, info.Height)
	}
	if emitted != w*h {
		return fmt.Sprintf("%d pixels emitted of %d", emitted, w*h)
	}
	if exp := nrgba8(t, want); !bytes.Equal(exp, got) {
		for i := range exp {
			if exp[i] != got[i] {
				return fmt.Sprintf("%T: pixel %d channel %d is %d, image/png says %d", want, i/4, i%4, got[i], exp[i])
			}
		}
	}
	if isOpaque(want) != info.Opaque {
		return fmt.Sprintf("opaque %v, image/png's %T says %v", info.Opaque, want, isOpaque(want))
	}
	if _, p := want.(*image.Paletted); p != info.Paletted {
		return fmt.Sprintf("paletted %v, image/png returned %T", info.Paletted, want)
	}
	return ""
}

// pngMutations returns variants of a valid file's chunks: damaged,
// reordered, padded, truncated. Some are still valid.
func pngMutations(rng *rand.Rand, spec pngSpec, chunks []pngChunk) [][]byte {
	clone := func() []pngChunk {
		out := make([]pngChunk, len(chunks))
		for i, c := range chunks {
			out[i] = pngChunk{typ: c.typ, data: bytes.Clone(c.data), badCRC: c.badCRC}
		}
		return out
	}
	idats := func(cs []pngChunk) []int {
		var out []int
		for i, c := range cs {
			if c.typ == "IDAT" {
				out = append(out, i)
			}
		}
		return out
	}
	insert := func(cs []pngChunk, i int, c pngChunk) []pngChunk {
		return append(cs[:i:i], append([]pngChunk{c}, cs[i:]...)...)
	}
	whole := assemblePNG(chunks)
	var out [][]byte
	add := func(cs []pngChunk) { out = append(out, assemblePNG(cs)) }

	// Raw damage: a cut, a flipped byte, trailing bytes after IEND.
	out = append(out, whole[:rng.IntN(len(whole))])
	flipped := bytes.Clone(whole)
	flipped[rng.IntN(len(flipped))] ^= byte(1 + rng.IntN(255))
	out = append(out, flipped, append(bytes.Clone(whole), "trailing garbage"...))

	// A byte of some chunk changed, its CRC still right.
	cs := clone()
	c := &cs[rng.IntN(len(cs))]
	if len(c.data) > 0 {
		c.data[rng.IntN(len(c.data))] ^= byte(1 + rng.IntN(255))
		add(cs)
	}
	// A bad CRC on one chunk.
	cs = clone()
	cs[rng.IntN(len(cs))].badCRC = true
	add(cs)
	// Bytes after the zlib stream, inside the last IDAT.
	cs = clone()
	last := idats(cs)[len(idats(cs))-1]
	cs[last].data = append(cs[last].data, make([]byte, 1+rng.IntN(3))...)
	add(cs)
	// Many of them: more than the inflater buffers past the stream's end.
	cs = clone()
	cs[last].data = append(cs[last].data, make([]byte, 4000+rng.IntN(5000))...)
	add(cs)
	// The same bytes in an IDAT of their own.
	cs = insert(clone(), last+1, pngChunk{typ: "IDAT", data: []byte{0, 1, 2}})
	add(cs)
	// Empty IDATs in the middle and at the end.
	cs = insert(clone(), idats(chunks)[0]+1, pngChunk{typ: "IDAT"})
	add(cs)
	// An unknown chunk anywhere, a huge chunk length.
	cs = insert(clone(), rng.IntN(len(chunks)+1), pngChunk{typ: "zzZz", data: []byte("x")})
	add(cs)
	huge := bytes.Clone(whole)
	copy(huge[8:], []byte{0x80, 0, 0, 1, 'z', 'z', 'z', 'z'})
	out = append(out, huge)
	// Chunks swapped, repeated, dropped.
	cs = clone()
	i, j := rng.IntN(len(cs)), rng.IntN(len(cs))
	cs[i], cs[j] = cs[j], cs[i]
	add(cs)
	cs = clone()
	i = rng.IntN(len(cs))
	add(insert(cs, i, cs[i]))
	cs = clone()
	i = rng.IntN(len(cs))
	add(append(cs[:i:i], cs[i+1:]...))
	// A PLTE or tRNS where it does not belong, IEND with data.
	cs = insert(clone(), 1+rng.IntN(len(chunks)-1), pngChunk{typ: []string{"PLTE", "tRNS"}[rng.IntN(2)], data: make([]byte, 3*rng.IntN(4))})
	add(cs)
	cs = clone()
	cs[len(cs)-1].data = []byte{0}
	add(cs)
	// A changed header field.
	cs = clone()
	cs[0].data[8+rng.IntN(5)] = byte(rng.IntN(20))
	add(cs)
	// The same pixels with bad filter bytes, or a stream too long or too short.
	bad := spec
	bad.filters = []byte{0, 1, 2, 3, 4, 5, 255}
	out = append(out, assemblePNG(bad.chunks(rng)))
	raw := spec.rawRows(rng)
	for _, r := range [][]byte{append(bytes.Clone(raw), 0), raw[:len(raw)-1]} {
		cs = clone()
		ids := idats(cs)
		cs = append(cs[:ids[0]], cs[ids[len(ids)-1]+1:]...)
		add(insert(cs, ids[0], pngChunk{typ: "IDAT", data: zlibBytes(r, 6)}))
	}
	return out
}

func TestPNGReaderMatchesImagePNG(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 4))
	trials := 150
	if longTests() {
		trials = 3000
	}
	accepted, refused := 0, 0
	for n := range trials {
		spec := randomSpec(rng)
		chunks := spec.chunks(rng)
		valid := assemblePNG(chunks)
		if d := pngDiff(t, valid); d != "" {
			t.Fatalf("trial %d, %+v: %s", n, spec, d)
		}
		_, err := png.Decode(bytes.NewReader(valid))
		require.NoError(t, err, "the generated file is valid: %+v", spec)
		for k, m := range pngMutations(rng, spec, chunks) {
			if pngTooBig(m) {
				continue
			}
			if d := pngDiff(t, m); d != "" {
				t.Fatalf("trial %d, %+v, mutation %d: %s", n, spec, k, d)
			}
			if _, err := png.Decode(bytes.NewReader(m)); err == nil {
				accepted++
			} else {
				refused++
			}
		}
	}
	t.Logf("mutations: %d accepted, %d refused, all alike", accepted, refused)
	assert.Positive(t, accepted, "some mutations stay valid")
	assert.Greater(t, refused, accepted, "most mutations break the file")
}

func TestPNGReaderStandardFiles(t *testing.T) {
	// Files written by image/png's own encoder, of every type it writes.
	rng := rand.New(rand.NewPCG(5, 6))
	imgs := randomImages(rng, 37, 23)
	gray16 := image.NewGray16(image.Rect(0, 0, 9, 5))
	for i := range gray16.Pix {
		gray16.Pix[i] = uint8(rng.IntN(256))
	}
	imgs["Gray16"] = gray16
	imgs["two colours"] = paletted(30, 3, 1)
	for name, img := range imgs {
		t.Run(name, func(t *testing.T) {
			data := encPNG(t, img)
			assert.Empty(t, pngDiff(t, data))
		})
	}
}

func TestPNGReaderEdgeCases(t *testing.T) {
	idat := func(raw []byte) pngChunk { return pngChunk{typ: "IDAT", data: zlibBytes(raw, 6)} }
	hdr := func(w, h int, depth, colour byte, interlaced bool) pngChunk {
		return pngChunk{typ: "IHDR", data: ihdrData(w, h, depth, colour, interlaced)}
	}
	end := pngChunk{typ: "IEND"}
	grey := []byte{0, 10, 20, 30} // 3x1 8-bit grey, filter none
	cases := []struct {
		name   string
		chunks []pngChunk
		ok     bool
	}{
		{"plain", []pngChunk{hdr(3, 1, 8, 0, false), idat(grey), end}, true},
		{"unknown chunk before IHDR", []pngChunk{{typ: "abCD", data: []byte{1}}, hdr(3, 1, 8, 0, false), idat(grey), end}, true},
		{"no IEND", []pngChunk{hdr(3, 1, 8, 0, false), idat(grey)}, false},
		{"no IDAT", []pngChunk{hdr(3, 1, 8, 0, false), end}, false},
		{"palette without PLTE", []pngChunk{hdr(3, 1, 8, 3, false), idat(grey), end}, false},
		{"index past a short palette", []pngChunk{hdr(3, 1, 8, 3, false), {typ: "PLTE", data: []byte{1, 2, 3}}, idat(grey), end}, true},
		{"tRNS longer than PLTE", []pngChunk{hdr(3, 1, 8, 3, false), {typ: "PLTE", data: []byte{1, 2, 3}},
			{typ: "tRNS", data: make([]byte, 30)}, idat(grey), end}, true},
		{"grey key matches", []pngChunk{hdr(3, 1, 8, 0, false), {typ: "tRNS", data: []byte{0xab, 10}}, idat(grey), end}, true},
		{"1-bit grey key wraps", []pngChunk{hdr(9, 1, 1, 0, false), {typ: "tRNS", data: []byte{0, 3}}, idat([]byte{0, 0xaa, 0x80}), end}, true},
		{"tRNS on RGBA", []pngChunk{hdr(1, 1, 8, 6, false), {typ: "tRNS", data: make([]byte, 6)}, idat(make([]byte, 5)), end}, false},
		{"suggested palette on RGB", []pngChunk{hdr(1, 1, 8, 2, false), {typ: "PLTE", data: make([]byte, 6)}, idat(make([]byte, 4)), end}, true},
		{"PLTE on grey", []pngChunk{hdr(3, 1, 8, 0, false), {typ: "PLTE", data: make([]byte, 3)}, idat(grey), end}, false},
		{"interlaced 1x1", []pngChunk{hdr(1, 1, 16, 6, true), idat(make([]byte, 9)), end}, true},
		{"interlaced 3x3", []pngChunk{hdr(3, 3, 8, 0, true), idat([]byte{0, 1, 0, 2, 0, 3, 4, 0, 5, 0, 6, 0, 7, 8, 9}), end}, true},
		{"bad filter", []pngChunk{hdr(3, 1, 8, 0, false), idat([]byte{5, 1, 2, 3}), end}, false},
		{"zero width", []pngChunk{hdr(0, 1, 8, 0, false), idat(grey), end}, false},
		{"16-bit palette", []pngChunk{hdr(1, 1, 16, 3, false), idat(grey), end}, false},
		{"IEND with data", []pngChunk{hdr(3, 1, 8, 0, false), idat(grey), {typ: "IEND", data: []byte{0}}}, false},
		{"stray IDAT after the image", []pngChunk{hdr(3, 1, 8, 0, false), idat(grey), {typ: "IDAT", data: []byte("junk")}, end}, true},
		{"chunk between IDATs", []pngChunk{hdr(3, 1, 8, 0, false), {typ: "IDAT", data: zlibBytes(grey, 6)[:3]}, {typ: "teXt"},
			{typ: "IDAT", data: zlibBytes(grey, 6)[3:]}, end}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := assemblePNG(c.chunks)
			assert.Empty(t, pngDiff(t, data))
			_, err := readPNG(context.Background(), data, nil)
			assert.Equal(t, c.ok, err == nil, "%v", err)
		})
	}
}

func TestPNGReaderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := readPNG(ctx, encPNG(t, photo(20, 20)), nil)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = Normalize(ctx, "x.png", encPNG(t, photo(20, 20)), Limits{})
	assert.ErrorIs(t, err, context.Canceled)
}

// FuzzPNG feeds arbitrary bytes to pngReader and image/png: they must
// accept and refuse alike and, when they accept, read the same pixels.
func FuzzPNG(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 12 {
		spec := randomSpec(rng)
		spec.w, spec.h = min(spec.w, 6), min(spec.h, 6)
		f.Add(assemblePNG(spec.chunks(rng)))
	}
	f.Add(encPNG(f, screenshot(8, 8)))
	f.Add(encPNG(f, translucent(9, 2)))
	f.Add(bombPNG(300, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		if pngTooBig(data) {
			return // too big for image/png to decode here (Normalize refuses such sizes before reading)
		}
		if d := pngDiff(t, data); d != "" {
			t.Fatal(d)
		}
	})
}

// oldNormalizePNG downscales a PNG the way Normalize did before the
// streaming reader: image/png's whole image, area averaging, the same
// choice of format.
func oldNormalizePNG(t testing.TB, data []byte, longEdge int) ([]byte, string) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	nw, nh := fitLongEdge(img.Bounds().Dx(), img.Bounds().Dy(), longEdge)
	out, err := areaScale(context.Background(), img, nw, nh)
	require.NoError(t, err)
	enc, mt, err := encode(out, wantPNG(img, typePNG, data), defaultMaxBytes)
	require.NoError(t, err)
	return enc, mt
}

func TestNormalizePNGMatchesOldPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var files [][]byte
	for range 60 {
		s := randomSpec(rng)
		s.w, s.h = 30+rng.IntN(150), 30+rng.IntN(150)
		files = append(files, assemblePNG(s.chunks(rng)))
	}
	for _, img := range []image.Image{screenshot(300, 200), translucent(250, 90), photo(120, 300), paletted(140, 70, 2)} {
		files = append(files, encPNG(t, img))
	}
	lim := Limits{LongEdge: 29}
	for i, data := range files {
		hd, _ := readPNGHeader(data)
		n, err := Normalize(context.Background(), "x.png", data, lim)
		require.NoError(t, err, "file %d: %+v", i, hd)
		require.True(t, n.Scale() > 1)
		want, mt := oldNormalizePNG(t, data, lim.LongEdge)
		require.Equal(t, mt, n.MediaType, "file %d: %+v: the same choice of format", i, hd)
		if hd.depth < 16 && !hd.interlaced {
			// The same 8-bit samples and the same integer sums: the same bytes.
			require.Equal(t, want, n.Data, "file %d: %+v", i, hd)
			continue
		}
		// 16-bit samples are scaled from their high byte, interlaced ones
		// with floating-point sums: a channel may be off by one.
		got, err := decode(mt, n.Data)
		require.NoError(t, err)
		exp, err := decode(mt, want)
		require.NoError(t, err)
		tol := 1
		if mt == typeJPEG {
			tol = -1
		}
		assertClose(t, exp, got, tol, fmt.Sprintf("file %d: %+v", i, hd))
	}
}

// assertClose checks that two images of the same size differ by at most
// tol in any 8-bit channel of a pixel that is not nearly transparent;
// for JPEGs (tol < 0), whose quantization turns a small change of input
// into a larger local one, that they differ by less than three on average.
func assertClose(t testing.TB, want, got image.Image, tol int, msg string) {
	t.Helper()
	require.Equal(t, want.Bounds(), got.Bounds(), msg)
	b := want.Bounds()
	sum, n := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			w := color.NRGBAModel.Convert(want.At(x, y)).(color.NRGBA)
			g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
			for i, d := range [][2]uint8{{w.R, g.R}, {w.G, g.G}, {w.B, g.B}, {w.A, g.A}} {
				diff := absInt(int(d[0]) - int(d[1]))
				sum, n = sum+diff, n+1
				allowed := tol
				if i < 3 && w.A > 0 {
					allowed += 2 * tol * 255 / int(w.A) // errors in colour and alpha, magnified by un-premultiplying
				}
				if tol >= 0 && diff > allowed && w.A > 8 {
					t.Fatalf("%s: pixel (%d,%d) is %v, want %v", msg, x, y, g, w)
				}
			}
		}
	}
	if tol < 0 {
		assert.Less(t, float64(sum)/float64(n), 3.0, "%s: mean difference", msg)
	}
}

func TestNormalizeInterlacedPNG(t *testing.T) {
	// The same image, interlaced or not, downscales alike.
	rng := rand.New(rand.NewPCG(31, 32))
	for _, colour := range []byte{0, 2, 3, 4, 6} {
		s := pngSpec{w: 210, h: 97, depth: 8, colour: colour, filters: []byte{0}}
		if colour == 3 {
			s.plte = 200
		}
		raw := s.rawRows(rng)
		plain := assemblePNG([]pngChunk{{typ: "IHDR", data: ihdrData(s.w, s.h, 8, colour, false)}, {typ: "PLTE", data: bytes.Repeat([]byte{9, 99, 199}, 200)},
			{typ: "IDAT", data: zlibBytes(raw, 6)}, {typ: "IEND"}})
		if colour != 3 {
			plain = assemblePNG([]pngChunk{{typ: "IHDR", data: ihdrData(s.w, s.h, 8, colour, false)}, {typ: "IDAT", data: zlibBytes(raw, 6)}, {typ: "IEND"}})
		}
		img, err := png.Decode(bytes.NewReader(plain))
		require.NoError(t, err)
		interlaced := interlace(t, img, s)
		a, err := Normalize(context.Background(), "a.png", plain, Limits{LongEdge: 50})
		require.NoError(t, err)
		b, err := Normalize(context.Background(), "b.png", interlaced, Limits{LongEdge: 50})
		require.NoError(t, err)
		require.Equal(t, a.MediaType, b.MediaType)
		assert.Equal(t, [2]int{50, 23}, [2]int{b.Width, b.Height})
		ia, err := decode(a.MediaType, a.Data)
		require.NoError(t, err)
		ib, err := decode(b.MediaType, b.Data)
		require.NoError(t, err)
		tol := 1
		if a.MediaType == typeJPEG {
			tol = -1
		}
		assertClose(t, ia, ib, tol, fmt.Sprintf("colour type %d", colour))
	}
}

// interlace re-encodes a decoded 8-bit image as an interlaced PNG of the
// spec's colour type, with no filtering.
func interlace(t testing.TB, img image.Image, s pngSpec) []byte {
	t.Helper()
	ch := specBitsPerPixel(8, s.colour) / 8
	var raw []byte
	for _, p := range adam7 {
		for y := p.y0; y < s.h; y += p.dy {
			if p.x0 >= s.w {
				continue
			}
			raw = append(raw, 0)
			for x := p.x0; x < s.w; x += p.dx {
				switch m := img.(type) {
				case *image.Gray:
					raw = append(raw, m.GrayAt(x, y).Y)
				case *image.Paletted:
					raw = append(raw, m.ColorIndexAt(x, y))
				case *image.RGBA:
					c := m.RGBAAt(x, y)
					raw = append(raw, c.R, c.G, c.B)
				case *image.NRGBA:
					c := m.NRGBAAt(x, y)
					px := []uint8{c.R, c.G, c.B, c.A}
					if ch == 2 {
						px = []uint8{c.R, c.A}
					}
					raw = append(raw, px...)
				default:
					t.Fatalf("%T", img)
				}
			}
		}
	}
	chunks := []pngChunk{{typ: "IHDR", data: ihdrData(s.w, s.h, 8, s.colour, true)}}
	if s.colour == 3 {
		chunks = append(chunks, pngChunk{typ: "PLTE", data: bytes.Repeat([]byte{9, 99, 199}, 200)})
	}
	return assemblePNG(append(chunks, pngChunk{typ: "IDAT", data: zlibBytes(raw, 6)}, pngChunk{typ: "IEND"}))
}
