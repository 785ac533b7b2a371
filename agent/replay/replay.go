package replay

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/fingerprint"
	"github.com/go-harness/harness/session"
)

// Model is a model.Model that answers from a queue of responses, one per
// model call, in order, and keeps every request it received, so a test
// can drive tools, hosts or the loop without a network or a key. It is
// safe for concurrent use.
//
// [NewScripted] fills the queue with canned [Response] values; [New] and
// [NewStrict] with the answers of a recorded session. Each recorded call carries the
// fingerprint of the request the model received. In a strict replay
// ([NewStrict]), a live request that differs from the recorded one fails
// the call with a *harness.Error (harness.CodeReplayDrift) naming the
// call, the turn, the step and the part that drifted (system prompt, tool
// schemas, or which message of the history), instead of silently
// replaying answers to questions that were never asked. [Model.Push]
// appends responses to either.
type Model struct {
	strict bool
	events []session.Event
	// recorded is how many calls of a recording the queue started with.
	recorded int

	mu       sync.Mutex
	info     model.Info
	queue    []queued
	requests []*model.Request
}

// queued is one answer of the queue: a response, and for a recorded
// call the recording to compare the live request with.
type queued struct {
	resp Response
	rec  *recordedCall
	// answer is the recorded answer resp streams again.
	answer *session.AssistantMessage
	// call is the recorded call's index among the recording's calls.
	call int
}

type recordedCall struct {
	reqIndex int // index in events of the model_request
	req      *session.ModelRequest
	turn     int
}

// New returns a Model replaying the recorded session tr, named after the
// recorded model (set other info with [Model.WithInfo]): the recorded
// answers are given in order, whatever is asked, each as it was logged
// (reasoning with its signatures included). An answer a fallback model
// gave in the recording (session.ModelFallback) begins with a
// model.ChunkModel chunk naming that model, so the replayed log records
// and prices it as the recording did; the failures before it are not
// replayed. [NewStrict] also checks
// each live request against the recorded one. Calls whose answer was
// cancelled are skipped: a replay cannot reproduce a cancellation. A
// session with no recorded model call is an error.
func New(tr *session.Transcript) (*Model, error) { return newReplay(tr, false) }

// NewStrict is [New] for a strict replay: a call whose live request
// drifted from the recorded one (its system prompt, tools or history)
// fails with an error matching harness.CodeReplayDrift, naming the call,
// its step and what changed, instead of answering.
func NewStrict(tr *session.Transcript) (*Model, error) { return newReplay(tr, true) }

func newReplay(tr *session.Transcript, strict bool) (*Model, error) {
	m := &Model{events: tr.Events, strict: strict}
	var pending *recordedCall
	turn := 0
	for i, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			if !p.Steer {
				turn++
			}
		case *session.ModelRequest:
			pending = &recordedCall{reqIndex: i, req: p, turn: turn}
		case *session.AssistantMessage:
			if pending != nil && p.Finish != model.FinishAborted {
				m.queue = append(m.queue, queued{resp: recordedResponse(p), rec: pending, answer: p, call: len(m.queue)})
			}
			pending = nil
		}
	}
	if len(m.queue) == 0 {
		return nil, fmt.Errorf("replay: session %s has no recorded model calls", tr.Header.ID)
	}
	m.recorded = len(m.queue)
	m.info.Name = m.queue[0].rec.req.Model
	for i := range m.queue {
		// An answer another model gave (a fallback) names it, so the
		// replayed log and prices name it too.
		if am := m.queue[i].answer; am != nil && am.Model != "" && am.Model != m.info.Name {
			m.queue[i].resp.Model = am.Model
		}
	}
	return m, nil
}

// recordedResponse is the response that streams a recorded answer again:
// its reasoning blocks with their signatures, its text, its tool calls,
// usage and finish reason.
func recordedResponse(a *session.AssistantMessage) Response {
	r := Response{Usage: a.Usage, Finish: a.Finish}
	signed := false
	for _, b := range a.Content {
		switch b.Type {
		case harness.BlockReasoning:
			r.Reasoning += b.Text
			signed = signed || b.Signature != "" || b.Redacted
		case harness.BlockText:
			r.Text += b.Text
		case harness.BlockToolCall:
			if b.ToolCall != nil {
				r.ToolCalls = append(r.ToolCalls, *b.ToolCall)
			}
		}
	}
	if signed {
		// The blocks stream in their logged order, each reasoning block
		// apart, ended by its signature, so they assemble as logged.
		var chunks []model.Chunk
		calls := 0
		for _, b := range a.Content {
			switch {
			case b.Type == harness.BlockReasoning:
				chunks = append(chunks, model.Chunk{Type: model.ChunkReasoning, Text: b.Text, Signature: b.Signature, Redacted: b.Redacted})
			case b.Type == harness.BlockText && b.Text != "":
				chunks = append(chunks, model.Chunk{Type: model.ChunkText, Text: b.Text})
			case b.Type == harness.BlockToolCall && b.ToolCall != nil:
				tc := b.ToolCall
				chunks = append(chunks, model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: calls, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}})
				calls++
			}
		}
		if a.Usage != nil {
			chunks = append(chunks, model.Chunk{Type: model.ChunkUsage, Usage: *a.Usage})
		}
		finish := a.Finish
		if finish == "" {
			finish = model.FinishStop
			if calls > 0 {
				finish = model.FinishToolCalls
			}
		}
		r.Chunks = append(chunks, model.Chunk{Type: model.ChunkFinish, Finish: finish})
	}
	return r
}

