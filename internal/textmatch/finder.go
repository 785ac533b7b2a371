package textmatch

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// byFrequency lists bytes by how often they occur in source code and
// logs, most frequent first; bytes not listed are rarer than all.
const byFrequency = " etaonirsl\n\tcdupmh\"f.(),=_g;:/b0yv1-*w'x2k{}>[]<E#T&!SR8ACI3NO4P|9D5L6F7+M$%@?U\\BHGkqzVWjXYKJQZ^~`"

// rank ranks c by frequency: 0 is the rarest.
func rank(c byte) int {
	if i := strings.IndexByte(byFrequency, c); i >= 0 {
		return len(byFrequency) - i
	}
	return 0
}

// Finder finds one literal, exactly or with ASCII case folded. It is
// immutable once tuned and safe for concurrent use.
type Finder struct {
	needle []byte // lowered when fold
	fold   bool
	rare   byte // a rare byte of needle (lower case when fold)
	rareUp byte // its upper case when fold and a letter; else rare
	off    int  // offset of rare in needle
	// rare2 at off2 is a second rare byte, at another offset, that the
	// pair scan looks for with rare; off2 is -1 when the needle has one
	// byte. mask and mask2 are 0x20 when fold and the byte is a letter
	// (the scan then finds it in either case), else 0.
	rare2       byte
	off2        int
	mask, mask2 byte
	// scanRare: a folded needle is found by scanning for its rare byte in
	// both cases, which Tune found rare enough to beat lowering the text.
	scanRare bool
}

// NewFinder returns a finder of needle; fold finds it with ASCII letters
// in either case.
func NewFinder(needle []byte, fold bool) *Finder {
	f := &Finder{needle: needle, fold: fold}
	if fold {
		f.needle = bytes.ToLower(needle)
	}
	best := 1 << 30
	for i, c := range f.needle {
		r := rank(c)
		if fold && c >= 'a' && c <= 'z' {
			r += rank(c - 32) // both cases are searched
		}
		if r < best {
			best, f.rare, f.off = r, c, i
		}
	}
	f.rareUp = f.rare
	if fold && f.rare >= 'a' && f.rare <= 'z' {
		f.rareUp = f.rare - 32
	}
	f.pickSecond(func(c byte) int {
		if fold && c >= 'a' && c <= 'z' {
			return rank(c) + rank(c-32)
		}
		return rank(c)
	})
	return f
}

// foldMask is the pair scan's mask for byte c of the needle.
func (f *Finder) foldMask(c byte) byte {
	if f.fold && c >= 'a' && c <= 'z' {
		return 0x20
	}
	return 0
}

// pickSecond picks the pair scan's second byte: the rarest by cost at
// another offset than the rare byte's.
func (f *Finder) pickSecond(cost func(c byte) int) {
	f.off2 = -1
	best := 0
	for i, c := range f.needle {
		if i == f.off {
			continue
		}
		if k := cost(c); f.off2 < 0 || k < best {
			best, f.off2, f.rare2 = k, i, c
		}
	}
	f.mask, f.mask2 = f.foldMask(f.rare), f.foldMask(f.rare2)
}

// Tune picks the needle's rare byte by counts of the bytes of a sample
// of the text to be searched, which beats the fixed ranking; the fixed
// ranking breaks ties. Call it before any search.
func (f *Finder) Tune(counts *[256]int) {
	if len(f.needle) < 2 {
		return
	}
	bestCount, bestRank := -1, 0
	for i, c := range f.needle {
		n, r := counts[c], rank(c)
		if f.fold && c >= 'a' && c <= 'z' {
			n, r = n+counts[c-32], r+rank(c-32)
		}
		if bestCount < 0 || n < bestCount || n == bestCount && r < bestRank {
			bestCount, bestRank, f.rare, f.off = n, r, c, i
		}
	}
	f.rareUp = f.rare
	if f.fold && f.rare >= 'a' && f.rare <= 'z' {
		f.rareUp = f.rare - 32
	}
	f.pickSecond(func(c byte) int {
		if f.fold && c >= 'a' && c <= 'z' {
			return (counts[c]+counts[c-32])<<8 | (rank(c) + rank(c-32))
		}
		return counts[c]<<8 | rank(c)
	})
	total := 0
	for _, n := range counts {
		total += n
	}
	f.scanRare = f.fold && bestCount*rareScanRatio < total
}

// rareScanRatio is how much rarer than one in so many bytes the rare byte
// of a folded needle (its two cases together) must be for a scan of its
// hits to beat lowering the text and searching that.
const rareScanRatio = 64

