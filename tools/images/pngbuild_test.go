package images

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A PNG writer for tests, which writes what image/png's encoder cannot:
// every bit depth and colour type, interlacing, any filter byte, chunks in
// any order, with good or bad CRCs.

type pngChunk struct {
	typ    string
	data   []byte
	badCRC bool
}

// assemblePNG writes the signature and the chunks.
func assemblePNG(chunks []pngChunk) []byte {
	var b bytes.Buffer
	b.WriteString(pngSignature)
	for _, c := range chunks {
		writeChunk(&b, c.typ, c.data, c.badCRC)
	}
	return b.Bytes()
}

func writeChunk(w io.Writer, typ string, data []byte, badCRC bool) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	w.Write(n[:])
	io.WriteString(w, typ)
	w.Write(data)
	crc := crc32.Update(crc32.ChecksumIEEE([]byte(typ)), crc32.IEEETable, data)
	if badCRC {
		crc ^= 1
	}
	binary.BigEndian.PutUint32(n[:], crc)
	w.Write(n[:])
}

// pngSpec describes a PNG to generate with random pixels.
type pngSpec struct {
	w, h          int
	depth, colour byte
	interlaced    bool
	plte          int    // palette entries (colour type 3; 0 for none)
	trns          []byte // the tRNS chunk's data, nil for none
	// filters are the filter bytes to draw from; nil means 0 to 4.
	filters []byte
}

func ihdrData(w, h int, depth, colour byte, interlaced bool) []byte {
	b := make([]byte, 13)
	binary.BigEndian.PutUint32(b[0:], uint32(w))
	binary.BigEndian.PutUint32(b[4:], uint32(h))
	b[8], b[9] = depth, colour
	if interlaced {
		b[12] = 1
	}
	return b
}

func specBitsPerPixel(depth, colour byte) int {
	channels := map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
	return channels * int(depth)
}

// rawRows returns the uncompressed image data: every pass's rows, each a
// filter byte and random samples.
func (s pngSpec) rawRows(rng *rand.Rand) []byte {
	var raw []byte
	passes := adam7[:]
	if !s.interlaced {
		passes = []struct{ dx, dy, x0, y0 int }{{1, 1, 0, 0}}
	}
	bpp := specBitsPerPixel(s.depth, s.colour)
	for _, p := range passes {
		pw, ph := (s.w-p.x0+p.dx-1)/p.dx, (s.h-p.y0+p.dy-1)/p.dy
		if pw == 0 || ph == 0 {
			continue
		}
		n := pngRowBytes(pw, bpp)
		for range ph {
			row := make([]byte, n)
			if s.filters == nil {
				row[0] = byte(rng.IntN(5))
			} else {
				row[0] = s.filters[rng.IntN(len(s.filters))]
			}
			for i := 1; i < n; i++ {
				row[i] = s.sample(rng)
			}
			raw = append(raw, row...)
		}
	}
	return raw
}

// sample draws a byte, favouring the values keys and palettes use so
// that transparency keys and opaque alphas actually occur.
func (s pngSpec) sample(rng *rand.Rand) byte {
	switch rng.IntN(4) {
	case 0:
		return 0
	case 1:
		return 0xff
	}
	return byte(rng.IntN(256))
}

func zlibBytes(raw []byte, level int) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, level)
	zw.Write(raw)
	zw.Close()
	return z.Bytes()
}

// chunks returns a valid file's chunks, its IDAT stream split at random.
func (s pngSpec) chunks(rng *rand.Rand) []pngChunk {
	out := []pngChunk{{typ: "IHDR", data: ihdrData(s.w, s.h, s.depth, s.colour, s.interlaced)}}
	if s.plte > 0 {
		p := make([]byte, 3*s.plte)
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		out = append(out, pngChunk{typ: "PLTE", data: p})
	}
	if s.trns != nil {
		out = append(out, pngChunk{typ: "tRNS", data: s.trns})
	}
	z := zlibBytes(s.rawRows(rng), rng.IntN(10))
	for len(z) > 0 {
		n := min(len(z), 1+rng.IntN(max(1, len(z))))
		out = append(out, pngChunk{typ: "IDAT", data: z[:n]})
		z = z[n:]
	}
	return append(out, pngChunk{typ: "IEND"})
}

