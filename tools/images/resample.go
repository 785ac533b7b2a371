package images

import (
	"context"
	"fmt"
	"image"
	"image/color"
)

// areaScale returns src scaled to w x h by area averaging: each output
// pixel is the average of the source area it covers, weighted by exact
// overlap, in premultiplied 16-bit RGBA. It is the classic filter for
// reducing images (no aliasing, no ringing), and it streams: besides the
// output it holds one source row and two rows of w sums, where a
// separable kernel scaler holds an intermediate image of w x src-height
// pixels (golang.org/x/image/draw needs 32 bytes per such pixel: 512 MiB
// for a 64 Mpx source).
//
// It stops early, returning ctx's error, when ctx ends.
func areaScale(ctx context.Context, src image.Image, w, h int) (*image.RGBA, error) {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	s := newAreaScaler(sw, sh, w, h)
	if s.empty() {
		return s.dst, nil
	}
	read := rowReader(src)
	row := make([]uint16, 4*sw)
	for sy := range sh {
		if sy%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		read(b.Min.Y+sy, row)
		s.push(row)
	}
	return s.dst, nil
}

// areaScaler is area averaging fed one source row at a time, top to
// bottom, so the source never needs to exist as a whole image.
//
// Sums are exact integers: a source pixel is w units wide and an output
// pixel sw units, so every weight is a whole number of units (and the
// same holds vertically).
type areaScaler struct {
	sw, sh, w, h int
	xs           []span
	hrow, acc    []uint64
	total        uint64
	sy, oy       int // the next source row; the output row being summed
	dst          *image.RGBA
}

func newAreaScaler(sw, sh, w, h int) *areaScaler {
	s := &areaScaler{sw: sw, sh: sh, w: w, h: h, dst: image.NewRGBA(image.Rect(0, 0, max(w, 0), max(h, 0)))}
	if s.empty() {
		return s
	}
	s.xs = spans(sw, w)
	s.hrow = make([]uint64, 4*w)
	s.acc = make([]uint64, 4*w)
	s.total = uint64(sw) * uint64(sh)
	return s
}

func (s *areaScaler) empty() bool { return s.w <= 0 || s.h <= 0 || s.sw <= 0 || s.sh <= 0 }

// push adds the next source row: premultiplied RGBA, 16 bits a channel,
// 4*sw values. Output rows are written to dst as they complete.
func (s *areaScaler) push(row []uint16) {
	if s.empty() || s.sy >= s.sh {
		return
	}
	filterRow(row, s.xs, s.hrow)
	lo, hi := s.sy*s.h, (s.sy+1)*s.h // this source row, in units of 1/h of a row
	for s.oy < s.h {
		olo, ohi := s.oy*s.sh, (s.oy+1)*s.sh
		top, bottom := max(olo, lo), min(ohi, hi)
		if bottom <= top {
			break
		}
		wy := uint64(bottom - top)
		for i, v := range s.hrow {
			s.acc[i] += wy * v
		}
		if ohi > hi {
			break // the output row goes on into the next source row
		}
		out := s.dst.Pix[s.oy*s.dst.Stride : s.oy*s.dst.Stride+4*s.w]
		for i, v := range s.acc {
			v16 := (v + s.total/2) / s.total
			out[i] = uint8((v16*0xff + 0x7fff) / 0xffff)
		}
		clear(s.acc)
		s.oy++
	}
	s.sy++
}

// scatterScaler is area averaging fed pixels in any order, such as the
// passes of an interlaced PNG: it keeps a sum for every output pixel
// (16 bytes each) instead of two rows of them, in floating point, so a
// channel may differ by one from what areaScaler computes. It only
// reduces: w <= sw and h <= sh.
type scatterScaler struct {
	w, h       int
	cols, rows []axisShare
	acc        []float32 // 4 per output pixel
	tmp        []float32 // one output row
}

// axisShare says how one source column (or row) splits between the at
// most two output columns it overlaps: first, and the fraction of each
// output column it makes up.
type axisShare struct {
	first  int32
	w0, w1 float32
}

