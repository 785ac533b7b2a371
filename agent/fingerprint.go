package agent

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/fingerprint"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// chainCache computes request fingerprints incrementally, as
// fingerprint.Request computes them whole. A message is
// recognized as unchanged by the identity of its content slice: the
// history never changes a message's blocks in place (it replaces the
// slice), so the same backing array and length mean the same content,
// and its chain link can be reused.
type chainCache struct {
	links     []chainLink
	tools     string // digest of the tool schemas, computed once per tool list
	toolBytes int64  // their size
	// toolsOf identifies the tool list the digest is of: the loop
	// converts a list once, so the same first element and length mean
	// the same list.
	toolsOf  *model.Tool
	toolsLen int
	// system and sysHex are the last system prompt and its digest.
	system string
	sysHex string
	// last is the last fingerprint, returned again while nothing of the
	// request changed (each step fingerprints its request twice).
	last      session.Fingerprint
	lastValid bool
}

type chainLink struct {
	first *harness.Block
	n     int
	role  harness.Role
	link  [sha256.Size]byte
	// bytes is the JSON size of the messages up to and including this
	// one, for token estimates.
	bytes int64
}

// historyBytes returns the JSON size of the messages of the last
// fingerprinted request.
func (c *chainCache) historyBytes() int64 {
	if len(c.links) == 0 {
		return 0
	}
	return c.links[len(c.links)-1].bytes
}

func (c *chainCache) fingerprint(req *model.Request) session.Fingerprint {
	var first *model.Tool
	if len(req.Tools) > 0 {
		first = &req.Tools[0]
	}
	if c.tools == "" || first != c.toolsOf || len(req.Tools) != c.toolsLen {
		c.tools = fingerprint.Tools(req.Tools)
		c.lastValid = false
		c.toolsOf, c.toolsLen, c.toolBytes = first, len(req.Tools), 0
		for _, t := range req.Tools {
			c.toolBytes += int64(len(t.Name) + len(t.Description) + len(t.Parameters))
		}
	}
	if c.sysHex == "" || req.System != c.system {
		sys := sha256.Sum256([]byte(req.System))
		c.system, c.sysHex = req.System, hex.EncodeToString(sys[:])
		c.lastValid = false
	}
	valid := 0
	for valid < len(c.links) && valid < len(req.Messages) {
		m, l := req.Messages[valid], c.links[valid]
		if l.n != len(m.Content) || l.role != m.Role || l.n == 0 || l.first != &m.Content[0] {
			break
		}
		valid++
	}
	if c.lastValid && valid == len(c.links) && valid == len(req.Messages) {
		return c.last // nothing changed since the last request
	}
	c.links = c.links[:valid]
	var prev []byte
	var size int64
	if valid > 0 {
		prev = c.links[valid-1].link[:]
		size = c.links[valid-1].bytes
	}
	for _, m := range req.Messages[valid:] {
		var l chainLink
		var n int
		l.link, n = fingerprint.Link(prev, m)
		size += int64(n)
		l.bytes = size
		l.n, l.role = len(m.Content), m.Role
		if l.n > 0 {
			l.first = &m.Content[0]
		}
		c.links = append(c.links, l)
		prev = c.links[len(c.links)-1].link[:]
	}
	c.last = session.Fingerprint{
		System:   c.sysHex,
		Tools:    c.tools,
		History:  hex.EncodeToString(prev),
		Messages: len(req.Messages),
	}
	c.lastValid = true
	return c.last
}
