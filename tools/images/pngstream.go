package images

import (
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image/png"
	"io"
)

// The streaming PNG reader.
//
// image/png decodes a whole image into memory before anything can look at
// it: 8 bytes a pixel for 16-bit RGBA, and an interlaced file needs a
// second, per-pass copy on top. pngReader instead inflates the IDAT stream
// and handles one row at a time: to validate, it only checks each row's
// filter byte; to read pixels, it unfilters the row against the previous
// one and converts it to 8-bit straight (non-premultiplied) RGBA for the
// caller. It keeps two rows of the file's format and one converted row,
// whatever the image's size.
//
// It accepts and refuses exactly what image/png's Decode does, and reads
// the same pixels: the chunk order rules, the CRC of every chunk it
// passes, the zlib checksum, the rule that the compressed stream ends
// exactly at the end of an IDAT chunk (up to what the inflater has already
// buffered), extra IDAT chunks after the image ignored, nothing read after
// IEND, palette indices past the palette read as opaque black. Its errors
// are image/png's error types.

// Colour type and bit depth combinations, as image/png names them.
const (
	pngG1 = iota + 1
	pngG2
	pngG4
	pngG8
	pngGA8
	pngTC8
	pngP1
	pngP2
	pngP4
	pngP8
	pngTCA8
	pngG16
	pngGA16
	pngTC16
	pngTCA16
)

// Where the reader is in the file: which chunks it has seen.
const (
	pngAtStart = iota
	pngSawIHDR
	pngSawPLTE
	pngSawTRNS
	pngSawIDAT
	pngSawIEND
)

const pngSignature = "\x89PNG\r\n\x1a\n"

// adam7 places the seven passes of an interlaced image: pixel i of row j
// of a pass is at x = x0 + i*dx, y = y0 + j*dy.
var adam7 = [7]struct{ dx, dy, x0, y0 int }{
	{8, 8, 0, 0},
	{8, 8, 4, 0},
	{4, 8, 0, 4},
	{4, 4, 2, 0},
	{2, 4, 0, 2},
	{2, 2, 1, 0},
	{1, 2, 0, 1},
}

// pngRow receives one row of pixels as 8-bit straight RGBA, 4 bytes a
// pixel: the pixels of image row y at x = x0, x0+dx, x0+2*dx, ... (dx is
// 1 for a non-interlaced image). px is reused for the next row.
type pngRow func(y, x0, dx int, px []uint8)

// pngInfo is what a whole read learned about an image.
type pngInfo struct {
	Width, Height int
	Interlaced    bool
	// Paletted reports a palette image (colour type 3).
	Paletted bool
	// Opaque reports that every pixel's alpha is the maximum at the
	// file's bit depth, which is image/png's image's Opaque(). It is
	// only computed when pixels were asked for.
	Opaque bool
}

type pngReader struct {
	data []byte
	pos  int
	crc  uint32

	width, height int
	depth         int
	cb            int
	interlaced    bool
	stage         int

	// palette holds every index's colour as straight RGBA: PLTE's
	// entries, opaque black for the rest, with tRNS's alphas applied.
	palette [256][4]uint8
	// transparent is the tRNS colour of a grey or truecolour image.
	hasKey      bool
	transparent [6]byte

	idatLeft uint32 // bytes left in the current IDAT chunk
	emit     pngRow
	opaque   bool
	ctx      context.Context
	rows     int // rows read, for the cancellation check
}

// readPNG reads a whole PNG file. With emit nil it only validates the
// file; otherwise it hands emit every row, in file order (pass by pass
// for an interlaced image). It stops with ctx's error when ctx ends.
func readPNG(ctx context.Context, data []byte, emit pngRow) (*pngInfo, error) {
	d := &pngReader{data: data, emit: emit, opaque: true, ctx: ctx}
	if err := d.run(); err != nil {
		return nil, err
	}
	return &pngInfo{Width: d.width, Height: d.height, Interlaced: d.interlaced, Paletted: d.paletted(), Opaque: d.opaque}, nil
}