func newScatterScaler(sw, sh, w, h int) (*scatterScaler, error) {
	if w <= 0 || h <= 0 || w > sw || h > sh {
		return nil, fmt.Errorf("images: cannot scale %dx%d to %dx%d by scattering", sw, sh, w, h)
	}
	return &scatterScaler{w: w, h: h, cols: axisShares(sw, w), rows: axisShares(sh, h),
		acc: make([]float32, 4*w*h), tmp: make([]float32, 4*w)}, nil
}

// axisShares maps m source positions onto n <= m output positions.
func axisShares(m, n int) []axisShare {
	out := make([]axisShare, m)
	for i := range m {
		lo, hi := i*n, (i+1)*n // in units of 1/m of an output position
		first := lo / m
		w0 := min(hi, (first+1)*m) - lo
		out[i] = axisShare{first: int32(first), w0: float32(float64(w0) / float64(m)), w1: float32(float64(n-w0) / float64(m))}
	}
	return out
}

// push adds the pixels of source row y at x = x0, x0+dx, ...: premultiplied
// RGBA, 16 bits a channel.
func (s *scatterScaler) push(y, x0, dx int, px []uint16) {
	if len(px) == 0 {
		return
	}
	lo, hi := s.w, -1
	for i := 0; 4*i < len(px); i++ {
		c := s.cols[x0+i*dx]
		f := int(c.first)
		p := px[4*i : 4*i+4]
		t := s.tmp[4*f : 4*f+4]
		for k := range 4 {
			t[k] += c.w0 * float32(p[k])
		}
		if c.w1 != 0 { // then f+1 is an output column too
			t = s.tmp[4*f+4 : 4*f+8]
			for k := range 4 {
				t[k] += c.w1 * float32(p[k])
			}
		}
		lo, hi = min(lo, f), max(hi, min(f+1, s.w-1))
	}
	r := s.rows[y]
	span := s.tmp[4*lo : 4*hi+4]
	row := s.acc[4*(int(r.first)*s.w+lo):]
	for i, v := range span {
		row[i] += r.w0 * v
	}
	if r.w1 != 0 {
		row = s.acc[4*((int(r.first)+1)*s.w+lo):]
		for i, v := range span {
			row[i] += r.w1 * v
		}
	}
	clear(span)
}

// image returns the scaled image. The sums are dropped: call it once.
func (s *scatterScaler) image() *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, s.w, s.h))
	for i, v := range s.acc {
		v16 := uint32(min(max(v+0.5, 0), 0xffff))
		dst.Pix[i] = uint8((v16*0xff + 0x7fff) / 0xffff)
	}
	s.acc = nil
	return dst
}

// premultiply converts 8-bit straight RGBA to premultiplied 16-bit RGBA,
// as color.NRGBA's RGBA method does.
func premultiply(dst []uint16, src []uint8) {
	for i := 0; i+3 < len(src); i += 4 {
		if src[i+3] == 0xff { // opaque: nothing to multiply
			dst[i], dst[i+1], dst[i+2], dst[i+3] = uint16(src[i])*0x101, uint16(src[i+1])*0x101, uint16(src[i+2])*0x101, 0xffff
			continue
		}
		a := uint32(src[i+3]) * 0x101
		dst[i] = uint16(uint32(src[i]) * 0x101 * a / 0xffff)
		dst[i+1] = uint16(uint32(src[i+1]) * 0x101 * a / 0xffff)
		dst[i+2] = uint16(uint32(src[i+2]) * 0x101 * a / 0xffff)
		dst[i+3] = uint16(a)
	}
}

// span is the run of source columns one output column covers.
type span struct {
	first   int
	weights []uint64
}

// spans computes, for n output columns over m source columns, which
// source columns each output column covers and by how many units.
func spans(m, n int) []span {
	out := make([]span, n)
	for x := range n {
		lo, hi := x*m, (x+1)*m // in units of 1/n of a source column
		s := span{first: lo / n}
		for i := s.first; i*n < hi; i++ {
			s.weights = append(s.weights, uint64(min((i+1)*n, hi)-max(i*n, lo)))
		}
		out[x] = s
	}
	return out
}

