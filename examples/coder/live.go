package main

import (
	"fmt"
	"strings"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/internal/units"
)

// liveLines is how many of a running command's last lines a terminal
// shows, redrawn in place.
const liveLines = 5

// liveCall is what the view has shown of one running call's output.
type liveCall struct {
	name     string
	partial  string   // the unfinished last line
	tail     []string // the last liveLines finished lines (terminal)
	appended int      // lines appended so far (piped)
	dropped  int64    // bytes the agent dropped because the view fell behind
}

// progress shows a running call's live report. On a terminal the last
// lines of the call that reported last are redrawn in place above the
// spinner; piped, each finished line is appended once, and the final
// card does not print them again. Callers hold mu.
func (h *human) progress(e *agent.ToolCallProgress) {
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
		lc = &liveCall{name: e.Name}
		h.live[e.CallID] = lc
	}
	h.endLine()
	var done []string
	if e.Dropped > 0 {
		lc.dropped += e.Dropped
		lc.partial = ""
		done = append(done, fmt.Sprintf("… %s skipped", units.Bytes(e.Dropped)))
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
	h.drawLive(lc)
}

// appendLive prints finished lines of a running call below what came
// before (piped output). Callers hold mu.
func (h *human) appendLive(lc *liveCall, lines []string) {
	if len(lines) == 0 {
		return
	}
	if lc.appended == 0 {
		if h.block == "stream" {
			h.write("\n")
		}
		h.block = "card"
		h.line(h.st.paint(sgrDim, "⋯ "+lc.name+" output:"))
	}
	for _, l := range lines {
		h.line("  " + h.st.paint(sgrDim, "│ "+cut(expandTabs(l), h.width-6)))
	}
	lc.appended += len(lines)
}

// drawLive redraws the live block of lc in place: it erases the block
// drawn before and draws the last lines again, the unfinished one
// included. Callers hold mu.
func (h *human) drawLive(lc *liveCall) {
	h.eraseLive()
	lines := append([]string(nil), lc.tail...)
	if lc.partial != "" {
		lines = append(lines, lc.partial)
	}
	if n := len(lines) - liveLines; n > 0 {
		lines = lines[n:]
	}
	if len(lines) == 0 {
		return
	}
	if h.block == "stream" {
		h.write("\n")
		h.block = "card"
	}
	var b strings.Builder
	for _, l := range lines {
		if k := strings.LastIndexByte(l, '\r'); k >= 0 {
			l = l[k+1:]
		}
		b.WriteString(strings.TrimRight("  "+h.st.paint(sgrDim, "│ "+cut(expandTabs(l), h.width-6)), " \t") + "\n")
	}
	h.write(b.String())
	h.liveDrawn = len(lines)
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
		h.eraseLive()
		return 0
	}
	if lc.partial != "" {
		h.appendLive(lc, []string{lc.partial})
	}
	return lc.appended
}
