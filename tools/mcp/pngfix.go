package mcp

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// dropBadAncillary returns a PNG without the ancillary chunks whose
// checksum is wrong, and whether it dropped any. Decoders such as libpng
// skip those chunks with a warning, so servers ship such images (the
// reference server's sample has a broken colour profile); Go's decoder
// refuses the whole image. Critical chunks are left alone: a broken one
// still makes the image corrupt.
func dropBadAncillary(data []byte) ([]byte, bool) {
	if !bytes.HasPrefix(data, pngSignature) {
		return data, false
	}
	out := append([]byte(nil), pngSignature...)
	dropped := false
	for rest := data[len(pngSignature):]; len(rest) > 0; {
		if len(rest) < 12 {
			return data, false
		}
		n := binary.BigEndian.Uint32(rest[:4])
		if uint64(n) > uint64(len(rest)-12) {
			return data, false
		}
		chunk := rest[:12+n]
		typ, body := chunk[4:8], chunk[8:8+n]
		sum := binary.BigEndian.Uint32(chunk[8+n:])
		ancillary := typ[0]&0x20 != 0
		if ancillary && crc32.ChecksumIEEE(append(append([]byte(nil), typ...), body...)) != sum {
			dropped = true
		} else {
			out = append(out, chunk...)
		}
		rest = rest[12+n:]
	}
	if !dropped {
		return data, false
	}
	return out, true
}
