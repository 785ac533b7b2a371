package agent

import (
	"sync"
	"unicode/utf8"

	"github.com/go-harness/harness/tools"
)

// maxPendingOutput bounds the output kept per call between two
// ToolCallProgress events; older output is dropped from the front.
const maxPendingOutput = 16 << 10

// progressHub carries the progress reports of one batch's running calls
// to the turn's goroutine, which yields them as events. A report never
// blocks: it merges into the call's pending piece (bounded) and wakes
// the turn with a non-blocking send.
type progressHub struct {
	mu      sync.Mutex
	pending map[int]*ToolCallProgress // by index in the batch
	order   []int
	wake    chan struct{}
	closed  bool
}

func newProgressHub() *progressHub {
	return &progressHub{pending: map[int]*ToolCallProgress{}, wake: make(chan struct{}, 1)}
}

// reporter returns the OnProgress of the call at index i of the batch.
func (h *progressHub) reporter(i, step int, id, name string) func(tools.Progress) {
	return func(p tools.Progress) {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return
		}
		ev := h.pending[i]
		if ev == nil {
			ev = &ToolCallProgress{Step: step, CallID: id, Name: name}
			h.pending[i] = ev
			h.order = append(h.order, i)
		}
		ev.Output += p.Output
		if n := len(ev.Output) - maxPendingOutput; n > 0 {
			for n < len(ev.Output) && !utf8.RuneStart(ev.Output[n]) {
				n++
			}
			ev.Dropped += int64(n)
			ev.Output = ev.Output[n:]
		}
		if p.Progress != 0 || p.Total != 0 {
			ev.Progress, ev.Total = p.Progress, p.Total
		}
		if p.Message != "" {
			ev.Message = p.Message
		}
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// take returns the pending events in the order their calls first
// reported, and starts over.
func (h *progressHub) take() []*ToolCallProgress {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*ToolCallProgress, 0, len(h.order))
	for _, i := range h.order {
		out = append(out, h.pending[i])
	}
	clear(h.pending)
	h.order = h.order[:0]
	return out
}

// close makes later reports no-ops (an abandoned call may still report).
func (h *progressHub) close() {
	h.mu.Lock()
	h.closed = true
	clear(h.pending)
	h.order = nil
	h.mu.Unlock()
}
