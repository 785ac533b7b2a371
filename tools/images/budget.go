package images

import (
	"encoding/binary"
	"fmt"
)

// The decode memory budget.
//
// Before any pixel is decoded, Normalize estimates from the file's headers
// how many bytes decoding, scaling and re-encoding the image will hold at
// once, and refuses an image whose estimate is over Limits.MaxDecodeBytes.
// The estimate follows what each decoder really allocates:
//
//   - PNG is read by pngReader, a row at a time: two rows of the file's
//     format, plus, when the image is downscaled, the output and (for an
//     interlaced file, whose passes arrive out of order) a sum for every
//     output pixel.
//   - JPEG is decoded by image/jpeg into a planar image rounded up to
//     whole MCUs, so chroma subsampling matters (4:2:0 is 1.5 bytes a
//     pixel, 4:4:4 three); a progressive file also keeps every DCT
//     coefficient (4 bytes a sample); a four-component (CMYK) file and an
//     RGB one are converted into an interleaved copy on top.
//   - WebP is decoded by golang.org/x/image/webp: a lossy frame is 4:2:0
//     (1.5 bytes a pixel, rounded up to macroblocks) plus a copy of its
//     compressed data; an alpha plane is a byte a pixel, and a compressed
//     one is decoded through a lossless image first; a lossless image
//     takes 4 bytes a pixel, up to 6 with a packed colour-indexing
//     transform.
//   - GIF's first frame is decoded by image/gif at a byte a pixel, twice
//     that when interlaced (it is rearranged into a copy).
//
// Downscaling adds the output image (4 bytes a pixel of the output) and
// the encoder's output, twice; a full-size re-encode (a CMYK JPEG, an
// animated GIF's first frame) adds the encoder's output for the full
// size.

// encoderState is what the PNG and JPEG encoders allocate besides their
// output (deflate's hash tables and window, row buffers).
const encoderState = 1 << 20

// decoderState covers the fixed allocations of any decoder: inflate and
// LZW tables, Huffman tables, read buffers, the colour sample.
const decoderState = 512 << 10

// encodeNeed is what encoding w x h pixels holds besides the image: the
// encoder's state, and its output twice (the chunks it is written into,
// then the one slice they are copied to), the output being at most
// maxBytes (the encoder is stopped past it). A PNG is at most its raw
// rows and deflate's few bytes for a stored block; a JPEG at quality 90
// takes under a byte a pixel even for noise, so 1.25 is allowed.
func encodeNeed(w, h int, asPNG bool, maxBytes int64) int64 {
	px := int64(w) * int64(h)
	out := 5*px/4 + 64<<10
	if asPNG {
		raw := (4*int64(w) + 1) * int64(h)
		out = raw + raw/1000 + 64<<10
	}
	return 2*min(out, maxBytes+outputChunk) + encoderState
}

// memoryNeed estimates the bytes Normalize needs for an image of the given
// type and header dimensions, beyond the file's own bytes, and names what
// drives the cost (for the refusal message).
func memoryNeed(mediaType string, data []byte, w, h int, lim Limits) (int64, string) {
	scaled := max(w, h) > lim.LongEdge
	nw, nh := fitLongEdge(w, h, lim.LongEdge)
	var need int64
	what := formatName(mediaType)
	asPNG := true // the output format, when the pixels do not decide it yet: the costlier
	switch mediaType {
	case typePNG:
		need, what = pngNeed(data, w, h, nw, nh, scaled)
	case typeJPEG:
		var reencode bool
		need, what, reencode = jpegNeed(data, w, h)
		asPNG = false // a JPEG is opaque and many-coloured: it stays a JPEG
		if reencode && !scaled {
			need += encodeNeed(w, h, asPNG, lim.MaxBytes)
		}
	case typeWebP:
		var lossyOpaque bool
		need, what, lossyOpaque = webpNeed(data, w, h)
		asPNG = !lossyOpaque
	case typeGIF:
		var offset bool
		need, what, offset = gifNeed(data, w, h)
		if !scaled && gifFrames(data) > 1 {
			if offset {
				need += 4 * int64(w) * int64(h) // the frame is drawn onto a canvas of the screen's size
			}
			need += encodeNeed(w, h, asPNG, lim.MaxBytes)
		}
	}
	if scaled {
		need += scaledNeed(w, nw, nh, asPNG, lim.MaxBytes)
	}
	return need + decoderState, what
}

// scaledNeed is what downscaling a sw-wide source to nw x nh adds: the
// output, the scaler's rows and spans, and the encoder.
func scaledNeed(sw, nw, nh int, asPNG bool, maxBytes int64) int64 {
	out := 4 * int64(nw) * int64(nh)
	rows := 8*int64(sw) + 64*int64(nw) + 8*int64(sw) + 48*int64(nw) // a 16-bit source row, sums, spans
	return out + rows + encodeNeed(nw, nh, asPNG, maxBytes)
}

