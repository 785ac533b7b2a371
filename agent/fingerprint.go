package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// Fingerprint digests what a request sends, part by part: the system
// prompt, the tool schemas, and the message history as a hash chain (each
// link covers every message up to it). A replay compares the parts to say
// which one drifted from the recording.
func Fingerprint(req *Request) session.Fingerprint {
	sys := sha256.Sum256([]byte(req.System))
	th := sha256.New()
	for _, t := range req.Tools {
		th.Write([]byte(t.Name))
		th.Write([]byte{0})
		th.Write([]byte(t.Description))
		th.Write([]byte{0})
		th.Write(t.InputSchema)
		th.Write([]byte{0})
	}
	return session.Fingerprint{
		System:   hex.EncodeToString(sys[:]),
		Tools:    hex.EncodeToString(th.Sum(nil)),
		History:  hex.EncodeToString(HistoryChain(req.Messages, len(req.Messages))),
		Messages: len(req.Messages),
	}
}

// HistoryChain returns the chain digest of the first n messages:
// link(i) = sha256(link(i-1) || sha256(json(message i))).
func HistoryChain(msgs []harness.Message, n int) []byte {
	link := make([]byte, 0, sha256.Size)
	h := sha256.New()
	for _, m := range msgs[:n] {
		b, _ := json.Marshal(m)
		mh := sha256.Sum256(b)
		h.Reset()
		h.Write(link)
		h.Write(mh[:])
		link = h.Sum(link[:0])
	}
	return link
}

// chainCache computes request fingerprints incrementally. A message is
// recognized as unchanged by the identity of its content slice: the
// history never changes a message's blocks in place (it replaces the
// slice), so the same backing array and length mean the same content,
// and its chain link can be reused.
type chainCache struct {
	links     []chainLink
	tools     []byte // digest of the tool schemas, computed once
	toolBytes int64  // their size
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

func (c *chainCache) fingerprint(req *Request) session.Fingerprint {
	if c.tools == nil {
		c.tools = []byte(Fingerprint(&Request{Tools: req.Tools}).Tools)
		for _, t := range req.Tools {
			c.toolBytes += int64(len(t.Name) + len(t.Description) + len(t.InputSchema))
		}
	}
	sys := sha256.Sum256([]byte(req.System))
	valid := 0
	for valid < len(c.links) && valid < len(req.Messages) {
		m, l := req.Messages[valid], c.links[valid]
		if l.n != len(m.Content) || l.role != m.Role || l.n == 0 || l.first != &m.Content[0] {
			break
		}
		valid++
	}
	c.links = c.links[:valid]
	var prev []byte
	var size int64
	if valid > 0 {
		prev = c.links[valid-1].link[:]
		size = c.links[valid-1].bytes
	}
	h := sha256.New()
	for _, m := range req.Messages[valid:] {
		b, _ := json.Marshal(m)
		mh := sha256.Sum256(b)
		h.Reset()
		h.Write(prev)
		h.Write(mh[:])
		var l chainLink
		h.Sum(l.link[:0])
		size += int64(len(b))
		l.bytes = size
		l.n, l.role = len(m.Content), m.Role
		if l.n > 0 {
			l.first = &m.Content[0]
		}
		c.links = append(c.links, l)
		prev = c.links[len(c.links)-1].link[:]
	}
	return session.Fingerprint{
		System:   hex.EncodeToString(sys[:]),
		Tools:    string(c.tools),
		History:  hex.EncodeToString(prev),
		Messages: len(req.Messages),
	}
}
