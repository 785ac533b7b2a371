// Package attdigest checks the shape of attachment digests, for the
// attachment stores of the module and their conformance suite. It imports
// only the standard library.
package attdigest

import (
	"crypto/sha256"
	"strings"
)

// Prefix starts every attachment digest: the digest is Prefix followed by
// the lowercase hex SHA-256 of the bytes.
const Prefix = "sha256:"

// Valid reports whether d is a well-formed attachment digest: "sha256:"
// followed by exactly 64 lowercase hex digits. Only such digests name
// stored objects, so none can leave a store's directory or prefix.
func Valid(d string) bool {
	h, ok := strings.CutPrefix(d, Prefix)
	if !ok || len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