// fitLongEdge returns the size of a w x h image scaled so that its longer
// side is longEdge (never below one pixel); an image within it keeps its
// size.
func fitLongEdge(w, h, longEdge int) (int, int) {
	switch {
	case max(w, h) <= longEdge:
		return w, h
	case w >= h:
		return longEdge, max(1, int((int64(h)*int64(longEdge)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(longEdge)+int64(h)/2)/int64(h))), longEdge
}

// pngHeader is what a PNG's IHDR says.
type pngHeader struct {
	width, height int
	depth, colour byte
	interlaced    bool
}

// readPNGHeader finds the IHDR chunk (which may follow chunks the decoder
// ignores) without checking anything pngReader will check.
func readPNGHeader(data []byte) (pngHeader, bool) {
	for off := len(pngSignature); off+8 <= len(data); {
		n := int64(binary.BigEndian.Uint32(data[off:]))
		if string(data[off+4:off+8]) == "IHDR" {
			if n != 13 || off+8+13 > len(data) {
				return pngHeader{}, false
			}
			b := data[off+8:]
			w, h := int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))
			if w <= 0 || h <= 0 {
				return pngHeader{}, false
			}
			return pngHeader{width: int(w), height: int(h), depth: b[8], colour: b[9], interlaced: b[12] == 1}, true
		}
		next := int64(off) + 12 + n
		if next > int64(len(data)) {
			break
		}
		off = int(next)
	}
	return pngHeader{}, false
}

func pngNeed(data []byte, w, h, nw, nh int, scaled bool) (int64, string) {
	hd, ok := readPNGHeader(data)
	if !ok { // the read will refuse it; cost it as the deepest kind
		hd = pngHeader{width: w, height: h, depth: 16, colour: 6, interlaced: true}
	}
	d := pngReader{cb: pngCombination(hd.depth, hd.colour), depth: int(hd.depth)}
	what := fmt.Sprintf("%d-bit %s PNG", hd.depth, pngColourName(hd.colour))
	if hd.interlaced {
		what = "interlaced " + what
	}
	bpp := d.bitsPerPixel()
	if bpp == 0 {
		bpp = 64
	}
	row := int64(pngRowBytes(w, bpp))
	if !scaled {
		return row, what
	}
	need := 2*row + 4*int64(w) // two rows of the file's format and one converted
	if hd.interlaced {
		need += 16*int64(nw)*int64(nh) + 12*int64(w+h) // a sum for every output pixel; the axis shares
	}
	return need, what
}

func pngColourName(colourType byte) string {
	switch colourType {
	case 0:
		return "grey"
	case 2:
		return "RGB"
	case 3:
		return "palette"
	case 4:
		return "grey+alpha"
	case 6:
		return "RGBA"
	}
	return "unknown colour type"
}

// jpegFrame is what a JPEG's SOF and APP markers say.
type jpegFrame struct {
	progressive bool
	comps       int
	h, v        [4]int // sampling factors
	jfif        bool
	adobe       bool
	transform   byte // the Adobe colour transform
	ids         [4]byte
}

// readJPEGFrame walks the markers up to the first scan.
func readJPEGFrame(data []byte) (jpegFrame, bool) {
	var f jpegFrame
	found := false
	for off := 2; off+4 <= len(data); {
		if data[off] != 0xff {
			off++ // stray bytes between segments, which image/jpeg skips too
			continue
		}
		m := data[off+1]
		switch {
		case m == 0xff || m == 0x00:
			off++
			continue
		case m == 0x01 || (m >= 0xd0 && m <= 0xd8): // no length
			off += 2
			continue
		case m == 0xd9 || m == 0xda: // end of image or start of scan
			return f, found
		}
		n := int(binary.BigEndian.Uint16(data[off+2:]))
		seg := data[off+4 : min(len(data), off+2+max(n, 2))]
		switch {
		case (m == 0xc0 || m == 0xc1 || m == 0xc2) && !found && len(seg) >= 6:
			f.progressive = m == 0xc2
			f.comps = int(seg[5])
			if f.comps != 1 && f.comps != 3 && f.comps != 4 || len(seg) < 6+3*f.comps {
				return f, false
			}
			for i := range f.comps {
				f.ids[i] = seg[6+3*i]
				f.h[i], f.v[i] = max(1, int(seg[7+3*i]>>4)), max(1, int(seg[7+3*i]&0x0f))
			}
			if f.comps == 1 {
				f.h[0], f.v[0] = 1, 1
			}
			found = true
		case m == 0xe0 && len(seg) >= 5 && string(seg[:5]) == "JFIF\x00":
			f.jfif = true
		case m == 0xee && len(seg) >= 12 && string(seg[:5]) == "Adobe":
			f.adobe, f.transform = true, seg[11]
		}
		off += 2 + max(n, 2)
	}
	return f, found
}

