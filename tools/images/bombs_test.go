package images

import (
	"bufio"
	"bytes"
	"compress/lzw"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// Generators of large images ("bombs") that are small files: each writes
// straight to disk without ever holding the image.

// capW x capH is the largest image within the default limits (8192 px a
// side, 64,000,000 pixels).
const capW, capH = 8192, 7812

// writeBombJPEG writes a w x h baseline JPEG, 4:2:0, of uniform grey:
// image/jpeg's own header for such an image, with every MCU's blocks all
// zero (four bytes an MCU with the standard Huffman tables).
func writeBombJPEG(t testing.TB, path string, w, h int) {
	t.Helper()
	small := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for i := range small.Pix {
		small.Pix[i] = 128
	}
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, small, &jpeg.Options{Quality: 90}))
	enc := b.Bytes()
	sos := bytes.Index(enc, []byte{0xff, 0xda})
	require.Positive(t, sos)
	scanStart := sos + 2 + int(binary.BigEndian.Uint16(enc[sos+2:]))
	scan := enc[scanStart : len(enc)-2]
	mcu := []byte{0x28, 0xa2, 0x8a, 0x00}
	require.Equal(t, bytes.Repeat(mcu, 2), scan, "two all-zero 4:2:0 MCUs")
	hdr := withJPEGSize(t, enc[:scanStart], uint16(w), uint16(h))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.Write(hdr)
	row := bytes.Repeat(mcu, (w+15)/16)
	for range (h + 15) / 16 {
		bw.Write(row)
	}
	bw.Write([]byte{0xff, 0xd9})
	require.NoError(t, bw.Flush())
}

// writeBombGIF writes a w x h single-frame GIF of one colour.
func writeBombGIF(t testing.TB, path string, w, h int, interlaced bool) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var hdr [13]byte
	copy(hdr[:], "GIF89a")
	binary.LittleEndian.PutUint16(hdr[6:], uint16(w))
	binary.LittleEndian.PutUint16(hdr[8:], uint16(h))
	hdr[10] = 0x80 // a global colour table of two entries
	bw.Write(hdr[:])
	bw.Write([]byte{200, 30, 30, 255, 255, 255})
	desc := []byte{0x2c, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(desc[5:], uint16(w))
	binary.LittleEndian.PutUint16(desc[7:], uint16(h))
	if interlaced {
		desc[9] = 0x40
	}
	bw.Write(desc)
	bw.WriteByte(2) // LZW minimum code size
	sub := &subBlocks{w: bw}
	lw := lzw.NewWriter(sub, lzw.LSB, 2)
	zeros := make([]byte, 1<<16)
	for left := w * h; left > 0; left -= len(zeros) {
		lw.Write(zeros[:min(left, len(zeros))])
	}
	require.NoError(t, lw.Close())
	sub.flush()
	bw.Write([]byte{0, 0x3b})
	require.NoError(t, bw.Flush())
}

// subBlocks cuts a stream into GIF data sub-blocks.
type subBlocks struct {
	w   io.Writer
	buf []byte
}

func (s *subBlocks) Write(p []byte) (int, error) {
	for _, c := range p {
		s.buf = append(s.buf, c)
		if len(s.buf) == 255 {
			s.flush()
		}
	}
	return len(p), nil
}

func (s *subBlocks) flush() {
	if len(s.buf) > 0 {
		s.w.Write([]byte{byte(len(s.buf))})
		s.w.Write(s.buf)
		s.buf = s.buf[:0]
	}
}

// bitWriter packs bits least significant first, as VP8L reads them.
type bitWriter struct {
	out   []byte
	acc   uint64
	nBits uint
}

func (b *bitWriter) write(v uint64, n uint) {
	b.acc |= v << b.nBits
	b.nBits += n
	for b.nBits >= 8 {
		b.out = append(b.out, byte(b.acc))
		b.acc >>= 8
		b.nBits -= 8
	}
}

func (b *bitWriter) bytes() []byte {
	if b.nBits > 0 {
		return append(b.out, byte(b.acc))
	}
	return b.out
}

// bombWebPLossless returns a w x h lossless WebP of one colour: every
// prefix code has a single symbol, so a pixel takes no bits at all.
func bombWebPLossless(w, h int, c color.NRGBA) []byte {
	var b bitWriter
	b.write(0x2f, 8)
	b.write(uint64(w-1), 14)
	b.write(uint64(h-1), 14)
	b.write(1, 1) // alpha is used
	b.write(0, 3) // version
	b.write(0, 1) // no transform
	b.write(0, 1) // no colour cache
	b.write(0, 1) // one group of prefix codes
	for _, sym := range []uint8{c.G, c.R, c.B, c.A, 0} {
		b.write(1, 1) // a simple code
		b.write(0, 1) // of one symbol
		b.write(1, 1) // of eight bits
		b.write(uint64(sym), 8)
	}
	vp8l := b.bytes()
	var out bytes.Buffer
	out.WriteString("RIFF")
	size := 4 + 8 + len(vp8l) + len(vp8l)&1
	binary.Write(&out, binary.LittleEndian, uint32(size))
	out.WriteString("WEBPVP8L")
	binary.Write(&out, binary.LittleEndian, uint32(len(vp8l)))
	out.Write(vp8l)
	if len(vp8l)&1 == 1 {
		out.WriteByte(0)
	}
	return out.Bytes()
}
