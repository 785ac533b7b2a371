package textmatch

import (
	"bytes"
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

// finder finds one literal, exactly or with ASCII case folded.
type finder struct {
	needle []byte // lowered when fold
	fold   bool
	rare   byte // a rare byte of needle (lower case when fold)
	rareUp byte // its upper case when fold and a letter; else rare
	off    int  // offset of rare in needle
}

func newFinder(needle []byte, fold bool) *finder {
	f := &finder{needle: needle, fold: fold}
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
	return f
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

// index returns the index of the first occurrence in h, or -1.
func (f *finder) index(h []byte) int {
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

func (f *finder) indexExact(h []byte) int {
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

// indexFold scans for the rare byte in both cases, one scan each, taking
// the nearer hit.
func (f *finder) indexFold(h []byte) int {
	n := len(f.needle)
	if n > len(h) {
		return -1
	}
	end := len(h) - n + f.off + 1 // rare byte positions are < end
	lo, up := -2, -2              // next hit of each case at or after pos; -1 none
	if f.rareUp == f.rare {
		up = -1
	}
	pos := f.off
	for pos < end {
		if lo != -1 && lo < pos {
			lo = nextByte(h[:end], pos, f.rare)
		}
		if up != -1 && up < pos {
			up = nextByte(h[:end], pos, f.rareUp)
		}
		c := lo
		if c < 0 || (up >= 0 && up < c) {
			c = up
		}
		if c < 0 {
			return -1
		}
		if s := c - f.off; equalFold(h[s:s+n], f.needle) {
			return s
		}
		pos = c + 1
	}
	return -1
}

func nextByte(h []byte, from int, c byte) int {
	if i := bytes.IndexByte(h[from:], c); i >= 0 {
		return from + i
	}
	return -1
}
