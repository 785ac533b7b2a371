package images

import (
	"context"
	"image"
	"image/color"
)

// areaScale returns src scaled to w x h by area averaging: each output
// pixel is the average of the source area it covers, weighted by exact
// overlap, in premultiplied 16-bit RGBA. It is the classic filter for
// reducing images (no aliasing, no ringing), and it streams: besides the
// output it holds a few rows of w pixels, where a separable kernel
// scaler holds an intermediate image of w x src-height pixels (golang.org/x/image/draw
// needs 32 bytes per such pixel: 512 MiB for a 64 Mpx source).
//
// Sums are exact integers: a source pixel is w units wide and an output
// pixel sw units, so every weight is a whole number of units.
//
// It stops early, returning ctx's error, when ctx ends.
func areaScale(ctx context.Context, src image.Image, w, h int) (*image.RGBA, error) {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if w <= 0 || h <= 0 || sw <= 0 || sh <= 0 {
		return dst, nil
	}
	xs := spans(sw, w)
	read := rowReader(src)
	row := make([]uint16, 4*sw)
	hrow := make([]uint64, 4*w)
	acc := make([]uint64, 4*w)
	total := uint64(sw) * uint64(sh)
	lastRow := -1
	for y := range h {
		if y%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(acc)
		lo, hi := y*sh, (y+1)*sh // in units of 1/h of a source row
		for sy := lo / h; sy*h < hi; sy++ {
			wy := uint64(min((sy+1)*h, hi) - max(sy*h, lo))
			if sy != lastRow {
				read(b.Min.Y+sy, row)
				filterRow(row, xs, hrow)
				lastRow = sy
			}
			for i, v := range hrow {
				acc[i] += wy * v
			}
		}
		out := dst.Pix[y*dst.Stride : y*dst.Stride+4*w]
		for i, v := range acc {
			v16 := (v + total/2) / total
			out[i] = uint8((v16*0xff + 0x7fff) / 0xffff)
		}
	}
	return dst, nil
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
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i := 0; i < len(buf); i += 4 {
				a := uint32(p[i+3]) * 0x101
				buf[i] = uint16(uint32(p[i]) * 0x101 * a / 0xffff)
				buf[i+1] = uint16(uint32(p[i+1]) * 0x101 * a / 0xffff)
				buf[i+2] = uint16(uint32(p[i+2]) * 0x101 * a / 0xffff)
				buf[i+3] = uint16(a)
			}
		}
	case *image.Gray:
		return func(y int, buf []uint16) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i := 0; i < len(buf); i += 4 {
				v := uint16(p[i/4]) * 0x101
				buf[i], buf[i+1], buf[i+2], buf[i+3] = v, v, v, 0xffff
			}
		}
	case *image.Paletted:
		pal := make([][4]uint16, 256)
		for i, pc := range m.Palette[:min(len(m.Palette), 256)] {
			c := color.RGBA64Model.Convert(pc).(color.RGBA64)
			pal[i] = [4]uint16{c.R, c.G, c.B, c.A}
		} // indices past the palette read as transparent black
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
