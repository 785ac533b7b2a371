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

// Model replays the answers of a recorded session, one per model call, in
// order, so a test can drive the loop through a real session without a
// network or a key.
//
// Each recorded call carries the fingerprint of the request the model
// received. In strict mode, a live request that differs from the recorded
// one fails the call with a *harness.Error (harness.CodeReplayDrift)
// naming the call, the turn, the step and the part that drifted (system prompt, tool schemas, or which message of the
// history), instead of silently replaying answers to questions that were
// never asked.
type Model struct {
	info   model.Info
	strict bool
	events []session.Event
	calls  []recordedCall

	mu   sync.Mutex
	next int
}

type recordedCall struct {
	reqIndex int // index in events of the model_request
	req      *session.ModelRequest
	answer   *session.AssistantMessage
	turn     int
}

// Option configures a replay Model.
type Option func(*Model)

// WithStrict makes the replay fail when a live request drifts from the
// recording.
func WithStrict() Option { return func(m *Model) { m.strict = true } }

// WithInfo sets the model info the replay reports; by default the name of
// the recorded model and no declared modalities.
func WithInfo(info model.Info) Option { return func(m *Model) { m.info = info } }

// New returns a Model replaying tr. Calls whose answer was cancelled are
// skipped: a replay cannot reproduce a cancellation.
func New(tr *session.Transcript, opts ...Option) (*Model, error) {
	m := &Model{events: tr.Events}
	var pending *recordedCall
	turn := 0
	for i, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			turn++
		case *session.ModelRequest:
			pending = &recordedCall{reqIndex: i, req: p, turn: turn}
		case *session.AssistantMessage:
			if pending != nil && p.Finish != model.FinishAborted {
				pending.answer = p
				m.calls = append(m.calls, *pending)
			}
			pending = nil
		}
	}
	if len(m.calls) == 0 {
		return nil, fmt.Errorf("replay: session %s has no recorded model calls", tr.Header.ID)
	}
	m.info.Name = m.calls[0].req.Model
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Info implements model.Model.
func (m *Model) Info() model.Info { return m.info }

// Remaining returns how many recorded calls have not been replayed.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls) - m.next
}

// Stream implements model.Model.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.mu.Lock()
		i := m.next
		if i >= len(m.calls) {
			m.mu.Unlock()
			yield(model.Chunk{}, fmt.Errorf("replay: the recording has %d model calls; the live session asked for call %d", len(m.calls), i+1))
			return
		}
		m.next++
		m.mu.Unlock()
		rc := m.calls[i]
		if m.strict {
			if err := m.compare(i, rc, req); err != nil {
				yield(model.Chunk{}, err)
				return
			}
		}
		a := rc.answer
		r := Response{Usage: a.Usage, Finish: a.Finish}
		for _, b := range a.Content {
			switch b.Type {
			case harness.BlockReasoning:
				r.Reasoning += b.Text
			case harness.BlockText:
				r.Text += b.Text
			case harness.BlockToolCall:
				if b.ToolCall != nil {
					r.ToolCalls = append(r.ToolCalls, *b.ToolCall)
				}
			}
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
	recorded := session.BuildHistory(m.events[:rc.reqIndex]).Messages()
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