// NewScripted returns a model named "scripted" that answers with
// responses in order.
func NewScripted(responses ...Response) *Model {
	m := &Model{info: model.Info{Name: "scripted"}}
	m.Push(responses...)
	return m
}

// WithInfo sets the model info the model reports, and returns the model.
func (m *Model) WithInfo(info model.Info) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.info = info
	return m
}

// Push appends responses to the queue.
func (m *Model) Push(responses ...Response) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range responses {
		m.queue = append(m.queue, queued{resp: r})
	}
}

// Requests returns the requests received so far, oldest first.
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.Request(nil), m.requests...)
}

// Info implements model.Model.
func (m *Model) Info() model.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.info
}

// Stream implements model.Model.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, cloneRequest(req))
		n := len(m.requests)
		if len(m.queue) == 0 {
			m.mu.Unlock()
			if m.recorded > 0 {
				yield(model.Chunk{}, fmt.Errorf("replay: the recording has %d model calls; the live session asked for call %d", m.recorded, n))
			} else {
				yield(model.Chunk{}, fmt.Errorf("replay: scripted model has no response left for call %d", n))
			}
			return
		}
		q := m.queue[0]
		m.queue = m.queue[1:]
		m.mu.Unlock()
		if q.rec != nil && m.strict {
			if err := m.compare(q.call, *q.rec, req); err != nil {
				yield(model.Chunk{}, err)
				return
			}
		}
		r := q.resp
		if r.Respond != nil {
			r = r.Respond(req)
		}
		emit(ctx, r, yield)
	}
}

func (m *Model) compare(i int, rc recordedCall, req *model.Request) error {
	want := rc.req.Fingerprint
	got := fingerprint.Request(req)
	drift := func(part, detail string) error {
		return &harness.Error{Code: harness.CodeReplayDrift, Message: fmt.Sprintf("replay: model call %d (turn %d, step %d) drifted from the recording: the %s differs: %s",
			i+1, rc.turn, rc.req.Step, part, detail)}
	}
	switch {
	case got.System != want.System:
		return drift("system prompt", fmt.Sprintf("live prompt %q", clip(req.System, 80)))
	case got.Tools != want.Tools:
		return drift("tool schemas", fmt.Sprintf("%d live tools", len(req.Tools)))
	case got.History != want.History:
		return drift("history", m.historyDetail(rc, req))
	}
	return nil
}

// historyDetail names the first message that differs, using the
// recording's own history where it reproduces the recorded fingerprint.
func (m *Model) historyDetail(rc recordedCall, req *model.Request) string {
	recorded := new(session.History).Add(m.events[:rc.reqIndex]...).Messages()
	if len(recorded) != rc.req.Fingerprint.Messages ||
		hex.EncodeToString(fingerprint.Chain(recorded, len(recorded))) != rc.req.Fingerprint.History {
		return fmt.Sprintf("recorded %d messages, live %d", rc.req.Fingerprint.Messages, len(req.Messages))
	}
	for k := 0; k < min(len(recorded), len(req.Messages)); k++ {
		a, _ := json.Marshal(recorded[k])
		b, _ := json.Marshal(req.Messages[k])
		if !bytes.Equal(a, b) {
			ra, rb := describe(recorded[k]), describe(req.Messages[k])
			if ra == rb { // the difference is in structure, not text
				ra, rb = string(a), string(b)
			}
			ra, rb = aroundDifference(ra, rb, 60)
			return fmt.Sprintf("message %d (%s) differs: recorded %q, live %q", k+1, recorded[k].Role, ra, rb)
		}
	}
	return fmt.Sprintf("recorded %d messages, live %d", len(recorded), len(req.Messages))
}

// describe renders a message's visible content on one line.
func describe(m harness.Message) string {
	var b strings.Builder
	for _, blk := range m.Content {
		if b.Len() > 0 {
			b.WriteString(" | ")
		}
		switch {
		case blk.Type == harness.BlockToolCall && blk.ToolCall == nil,
			blk.Type == harness.BlockToolResult && blk.ToolResult == nil,
			blk.Type == harness.BlockImage && blk.Image == nil:
			fmt.Fprintf(&b, "%s (missing)", blk.Type)
		case blk.Type == harness.BlockToolCall:
			fmt.Fprintf(&b, "call %s %s(%s)", blk.ToolCall.ID, blk.ToolCall.Name, blk.ToolCall.Arguments)
		case blk.Type == harness.BlockToolResult:
			r := blk.ToolResult
			fmt.Fprintf(&b, "result for %s (%s): ", r.CallID, r.Name)
			for _, c := range r.Content {
				b.WriteString(c.Text)
			}
		case blk.Type == harness.BlockImage:
			fmt.Fprintf(&b, "image %s", blk.Image.Digest)
		default:
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}

// aroundDifference cuts both strings to a window of about n runes around
// the first rune where they differ.
func aroundDifference(a, b string, n int) (string, string) {
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	start := max(0, i-n/3)
	cut := func(r []rune) string {
		s := start
		if s > len(r) {
			s = len(r)
		}
		e := min(len(r), s+n)
		out := string(r[s:e])
		if s > 0 {
			out = "…" + out
		}
		if e < len(r) {
			out += "…"
		}
		return out
	}
	return cut(ra), cut(rb)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
