//go:build !amd64 || purego

package textmatch

// pairScan looks at no position on this system: it returns -1.
func pairScan(h []byte, off1, off2 int, b1, b2, m1, m2 byte) int { return -1 }
