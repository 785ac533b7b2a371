package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tool names.
const (
	// namePrefix starts the model-facing name of every server tool.
	namePrefix = "mcp__"
	// nameSep separates the server's name from the tool's.
	nameSep = "__"
	// maxNameLen is the longest tool name providers accept.
	maxNameLen = 64
	// hashLen is the length of the hex suffix that keeps shortened or
	// colliding names apart.
	hashLen = 8
)

// sanitize replaces every character outside [A-Za-z0-9_-] with '_' (one
// for each character, not for each byte).
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// nameHash is a short digest of the server and tool names, the suffix
// that keeps shortened or colliding names apart.
func nameHash(server, tool string, salt int) string {
	h := sha256.New()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	if salt > 0 {
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(salt)))
	}
	return hex.EncodeToString(h.Sum(nil))[:hashLen]
}

// plainName is mcp__<server>__<tool>, sanitised, when it fits.
func plainName(server, tool string) (string, bool) {
	n := namePrefix + sanitize(server) + nameSep + sanitize(tool)
	return n, len(n) <= maxNameLen
}

// hashedName is the plain name cut to leave room for a hash suffix.
func hashedName(server, tool string, salt int) string {
	n, _ := plainName(server, tool)
	keep := maxNameLen - hashLen - 1
	if len(n) > keep {
		n = n[:keep]
	}
	return n + "_" + nameHash(server, tool, salt)
}

// namer hands out model-facing names, never the same one twice, and
// keeps a tool's name for as long as the set lives so that a refreshed
// tool list keeps the names (and the request prefix) it had.
type namer struct {
	byKey  map[nameKey]string
	byName map[string]nameKey
}

type nameKey struct{ server, tool string }

func newNamer(reserved ...string) *namer {
	n := &namer{byKey: map[nameKey]string{}, byName: map[string]nameKey{}}
	for _, r := range reserved {
		n.byName[r] = nameKey{}
	}
	return n
}

// name returns the tool's name: mcp__<server>__<tool> when that is free
// and fits in 64 characters, otherwise the name shortened and suffixed
// with a hash of the original names.
func (n *namer) name(server, tool string) string {
	k := nameKey{server, tool}
	if got, ok := n.byKey[k]; ok {
		return got
	}
	cand, fits := plainName(server, tool)
	if _, taken := n.byName[cand]; !fits || taken {
		for salt := 0; ; salt++ {
			cand = hashedName(server, tool, salt)
			if _, taken := n.byName[cand]; !taken {
				break
			}
		}
	}
	n.byKey[k] = cand
	n.byName[cand] = k
	return cand
}

// validName reports whether s is a name providers accept.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLen || !utf8.ValidString(s) {
		return false
	}
	return sanitize(s) == s
}
