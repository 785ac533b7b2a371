//go:build !purego

package search

import (
	"bytes"

	"golang.org/x/sys/cpu"
)

//go:noescape
func quoteAVX2(b []byte) int

// nextQuote returns the index of the first '"' in b that may end a
// string, or -1: it passes over quotes right after exactly one
// backslash, which are escaped for sure. The byte before b[0] must not
// be a backslash.
func nextQuote(b []byte) int {
	i := 0
	if cpu.X86.HasAVX2 && len(b) >= 64 {
		if i = quoteAVX2(b); i < len(b)&^31 {
			return i
		}
	}
	if k := bytes.IndexByte(b[i:], '"'); k >= 0 {
		return i + k
	}
	return -1
}