// jpegNeed returns image/jpeg's allocation for the image, a description,
// and whether the decoded image is re-encoded even at full size (a
// four-component file becomes CMYK).
func jpegNeed(data []byte, w, h int) (int64, string, bool) {
	f, ok := readJPEGFrame(data)
	if !ok { // image/jpeg will refuse it; cost it as the worst kind
		f = jpegFrame{progressive: true, comps: 4, h: [4]int{1, 1, 1, 1}, v: [4]int{1, 1, 1, 1}}
	}
	h0, v0 := f.h[0], f.v[0]
	mxx, myy := int64((w+8*h0-1)/(8*h0)), int64((h+8*v0-1)/(8*v0))
	pixels := int64(w) * int64(h)
	luma := 64 * int64(h0) * int64(v0) * mxx * myy // the first plane, in whole MCUs
	var need int64
	what := "JPEG"
	switch f.comps {
	case 1:
		need = luma
		what = "greyscale JPEG"
	default:
		hr, vr := max(1, h0/f.h[1]), max(1, v0/f.v[1])
		need = luma + 2*luma/int64(hr*vr)
		what = fmt.Sprintf("JPEG with %s chroma", subsamplingName(hr, vr))
		if f.comps == 4 {
			need += 64*int64(f.h[3])*int64(f.v[3])*mxx*myy + 4*pixels // black plane, CMYK copy
			what = "CMYK JPEG"
		} else if !f.jfif && (f.adobe && f.transform == 0 || f.ids == [4]byte{'R', 'G', 'B'}) {
			need += 4 * pixels // an RGB file is converted into an RGBA copy
			what = "RGB JPEG"
		}
	}
	if f.progressive {
		for i := range f.comps {
			need += 256 * mxx * myy * int64(f.h[i]) * int64(f.v[i]) // 64 int32 coefficients a block
		}
		what = "progressive " + what
	}
	return need, what, f.comps == 4
}

func subsamplingName(hr, vr int) string {
	switch hr<<4 | vr {
	case 0x11:
		return "4:4:4"
	case 0x12:
		return "4:4:0"
	case 0x21:
		return "4:2:2"
	case 0x22:
		return "4:2:0"
	case 0x41:
		return "4:1:1"
	case 0x42:
		return "4:1:0"
	}
	return "subsampled"
}

// webpNeed returns x/image/webp's allocation for the image, and whether
// it is lossy without alpha (so that a downscaled copy is a JPEG).
func webpNeed(data []byte, w, h int) (int64, string, bool) {
	pixels := int64(w) * int64(h)
	mbs := int64((w+15)/16) * int64((h+15)/16)
	var need int64
	what := "WebP"
	lossy, lossless := false, false
	for off := 12; off+8 <= len(data); {
		id := string(data[off : off+4])
		n := int64(binary.LittleEndian.Uint32(data[off+4:]))
		switch id {
		case "ALPH":
			need += pixels // the alpha plane
			if off+8 < len(data) && data[off+8]&0x03 != 0 {
				need += 6 * pixels // compressed: decoded as a lossless image first
			}
			what = "WebP with alpha"
		case "VP8 ":
			lossy = true
			need += 384*mbs + 4*mbs + min(n, int64(len(data))) // 4:2:0 planes, filter state, the data copy
		case "VP8L":
			lossless = true
			need += 6 * pixels
		}
		if lossy || lossless {
			break
		}
		off += 8 + int(n) + int(n&1)
		if n > int64(len(data)) {
			break
		}
	}
	switch {
	case lossless:
		what = "lossless WebP"
	case !lossy: // no frame found: the decode will refuse it; cost the worst
		need = 7 * pixels
	case what == "WebP":
		return need, "lossy WebP", true
	}
	return need, what, false
}

// gifNeed returns image/gif's allocation for the first frame, and whether
// that frame is smaller than the logical screen.
func gifNeed(data []byte, w, h int) (int64, string, bool) {
	fw, fh, interlaced, ok := gifFirstFrame(data)
	if !ok { // no frame: the decode will refuse it; cost the worst
		fw, fh, interlaced = w, h, true
	}
	need := int64(fw) * int64(fh)
	what := "GIF"
	if interlaced {
		need *= 2
		what = "interlaced GIF"
	}
	return need, what, fw != w || fh != h
}

// gifFirstFrame walks a GIF's blocks to its first image descriptor and
// returns the frame's size and whether it is interlaced.
func gifFirstFrame(data []byte) (w, h int, interlaced, ok bool) {
	if len(data) < 13 {
		return 0, 0, false, false
	}
	off := 13
	if flags := data[10]; flags&0x80 != 0 {
		off += 3 << ((flags & 7) + 1)
	}
	for off < len(data) {
		switch data[off] {
		case 0x21: // extension: label, then sub-blocks
			off += 2
			for off < len(data) && data[off] != 0 {
				off += 1 + int(data[off])
			}
			off++
		case 0x2c:
			if off+10 > len(data) {
				return 0, 0, false, false
			}
			d := data[off:]
			return int(binary.LittleEndian.Uint16(d[5:])), int(binary.LittleEndian.Uint16(d[7:])), d[9]&0x40 != 0, true
		default:
			return 0, 0, false, false
		}
	}
	return 0, 0, false, false
}
