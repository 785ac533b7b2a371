// Package fingerprint digests what a model request sends, part by part,
// so a recorded session can be replayed and a replay can say which part
// drifted. The loop logs the digest before each model call; strict replay
// compares against it.
//
// It imports harness, agent/model and session; nothing of agent.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
)

// Request digests req: the system prompt, the tool definitions, and the
// message history as a hash chain (each link covers every message up to
// it).
func Request(req *model.Request) session.Fingerprint {
	sys := sha256.Sum256([]byte(req.System))
	return session.Fingerprint{
		System:   hex.EncodeToString(sys[:]),
		Tools:    Tools(req.Tools),
		History:  hex.EncodeToString(Chain(req.Messages, len(req.Messages))),
		Messages: len(req.Messages),
	}
}

// Tools returns the hex digest of the tool definitions, in order.
func Tools(ts []model.Tool) string {
	th := sha256.New()
	for _, t := range ts {
		th.Write([]byte(t.Name))
		th.Write([]byte{0})
		th.Write([]byte(t.Description))
		th.Write([]byte{0})
		th.Write(t.Parameters)
		th.Write([]byte{0})
	}
	return hex.EncodeToString(th.Sum(nil))
}

// Chain returns the chain digest of the first n messages:
// link(i) = sha256(link(i-1) || sha256(json(message i))).
func Chain(msgs []harness.Message, n int) []byte {
	link := make([]byte, 0, sha256.Size)
	for _, m := range msgs[:n] {
		l, _ := Link(link, m)
		link = append(link[:0], l[:]...)
	}
	return link
}

// Link returns the chain link after prev for message m, and the size of
// m's JSON encoding.
func Link(prev []byte, m harness.Message) ([sha256.Size]byte, int) {
	b, _ := json.Marshal(m)
	mh := sha256.Sum256(b)
	h := sha256.New()
	h.Write(prev)
	h.Write(mh[:])
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out, len(b)
}
