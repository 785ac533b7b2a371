package ui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/hooks"
)

// liveLines is how many of a running command's last lines a terminal
// shows, redrawn in place.
const liveLines = 5

// liveCall is what the view has shown of one running call's output.
type liveCall struct {
	id       string
	name     string
	partial  string   // the unfinished last line
	tail     []string // the last liveLines finished lines (terminal)
	appended int      // lines appended so far (piped)
	dropped  int64    // bytes the agent dropped because the view fell behind
}

// progress shows a running call's live report. On a terminal the live
// block above the spinner is redrawn in place (see drawLive); piped, each finished line is appended once, and the final
// card does not print them again. Callers hold mu.
func (h *human) progress(e *agent.ToolCallProgress) {
	if hookMessage(e.Message) {
		h.hookLine(e.Message)
		return
	}
	if e.Message != "" || e.Total > 0 {
		label := "running " + e.Name
		if e.Total > 0 {
			label += fmt.Sprintf(" (%g/%g)", e.Progress, e.Total)
		}
		if e.Message != "" {
			label += ": " + oneLine(e.Message)
		}
		h.wait(label)
	}
	if e.Output == "" && e.Dropped == 0 {
		return
	}
	if h.live == nil {
		h.live = map[string]*liveCall{}
	}
	lc := h.live[e.CallID]
	if lc == nil {
		lc = &liveCall{id: e.CallID, name: e.Name}
		h.live[e.CallID] = lc
	}
	h.endLine()
	var done []string
	if e.Dropped > 0 {
		lc.dropped += e.Dropped
		lc.partial = ""
		done = append(done, fmt.Sprintf("… %s skipped", byteSize(e.Dropped)))
	}
	text := strings.ReplaceAll(lc.partial+e.Output, "\r\n", "\n")
	parts := strings.Split(text, "\n")
	lc.partial = parts[len(parts)-1]
	done = append(done, parts[:len(parts)-1]...)
	for i, l := range done {
		// A line redrawn with carriage returns shows what it ended as.
		if k := strings.LastIndexByte(l, '\r'); k >= 0 {
			done[i] = l[k+1:]
		}
	}
	if !h.spin {
		h.appendLive(lc, done)
		return
	}
	lc.tail = append(lc.tail, done...)
	if n := len(lc.tail) - liveLines; n > 0 {
		lc.tail = append(lc.tail[:0], lc.tail[n:]...)
	}
	h.drawLive()
}

// appendLive prints finished lines of a running call below what came
// before (piped output). Callers hold mu.
func (h *human) appendLive(lc *liveCall, lines []string) {
	if len(lines) == 0 {
		return
	}
	if lc.appended == 0 || h.lastLive != lc.id {
		// Calls running in parallel take turns: each run of lines says
		// whose they are.
		if h.block == "stream" {
			h.write("\n")
		}
		h.block = "card"
		h.line(h.st.paint(sgrDim, "⋯ "+lc.name+" output:"))
	}
	h.lastLive = lc.id
	for _, l := range lines {
		h.line("  " + h.st.paint(sgrDim, "│ "+cut(expandTabs(l), h.width-6)))
	}
	lc.appended += len(lines)
}

// drawLive redraws the live block in place: it erases the block drawn
// before and draws it again. One running call with output shows its last
// lines, the unfinished one included; several show one line each, their
// name and latest line, in the order they started. Callers hold mu.
func (h *human) drawLive() {
	h.eraseLive()
	lines := h.liveBlock()
	if len(lines) == 0 {
		return
	}
	if h.block == "stream" {
		h.write("\n")
		h.block = "card"
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight("  "+h.st.paint(sgrDim, "│ "+cut(expandTabs(l), h.width-6)), " \t") + "\n")
	}
	h.write(b.String())
	h.liveDrawn = len(lines)
}

// liveBlock is the text of the live block, at most liveLines lines.
// Callers hold mu.
func (h *human) liveBlock() []string {
	calls := h.liveCalls()
	if len(calls) == 1 {
		lc := calls[0]
		lines := append([]string(nil), lc.tail...)
		if lc.partial != "" {
			lines = append(lines, lc.partial)
		}
		if n := len(lines) - liveLines; n > 0 {
			lines = lines[n:]
		}
		for i, l := range lines {
			lines[i] = lastRedraw(l)
		}
		return lines
	}
	var lines []string
	for i, lc := range calls {
		if len(lines) == liveLines-1 && len(calls)-i > 1 {
			lines = append(lines, fmt.Sprintf("… %d more running", len(calls)-i))
			break
		}
		last := lc.partial
		if last == "" && len(lc.tail) > 0 {
			last = lc.tail[len(lc.tail)-1]
		}
		line := lc.name
		if last = lastRedraw(last); last != "" {
			line += ": " + last
		}
		lines = append(lines, line)
	}
	return lines
}

// liveCalls returns the running calls with live output, in the order
// they started (calls the view saw no start of last, by id). Callers
// hold mu.
func (h *human) liveCalls() []*liveCall {
	out := make([]*liveCall, 0, len(h.live))
	seen := map[string]bool{}
	for _, c := range h.pending {
		if lc := h.live[c.ID]; lc != nil && !seen[c.ID] {
			out = append(out, lc)
			seen[c.ID] = true
		}
	}
	var rest []string
	for id := range h.live {
		if !seen[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	for _, id := range rest {
		out = append(out, h.live[id])
	}
	return out
}

// lastRedraw is what a line redrawn with carriage returns ended as.
func lastRedraw(l string) string {
	if k := strings.LastIndexByte(l, '\r'); k >= 0 {
		return l[k+1:]
	}
	return l
}

// eraseLive removes a drawn live block from the terminal; the cursor
// ends where the block began. Callers hold mu.
func (h *human) eraseLive() {
	if h.liveDrawn == 0 {
		return
	}
	h.clearSpinner()
	fmt.Fprintf(h.w, "\x1b[%dA\r\x1b[J", h.liveDrawn)
	h.liveDrawn = 0
	h.col0 = true
}

// settleLive ends the live view of a finished call, before its card:
// on a terminal the block is erased, since the card shows the output's
// last lines; piped, an unfinished last line is appended, and the number
// of lines appended is returned so that the card does not repeat them.
// Callers hold mu.
func (h *human) settleLive(id string) int {
	lc := h.live[id]
	if lc == nil {
		return 0
	}
	delete(h.live, id)
	if h.spin {
		// The card follows; the block of the calls still running is
		// drawn again after it (redrawLive).
		h.eraseLive()
		return 0
	}
	if lc.partial != "" {
		h.appendLive(lc, []string{lc.partial})
	}
	return lc.appended
}

// redrawLive draws the live block again after a card, for the calls
// still running (a terminal). Callers hold mu.
func (h *human) redrawLive() {
	if h.spin && len(h.live) > 0 {
		h.drawLive()
	}
}

// hookMessage reports whether a progress message is a command hook's
// systemMessage, which the hooks package reports as "<Event> hook: text".
func hookMessage(m string) bool {
	ev, _, ok := strings.Cut(m, " hook: ")
	return ok && slices.Contains(hooks.Events(), hooks.Event(ev))
}

// hookLine shows a hook's message for the user as a line of its own,
// above the live block. Callers hold mu.
func (h *human) hookLine(m string) {
	live := h.spin && h.liveDrawn > 0
	if live {
		h.eraseLive()
	}
	h.endLine()
	if h.block == "stream" {
		h.write("\n")
	}
	h.block = "card"
	h.line(h.st.paint(sgrYellow, "⚑ "+cut(oneLine(m), h.width-4)))
	if live {
		h.drawLive()
	}
}
