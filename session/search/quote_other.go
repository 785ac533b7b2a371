//go:build !amd64 || purego

package search

import "bytes"

// nextQuote returns the index of the first '"' in b that may end a
// string, or -1.
func nextQuote(b []byte) int { return bytes.IndexByte(b, '"') }
