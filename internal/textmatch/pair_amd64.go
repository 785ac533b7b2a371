//go:build !purego

package textmatch

import "golang.org/x/sys/cpu"

//go:noescape
func pairAVX2(h []byte, off1, off2 int, b1, b2, m1, m2 byte) int

// pairScan returns the first i with h[i+off1]|m1 == b1 and
// h[i+off2]|m2 == b2 among the first positions of h, or -1-n when none
// of the n positions it looked at has them (n may be 0: look at the rest
// another way). A mask is 0x20 to find a lower-case letter in either
// case, else 0. It compares 32 positions at a time, so a byte that is
// not rare on its own rarely stops it.
func pairScan(h []byte, off1, off2 int, b1, b2, m1, m2 byte) int {
	if !cpu.X86.HasAVX2 {
		return -1
	}
	return pairAVX2(h, off1, off2, b1, b2, m1, m2)
}