// randomSpec draws a valid combination of depth and colour type, a small
// size, and optional palette and transparency.
func randomSpec(rng *rand.Rand) pngSpec {
	combos := [][2]byte{{1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 0}, {8, 2}, {16, 2}, {1, 3}, {2, 3}, {4, 3}, {8, 3}, {8, 4}, {16, 4}, {8, 6}, {16, 6}}
	c := combos[rng.IntN(len(combos))]
	s := pngSpec{w: 1 + rng.IntN(19), h: 1 + rng.IntN(19), depth: c[0], colour: c[1], interlaced: rng.IntN(2) == 0}
	if rng.IntN(8) == 0 { // now and then one whose IDAT data outgrows the inflater's buffer
		s.w, s.h = 40+rng.IntN(60), 40+rng.IntN(60)
	}
	switch s.colour {
	case 3:
		s.plte = 1 + rng.IntN(min(256, 1<<s.depth))
		if rng.IntN(2) == 0 {
			s.trns = make([]byte, rng.IntN(257))
			for i := range s.trns {
				s.trns[i] = s.sample(rng)
			}
		}
	case 0:
		if rng.IntN(2) == 0 {
			s.trns = []byte{byte(rng.IntN(2)), s.sample(rng)}
			if rng.IntN(2) == 0 {
				s.trns[1] = byte(rng.IntN(1 << min(8, s.depth)))
			}
		}
	case 2:
		if rng.IntN(2) == 0 {
			s.trns = []byte{0, s.sample(rng), 0, s.sample(rng), 0, s.sample(rng)}
		}
	}
	if s.colour == 2 || s.colour == 6 {
		if rng.IntN(4) == 0 {
			s.plte = 1 + rng.IntN(256) // a suggested palette, ignored
		}
	}
	return s
}

// writeBombPNG writes a w x h PNG of the given depth and colour type to
// path, streaming: the first row of each pass holds a gradient and every
// other row repeats the one above (filter "up" with zero deltas), so the
// file is small, its pixels are not all alike, and a reader must still
// inflate and unfilter every row.
func writeBombPNG(t testing.TB, path string, w, h int, depth, colour byte, interlaced bool) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.WriteString(pngSignature)
	writeChunk(bw, "IHDR", ihdrData(w, h, depth, colour, interlaced), false)
	if colour == 3 {
		p := make([]byte, 3<<depth)
		for i := range p {
			p[i] = byte(i * 7)
		}
		writeChunk(bw, "PLTE", p, false)
		tr := make([]byte, 1<<depth)
		for i := range tr {
			tr[i] = byte(255 - i)
		}
		writeChunk(bw, "tRNS", tr, false)
	}
	idat := &idatWriter{w: bw, buf: make([]byte, 0, 1<<20)}
	zw, err := zlib.NewWriterLevel(idat, zlib.BestSpeed)
	require.NoError(t, err)
	passes := adam7[:]
	if !interlaced {
		passes = []struct{ dx, dy, x0, y0 int }{{1, 1, 0, 0}}
	}
	bpp := specBitsPerPixel(depth, colour)
	for _, p := range passes {
		pw, ph := (w-p.x0+p.dx-1)/p.dx, (h-p.y0+p.dy-1)/p.dy
		if pw == 0 || ph == 0 {
			continue
		}
		row := make([]byte, pngRowBytes(pw, bpp))
		for i := 1; i < len(row); i++ {
			row[i] = byte(i * 3)
		}
		zw.Write(row)
		clear(row)
		row[0] = 2 // up
		for range ph - 1 {
			zw.Write(row)
		}
	}
	require.NoError(t, zw.Close())
	idat.flush()
	writeChunk(bw, "IEND", nil, false)
	require.NoError(t, bw.Flush())
}

// idatWriter cuts a stream into IDAT chunks.
type idatWriter struct {
	w   io.Writer
	buf []byte
}

func (i *idatWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), cap(i.buf)-len(i.buf))
		i.buf = append(i.buf, p[:k]...)
		p = p[k:]
		if len(i.buf) == cap(i.buf) {
			i.flush()
		}
	}
	return n, nil
}

func (i *idatWriter) flush() {
	if len(i.buf) > 0 {
		writeChunk(i.w, "IDAT", i.buf, false)
		i.buf = i.buf[:0]
	}
}