func (d *pngReader) run() error {
	sig, err := d.next(len(pngSignature))
	if err != nil {
		return unexpected(err)
	}
	if string(sig) != pngSignature {
		return png.FormatError("not a PNG file")
	}
	for d.stage != pngSawIEND {
		if err := d.chunk(); err != nil {
			return unexpected(err)
		}
	}
	return nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// next returns the next n bytes of the file, io.EOF when none are left
// and io.ErrUnexpectedEOF when fewer are (as io.ReadFull would).
func (d *pngReader) next(n int) ([]byte, error) {
	left := len(d.data) - d.pos
	switch {
	case left == 0 && n > 0:
		return nil, io.EOF
	case left < n:
		d.pos = len(d.data)
		return nil, io.ErrUnexpectedEOF
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

// body returns the next n bytes of a chunk's data, adding them to the
// CRC.
func (d *pngReader) body(n int) ([]byte, error) {
	b, err := d.next(n)
	if err != nil {
		return nil, err
	}
	d.crc = crc32.Update(d.crc, crc32.IEEETable, b)
	return b, nil
}

func (d *pngReader) checkCRC() error {
	b, err := d.next(4)
	if err != nil {
		return err
	}
	if binary.BigEndian.Uint32(b) != d.crc {
		return png.FormatError("invalid checksum")
	}
	return nil
}

func (d *pngReader) paletted() bool { return d.cb >= pngP1 && d.cb <= pngP8 }

func (d *pngReader) trueColour() bool { return d.cb == pngTC8 || d.cb == pngTC16 }

var errChunkOrder = png.FormatError("chunk out of order")

func (d *pngReader) chunk() error {
	hdr, err := d.next(8)
	if err != nil {
		return err
	}
	length := binary.BigEndian.Uint32(hdr[:4])
	typ := [4]byte(hdr[4:8])
	d.crc = crc32.Update(0, crc32.IEEETable, typ[:])
	switch string(typ[:]) {
	case "IHDR":
		if d.stage != pngAtStart {
			return errChunkOrder
		}
		d.stage = pngSawIHDR
		return d.ihdr(length)
	case "PLTE":
		if d.stage != pngSawIHDR {
			return errChunkOrder
		}
		d.stage = pngSawPLTE
		return d.plte(length)
	case "tRNS":
		switch {
		case d.paletted():
			if d.stage != pngSawPLTE {
				return errChunkOrder
			}
		case d.trueColour():
			if d.stage != pngSawIHDR && d.stage != pngSawPLTE {
				return errChunkOrder
			}
		default:
			if d.stage != pngSawIHDR {
				return errChunkOrder
			}
		}
		d.stage = pngSawTRNS
		return d.trns(length)
	case "IDAT":
		if d.stage < pngSawIHDR || d.stage > pngSawIDAT || (d.stage == pngSawIHDR && d.paletted()) {
			return errChunkOrder
		}
		if d.stage == pngSawIDAT {
			break // stray IDAT chunks after the image: skipped like any other
		}
		d.stage = pngSawIDAT
		d.idatLeft = length
		if err := d.pixels(); err != nil {
			return err
		}
		return d.checkCRC()
	case "IEND":
		if d.stage != pngSawIDAT {
			return errChunkOrder
		}
		d.stage = pngSawIEND
		if length != 0 {
			return png.FormatError("bad IEND length")
		}
		return d.checkCRC()
	}
	if length > 0x7fffffff {
		return png.FormatError(fmt.Sprintf("Bad chunk length: %d", length))
	}
	if _, err := d.body(int(length)); err != nil {
		return err
	}
	return d.checkCRC()
}

func (d *pngReader) ihdr(length uint32) error {
	if length != 13 {
		return png.FormatError("bad IHDR length")
	}
	b, err := d.body(13)
	if err != nil {
		return err
	}
	switch {
	case b[10] != 0:
		return png.UnsupportedError("compression method")
	case b[11] != 0:
		return png.UnsupportedError("filter method")
	case b[12] > 1:
		return png.FormatError("invalid interlace method")
	}
	d.interlaced = b[12] == 1
	w, h := int32(binary.BigEndian.Uint32(b[0:4])), int32(binary.BigEndian.Uint32(b[4:8]))
	if w <= 0 || h <= 0 {
		return png.FormatError("non-positive dimension")
	}
	if n := int64(w) * int64(h); n > (1<<63-1)/8 {
		return png.UnsupportedError("dimension overflow")
	}
	d.depth = int(b[8])
	d.cb = pngCombination(b[8], b[9])
	if d.cb == 0 {
		return png.UnsupportedError(fmt.Sprintf("bit depth %d, color type %d", b[8], b[9]))
	}
	d.width, d.height = int(w), int(h)
	for i := range d.palette {
		d.palette[i] = [4]uint8{0, 0, 0, 0xff}
	}
	return d.checkCRC()
}

// pngCombination returns the cb constant for a bit depth and colour type,
// or 0 when the pair is not valid.
func pngCombination(depth, colourType byte) int {
	type pair struct{ depth, ct byte }
	switch (pair{depth, colourType}) {
	case pair{1, 0}:
		return pngG1
	case pair{2, 0}:
		return pngG2
	case pair{4, 0}:
		return pngG4
	case pair{8, 0}:
		return pngG8
	case pair{16, 0}:
		return pngG16
	case pair{8, 2}:
		return pngTC8
	case pair{16, 2}:
		return pngTC16
	case pair{1, 3}:
		return pngP1
	case pair{2, 3}:
		return pngP2
	case pair{4, 3}:
		return pngP4
	case pair{8, 3}:
		return pngP8
	case pair{8, 4}:
		return pngGA8
	case pair{16, 4}:
		return pngGA16
	case pair{8, 6}:
		return pngTCA8
	case pair{16, 6}:
		return pngTCA16
	}
	return 0
}

func (d *pngReader) plte(length uint32) error {
	n := int(length / 3)
	if length%3 != 0 || n <= 0 || n > 256 || n > 1<<uint(d.depth) {
		return png.FormatError("bad PLTE length")
	}
	b, err := d.body(3 * n)
	if err != nil {
		return err
	}
	switch {
	case d.paletted():
		for i := range n {
			d.palette[i] = [4]uint8{b[3*i], b[3*i+1], b[3*i+2], 0xff}
		}
	case d.cb == pngTC8 || d.cb == pngTCA8 || d.cb == pngTC16 || d.cb == pngTCA16:
		// A suggested palette for a truecolour image: ignored.
	default:
		return png.FormatError("PLTE, color type mismatch")
	}
	return d.checkCRC()
}

func (d *pngReader) trns(length uint32) error {
	want := -1
	switch d.cb {
	case pngG1, pngG2, pngG4, pngG8, pngG16:
		want = 2
	case pngTC8, pngTC16:
		want = 6
	case pngP1, pngP2, pngP4, pngP8:
		if length > 256 {
			return png.FormatError("bad tRNS length")
		}
	default:
		return png.FormatError("tRNS, color type mismatch")
	}
	if want >= 0 && int64(length) != int64(want) {
		return png.FormatError("bad tRNS length")
	}
	b, err := d.body(int(length))
	if err != nil {
		return err
	}
	if d.paletted() {
		for i, a := range b {
			d.palette[i][3] = a
		}
		return d.checkCRC()
	}
	copy(d.transparent[:], b)
	// A low-depth grey key is compared with the scaled-up sample, and
	// scaled the same way (in 8 bits, wrapping as image/png does).
	switch d.cb {
	case pngG1:
		d.transparent[1] *= 0xff
	case pngG2:
		d.transparent[1] *= 0x55
	case pngG4:
		d.transparent[1] *= 0x11
	}
	d.hasKey = true
	return d.checkCRC()
}

// Read presents the IDAT chunks as one stream for the inflater: at the
// end of a chunk it checks the chunk's CRC and moves into the next chunk,
// which must be another IDAT. It never reads past the chunk it is in
// before the inflater asks for more.
func (d *pngReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for d.idatLeft == 0 {
		if err := d.checkCRC(); err != nil {
			return 0, err
		}
		hdr, err := d.next(8)
		if err != nil {
			return 0, err
		}
		d.idatLeft = binary.BigEndian.Uint32(hdr[:4])
		if string(hdr[4:8]) != "IDAT" {
			return 0, png.FormatError("not enough pixel data")
		}
		d.crc = crc32.Update(0, crc32.IEEETable, hdr[4:8])
	}
	n := min(len(p), int(d.idatLeft), len(d.data)-d.pos)
	if n == 0 {
		return 0, io.EOF
	}
	copy(p, d.data[d.pos:d.pos+n])
	d.crc = crc32.Update(d.crc, crc32.IEEETable, p[:n])
	d.pos += n
	d.idatLeft -= uint32(n)
	return n, nil
}

// bitsPerPixel returns the bits one pixel takes in the file.
func (d *pngReader) bitsPerPixel() int {
	switch d.cb {
	case pngGA8, pngG16:
		return 16
	case pngTC8:
		return 24
	case pngTCA8, pngGA16:
		return 32
	case pngTC16:
		return 48
	case pngTCA16:
		return 64
	}
	return d.depth // grey and palette
}

// pngRowBytes is the size of one stored row (its filter byte included)
// of width pixels at bpp bits a pixel.
func pngRowBytes(width, bpp int) int { return 1 + (bpp*width+7)/8 }

// pixels reads the image data from the IDAT stream.
func (d *pngReader) pixels() error {
	zr, err := zlib.NewReader(d)
	if err != nil {
		return err
	}
	defer zr.Close()
	bpp := d.bitsPerPixel()
	rowBytes := pngRowBytes(d.width, bpp)
	cur := make([]uint8, rowBytes)
	var prev, px []uint8
	if d.emit != nil {
		prev = make([]uint8, rowBytes)
		px = make([]uint8, 4*d.width)
	}
	passes := adam7[:]
	if !d.interlaced {
		passes = []struct{ dx, dy, x0, y0 int }{{1, 1, 0, 0}}
	}
	for _, p := range passes {
		pw, ph := (d.width-p.x0+p.dx-1)/p.dx, (d.height-p.y0+p.dy-1)/p.dy
		if pw == 0 || ph == 0 {
			continue // an empty pass has no rows, not even filter bytes
		}
		n := pngRowBytes(pw, bpp)
		cr := cur[:n]
		var pr []uint8
		if d.emit != nil {
			pr = prev[:n]
			clear(pr)
		}
		for j := range ph {
			if d.rows%64 == 0 {
				if err := d.ctx.Err(); err != nil {
					return err
				}
			}
			d.rows++
			if _, err := io.ReadFull(zr, cr); err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return png.FormatError("not enough pixel data")
				}
				return err
			}
			if cr[0] > 4 {
				return png.FormatError("bad filter type")
			}
			if d.emit == nil {
				continue
			}
			unfilter(cr[0], cr[1:], pr[1:], (bpp+7)/8)
			d.convert(cr[1:], px[:4*pw])
			d.emit(p.y0+j*p.dy, p.x0, p.dx, px[:4*pw])
			cr, pr = pr, cr
		}
	}
	// The stream must end here: its checksum read, nothing after it, and
	// nothing left of the chunk it ended in.
	var one [1]byte
	n := 0
	for i := 0; n == 0 && err == nil; i++ {
		if i == 100 {
			return io.ErrNoProgress
		}
		n, err = zr.Read(one[:])
	}
	if err != nil && err != io.EOF {
		return png.FormatError(err.Error())
	}
	if n != 0 || d.idatLeft != 0 {
		return png.FormatError("too much pixel data")
	}
	return nil
}

// unfilter reverses a row's filter in place; prev is the previous row of
// the same pass, unfiltered (zeros for the first).
func unfilter(filter uint8, row, prev []uint8, bpp int) {
	switch filter {
	case 1: // sub
		for i := bpp; i < len(row); i++ {
			row[i] += row[i-bpp]
		}
	case 2: // up
		for i, b := range prev {
			row[i] += b
		}
	case 3: // average
		for i := range min(bpp, len(row)) {
			row[i] += prev[i] / 2
		}
		for i := bpp; i < len(row); i++ {
			row[i] += uint8((int(row[i-bpp]) + int(prev[i])) / 2)
		}
	case 4: // Paeth
		for i := range min(bpp, len(row)) {
			row[i] += prev[i] // left and upper-left are zero: the predictor is up
		}
		for i := bpp; i < len(row); i++ {
			row[i] += paeth(row[i-bpp], prev[i], prev[i-bpp])
		}
	}
}

// paeth returns whichever of left, up and upper-left is closest to
// left + up - upper-left, preferring them in that order.
func paeth(a, b, c uint8) uint8 {
	pa := absInt(int(b) - int(c))
	pb := absInt(int(a) - int(c))
	pc := absInt(int(a) + int(b) - 2*int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// convert turns one unfiltered row into 8-bit straight RGBA. 16-bit
// samples keep their high byte, as Go's colour conversions do; the
// opacity is judged at the file's own depth.
func (d *pngReader) convert(row, px []uint8) {
	w := len(px) / 4
	opaque := true
	switch d.cb {
	case pngG1, pngG2, pngG4:
		bits := d.depth
		scale := uint8(0xff / (1<<bits - 1))
		perByte := 8 / bits
		for x := range w {
			v := row[x/perByte] >> (8 - bits*(x%perByte+1)) & (1<<bits - 1)
			y := v * scale
			a := uint8(0xff)
			if d.hasKey && y == d.transparent[1] {
				a, opaque = 0, false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = y, y, y, a
		}
	case pngG8:
		for x, y := range row[:w] {
			a := uint8(0xff)
			if d.hasKey && y == d.transparent[1] {
				a, opaque = 0, false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = y, y, y, a
		}
	case pngGA8:
		for x := range w {
			y, a := row[2*x], row[2*x+1]
			if a != 0xff {
				opaque = false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = y, y, y, a
		}
	case pngTC8:
		tr, tg, tb := d.transparent[1], d.transparent[3], d.transparent[5]
		for x := range w {
			r, g, b := row[3*x], row[3*x+1], row[3*x+2]
			a := uint8(0xff)
			if d.hasKey && r == tr && g == tg && b == tb {
				a, opaque = 0, false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = r, g, b, a
		}
	case pngTCA8:
		copy(px, row[:4*w])
		for x := range w {
			if px[4*x+3] != 0xff {
				opaque = false
				break
			}
		}
	case pngP1, pngP2, pngP4, pngP8:
		bits := d.depth
		perByte := 8 / bits
		for x := range w {
			i := row[x/perByte] >> (8 - bits*(x%perByte+1)) & uint8(1<<bits-1)
			c := d.palette[i]
			if c[3] != 0xff {
				opaque = false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = c[0], c[1], c[2], c[3]
		}
	case pngG16:
		key := uint16(d.transparent[0])<<8 | uint16(d.transparent[1])
		for x := range w {
			y := row[2*x]
			a := uint8(0xff)
			if d.hasKey && uint16(y)<<8|uint16(row[2*x+1]) == key {
				a, opaque = 0, false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = y, y, y, a
		}
	case pngGA16:
		for x := range w {
			s := row[4*x : 4*x+4]
			if s[2] != 0xff || s[3] != 0xff {
				opaque = false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = s[0], s[0], s[0], s[2]
		}
	case pngTC16:
		t := d.transparent
		for x := range w {
			s := row[6*x : 6*x+6]
			a := uint8(0xff)
			if d.hasKey && s[0] == t[0] && s[1] == t[1] && s[2] == t[2] && s[3] == t[3] && s[4] == t[4] && s[5] == t[5] {
				a, opaque = 0, false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = s[0], s[2], s[4], a
		}
	case pngTCA16:
		for x := range w {
			s := row[8*x : 8*x+8]
			if s[6] != 0xff || s[7] != 0xff {
				opaque = false
			}
			px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = s[0], s[2], s[4], s[6]
		}
	}
	if !opaque {
		d.opaque = false
	}
}
