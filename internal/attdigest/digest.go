// Package attdigest computes attachment digests and checks their shape,
// for the attachment stores of the module, their conformance suite and
// the module's tests. It imports only the standard library.
package attdigest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Prefix starts every attachment digest: the digest is Prefix followed by
// the lowercase hex SHA-256 of the bytes.
const Prefix = "sha256:"

// Of returns the attachment digest of data: Prefix and the lowercase hex
// SHA-256 of the bytes.
func Of(data []byte) string {
	sum := sha256.Sum256(data)
	return Prefix + hex.EncodeToString(sum[:])
}

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