// ByteCounts counts the bytes of a sample, for Tune.
func ByteCounts(sample []byte) *[256]int {
	var counts [256]int
	for _, c := range sample {
		counts[c]++
	}
	return &counts
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

func equalFold(a, lowered []byte) bool {
	for i, c := range lowered {
		if lower(a[i]) != c {
			return false
		}
	}
	return true
}

// Index returns the index of the first occurrence in h, or -1.
func (f *Finder) Index(h []byte) int {
	n := len(f.needle)
	if n == 0 {
		return 0
	}
	if !f.fold {
		if n == 1 {
			return bytes.IndexByte(h, f.needle[0])
		}
		return f.indexExact(h)
	}
	return f.indexFold(h)
}

func (f *Finder) indexExact(h []byte) int {
	n := len(f.needle)
	pos := 0
	if f.off2 >= 0 {
		// Positions where both rare bytes are in place, 32 at a time.
		for {
			r := pairScan(h[pos:], f.off, f.off2, f.rare, f.rare2, 0, 0)
			if r < 0 {
				pos += -1 - r
				break
			}
			c := pos + r
			if c+n <= len(h) && bytes.Equal(h[c:c+n], f.needle) {
				return c
			}
			pos = c + 1
		}
	}
	if i := f.indexRare(h[pos:]); i >= 0 {
		return pos + i
	}
	return -1
}

// indexRare finds the needle by scanning for its rare byte.
func (f *Finder) indexRare(h []byte) int {
	n := len(f.needle)
	pos, misses := 0, 0
	for pos+n <= len(h) {
		i := bytes.IndexByte(h[pos+f.off:len(h)-n+f.off+1], f.rare)
		if i < 0 {
			return -1
		}
		c := pos + i
		if bytes.Equal(h[c:c+n], f.needle) {
			return c
		}
		pos = c + 1
		// When false hits dominate, bytes.Index does better.
		if misses++; misses > 32 && misses*32 > pos {
			if j := bytes.Index(h[pos:], f.needle); j >= 0 {
				return pos + j
			}
			return -1
		}
	}
	return -1
}

// foldBlock is the span indexFold lowers at a time, on the stack.
const foldBlock = 4096

// indexFold finds the needle with its letters in either case: where
// the system has a pair scan, by looking for its two rare bytes (each
// in both cases) 32 positions at a time and comparing the needle at each
// hit, without lowering the text; the rest of h, or all of it elsewhere,
// as indexFoldLowered does.
func (f *Finder) indexFold(h []byte) int {
	n := len(f.needle)
	pos := 0
	if f.off2 >= 0 {
		for {
			r := pairScan(h[pos:], f.off, f.off2, f.rare, f.rare2, f.mask, f.mask2)
			if r < 0 {
				pos += -1 - r
				break
			}
			c := pos + r
			if c+n <= len(h) && equalFold(h[c:c+n], f.needle) {
				return c
			}
			pos = c + 1
		}
	}
	if i := f.indexFoldLowered(h[pos:]); i >= 0 {
		return pos + i
	}
	return -1
}

// indexFoldLowered lowers the ASCII letters of h a block at a time into
// a buffer on the stack and looks for the lowered needle there with
// bytes.Index; a needle too long for the block overlap falls back to
// scanning for its rare byte in both cases.
func (f *Finder) indexFoldLowered(h []byte) int {
	n := len(f.needle)
	if n > 64 || f.scanRare {
		return f.indexFoldRare(h)
	}
	var block [foldBlock + 64]byte
	for start := 0; start+n <= len(h); start += foldBlock {
		end := min(len(h), start+foldBlock+n-1)
		seg := block[:end-start]
		lowerASCII(seg, h[start:end])
		if i := bytes.Index(seg, f.needle); i >= 0 {
			return start + i
		}
	}
	return -1
}

// lowerASCII writes src to dst with ASCII upper-case letters lowered,
// eight bytes at a time.
func lowerASCII(dst, src []byte) {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		heptets := w & 0x7f7f7f7f7f7f7f7f
		geA := heptets + 0x3f3f3f3f3f3f3f3f // high bit: byte >= 'A'
		gtZ := heptets + 0x2525252525252525 // high bit: byte > 'Z'
		upper := geA &^ gtZ &^ w & 0x8080808080808080
		binary.LittleEndian.PutUint64(dst[i:], w|upper>>2)
	}
	for ; i < len(src); i++ {
		dst[i] = lower(src[i])
	}
}

// indexFoldRare scans for the rare byte in both cases, a block at a
// time (so that a case that does not occur is not looked for to the end
// of h again and again), checking the needle around each hit.
func (f *Finder) indexFoldRare(h []byte) int {
	n := len(f.needle)
	if n > len(h) {
		return -1
	}
	end := len(h) - n + f.off + 1 // rare byte positions are < end
	for start := f.off; start < end; start += foldBlock {
		stop := min(end, start+foldBlock)
		best := f.firstHit(h, start, stop, f.rare)
		if f.rareUp != f.rare {
			if best >= 0 {
				stop = best
			}
			if c := f.firstHit(h, start, stop, f.rareUp); c >= 0 {
				best = c
			}
		}
		if best >= 0 {
			return best - f.off
		}
	}
	return -1
}

// firstHit returns the first position of c in h[start:stop] where the
// needle occurs around it (case folded), or -1.
func (f *Finder) firstHit(h []byte, start, stop int, c byte) int {
	for pos := start; pos < stop; {
		i := bytes.IndexByte(h[pos:stop], c)
		if i < 0 {
			return -1
		}
		at := pos + i
		if s := at - f.off; equalFold(h[s:s+len(f.needle)], f.needle) {
			return at
		}
		pos = at + 1
	}
	return -1
}