// filterRow averages one source row (premultiplied RGBA, 16 bits per
// channel) into output columns, unnormalized.
func filterRow(row []uint16, xs []span, out []uint64) {
	for x, s := range xs {
		var r, g, b, a uint64
		p := row[4*s.first:]
		for i, wt := range s.weights {
			r += wt * uint64(p[4*i])
			g += wt * uint64(p[4*i+1])
			b += wt * uint64(p[4*i+2])
			a += wt * uint64(p[4*i+3])
		}
		out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = r, g, b, a
	}
}

// paletteRGBA64 returns a palette as premultiplied 16-bit RGBA, 256
// entries: indices past the palette read as transparent black.
func paletteRGBA64(p color.Palette) [][4]uint16 {
	pal := make([][4]uint16, 256)
	for i, pc := range p[:min(len(p), 256)] {
		c := color.RGBA64Model.Convert(pc).(color.RGBA64)
		pal[i] = [4]uint16{c.R, c.G, c.B, c.A}
	}
	return pal
}

// gifCanvas is a GIF's first frame on a transparent canvas the size of
// the logical screen, without drawing the canvas.
type gifCanvas struct {
	frame *image.Paletted
	rect  image.Rectangle
}

func (c *gifCanvas) ColorModel() color.Model { return color.NRGBAModel }

func (c *gifCanvas) Bounds() image.Rectangle { return c.rect }

func (c *gifCanvas) At(x, y int) color.Color {
	if !(image.Point{x, y}.In(c.frame.Rect)) {
		return color.NRGBA{}
	}
	return c.frame.At(x, y)
}

// rowReader returns a function that fills buf with row y of img as
// premultiplied 16-bit RGBA, with fast paths for the types the decoders
// return most.
func rowReader(img image.Image) func(y int, buf []uint16) {
	b := img.Bounds()
	switch m := img.(type) {
	case *image.RGBA:
		return func(y int, buf []uint16) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i := range buf {
				buf[i] = uint16(p[i]) * 0x101
			}
		}
	case *image.NRGBA:
		return func(y int, buf []uint16) {
			premultiply(buf, m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Min.X, y)+len(buf)])
		}
	case *image.Gray:
		return func(y int, buf []uint16) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i := 0; i < len(buf); i += 4 {
				v := uint16(p[i/4]) * 0x101
				buf[i], buf[i+1], buf[i+2], buf[i+3] = v, v, v, 0xffff
			}
		}
	case *gifCanvas:
		pal := paletteRGBA64(m.frame.Palette)
		f := m.frame
		return func(y int, buf []uint16) {
			clear(buf)
			if y < f.Rect.Min.Y || y >= f.Rect.Max.Y {
				return
			}
			p := f.Pix[f.PixOffset(f.Rect.Min.X, y):]
			for i, x := 0, 4*(f.Rect.Min.X-b.Min.X); x < 4*(f.Rect.Max.X-b.Min.X); i, x = i+1, x+4 {
				c := pal[p[i]]
				buf[x], buf[x+1], buf[x+2], buf[x+3] = c[0], c[1], c[2], c[3]
			}
		}
	case *image.Paletted:
		pal := paletteRGBA64(m.Palette)
		return func(y int, buf []uint16) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i := 0; i < len(buf); i += 4 {
				c := pal[p[i/4]]
				buf[i], buf[i+1], buf[i+2], buf[i+3] = c[0], c[1], c[2], c[3]
			}
		}
	case *image.YCbCr:
		return func(y int, buf []uint16) {
			for i := 0; i < len(buf); i += 4 {
				r, g, bl, _ := m.YCbCrAt(b.Min.X+i/4, y).RGBA()
				buf[i], buf[i+1], buf[i+2], buf[i+3] = uint16(r), uint16(g), uint16(bl), 0xffff
			}
		}
	case image.RGBA64Image:
		return func(y int, buf []uint16) {
			for i := 0; i < len(buf); i += 4 {
				c := m.RGBA64At(b.Min.X+i/4, y)
				buf[i], buf[i+1], buf[i+2], buf[i+3] = c.R, c.G, c.B, c.A
			}
		}
	}
	return func(y int, buf []uint16) {
		for i := 0; i < len(buf); i += 4 {
			r, g, bl, a := img.At(b.Min.X+i/4, y).RGBA()
			buf[i], buf[i+1], buf[i+2], buf[i+3] = uint16(r), uint16(g), uint16(bl), uint16(a)
		}
	}
}
