package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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
func HistoryChain(msgs []session.Message, n int) []byte {
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
