package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	// maxServerName is the longest server name, in its tool-name form:
	// mcp__<server>__ then stays whole when a long name is shortened
	// (cut to maxNameLen-hashLen-1 characters), so a permission rule
	// for the server matches every tool of it.
	maxServerName = 40
)

// checkServerName refuses a server name that would make tool names
// ambiguous. Permission rules name a server's tools by the prefix
// mcp__<server>__ (mcp__github__*, mcp__github), so the server part of
// every tool name must end at the first "__" after "mcp__": a name that
// holds "__" (server "a__b", tool "c" would read as server "a", tool
// "b__c"), or ends with '_' (server "a_", tool "b" is mcp__a___b, which
// mcp__a__* matches), once characters outside [A-Za-z0-9_-] become '_',
// would let a rule for one server match another's tools. A name longer
// than maxServerName would be cut out of its tools' names.
func checkServerName(name string) error {
	form := sanitize(name)
	var why string
	switch {
	case strings.Contains(form, nameSep):
		why = `it contains "__"`
	case strings.HasSuffix(form, "_"):
		why = `it ends with "_"`
	case len(form) > maxServerName:
		return fmt.Errorf("the server name %q is longer than %d characters, so its tools' names (mcp__<server>__<tool>, at most %d characters) could not hold it whole; use a shorter name", name, maxServerName, maxNameLen)
	default:
		return nil
	}
	if form != name {
		why += fmt.Sprintf(" once written as in tool names (%q: characters other than letters, digits, '_' and '-' become '_')", form)
	}
	return fmt.Errorf("the server name %q cannot be used: %s, and \"__\" separates the server from the tool in mcp__<server>__<tool>, so a permission rule for one server (mcp__a__*, mcp__a) could match another server's tools; rename it with single '_' or '-' between words", name, why)
}

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
