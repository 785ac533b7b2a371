// Package spillname names saved outputs the same way in every spill
// store: a session's namespace and the parts of an output's name, made
// only of characters that are safe in a file name and in an object key.
// It imports nothing of the module.
package spillname

import (
	"crypto/sha256"
	"encoding/hex"
)

// Sanitize maps an owner id to a name component of at most max bytes made
// of ASCII letters, digits, '_' and '-': anything else becomes '_'. It can
// never produce "." or "..", a path separator or a NUL byte. An empty id
// becomes "none".
func Sanitize(id string, max int) string {
	if id == "" {
		return "none"
	}
	b := make([]byte, 0, min(len(id), max))
	for i := 0; i < len(id) && len(b) < max; i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b = append(b, c)
		default:
			b = append(b, '_')
		}
	}
	return string(b)
}

// SessionDir names the directory (or key prefix) of a session's outputs:
// the sanitized id, for people looking at the store, and a hash of the
// exact id, so that two ids that sanitize alike never share outputs.
func SessionDir(session string) string {
	sum := sha256.Sum256([]byte(session))
	return Sanitize(session, 64) + "-" + hex.EncodeToString(sum[:4])
}
