package ui

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-harness/harness"
)

// The status area is what a terminal shows below a turn's output while
// the turn runs, redrawn in place: the model's plan (the todo tool), and
// under it the spinner, or the line the user is typing to steer the
// turn. Anything the view writes erases it first; the spinner's tick
// draws it again.

// Draft is the line the user types while a turn runs: Enter steers it
// into the turn, Tab queues it as the next turn.
type Draft struct {
	Text   string
	Cursor int // in runes
}

// DraftHint says what the keys do with a line typed during a turn.
const DraftHint = "Enter steers · Tab queues"

// draftPrompt starts the line typed during a turn.
const draftPrompt = "» "

// planRoom is how many lines the status area gives the plan, its head
// included; the plan printed at the end of a turn gets planFullRoom.
const (
	planRoom     = 7
	planFullRoom = 13
)

func (h *human) Draft(d *Draft) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d != nil {
		c := *d
		d = &c
	}
	h.draft = d
	h.drawStatus()
}

// drawStatus draws the status area again, when the cursor is at the
// start of a line and nothing holds it. Callers hold mu.
func (h *human) drawStatus() {
	if !h.spin || h.held || !h.col0 {
		return
	}
	typing := h.draft != nil && h.draft.Text != ""
	if h.waitLabel == "" && !typing {
		h.clearSpinner()
		return
	}
	var b strings.Builder
	lines := 1
	if h.pinPlan && len(h.plan) > 0 {
		for _, l := range h.planLines(h.plan, planRoom) {
			b.WriteString(l + "\n")
			lines++
		}
	}
	if typing {
		b.WriteString(h.draftLine())
	} else {
		elapsed := h.now().Sub(h.waitSince)
		label := cut(h.waitLabel, min(48, max(10, h.width-16)))
		frame := spinnerFrames[h.frame%len(spinnerFrames)]
		line := h.st.paint(sgrCyan, frame) + " " + label + " " + h.st.paint(sgrDim, seconds(elapsed))
		width := utf8.RuneCountInString(frame+" "+label+" "+seconds(elapsed)) + len(" · "+DraftHint)
		if h.draft != nil && width < h.width {
			line += h.st.paint(sgrDim, " · "+DraftHint)
		}
		b.WriteString(line)
	}
	h.clearSpinner()
	io.WriteString(h.w, b.String())
	h.drawn = lines
}

// draftLine renders the line being typed, scrolled sideways around the
// cursor like the prompt, with what its keys do after it when that
// fits. Callers hold mu.
func (h *human) draftLine() string {
	hint := "  (" + DraftHint + ")"
	room := h.width
	if utf8.RuneCountInString(h.draft.Text)+len(draftPrompt)+utf8.RuneCountInString(hint)+1 < h.width {
		room -= utf8.RuneCountInString(hint)
	} else {
		hint = ""
	}
	ed := &lineEditor{buf: []rune(h.draft.Text), prompt: h.st.paint(sgrBold+";"+sgrBlue, draftPrompt), promptWidth: utf8.RuneCountInString(draftPrompt)}
	ed.pos = max(0, min(h.draft.Cursor, len(ed.buf)))
	line, back := ed.renderParts(room)
	if hint != "" {
		line += h.st.paint(sgrDim, hint)
		back += utf8.RuneCountInString(hint)
	}
	line += "\x1b[K"
	if back > 0 {
		line += "\x1b[" + itoa(back) + "D"
	}
	return line
}

// planLines are the plan as a compact checklist: a head with the count
// done, then one line an item, marked by its status, in at most room
// lines. When it does not fit, the leading done items become one line,
// and the last items one "more" line. Callers hold mu.
func (h *human) planLines(items []harness.TodoItem, room int) []string {
	done := 0
	for _, it := range items {
		if it.Status == harness.TodoDone {
			done++
		}
	}
	head := h.st.paint(sgrBold, "Plan") + h.st.paint(sgrDim, fmt.Sprintf(" · %d/%d done", done, len(items)))
	out := []string{head}
	room = max(room-1, 2)
	start := 0
	if len(items) > room {
		for start < len(items) && items[start].Status == harness.TodoDone {
			start++
		}
		if start > 0 {
			out = append(out, "  "+h.st.paint(sgrDim, "✓ "+plural(start, "item done", "items done")))
			room--
		}
	}
	rest := items[start:]
	for i, it := range rest {
		if len(rest) > room && i == room-1 {
			out = append(out, "  "+h.st.paint(sgrDim, fmt.Sprintf("… %d more", len(rest)-i)))
			break
		}
		out = append(out, "  "+h.planItem(it))
	}
	return out
}

// planItem is one item of the plan, marked by its status. Callers hold
// mu.
func (h *human) planItem(it harness.TodoItem) string {
	text := cut(oneLine(it.Content), h.width-6)
	switch it.Status {
	case harness.TodoDone:
		return h.st.paint(sgrGreen, "✓") + " " + h.st.paint(sgrDim, text)
	case harness.TodoInProgress:
		return h.st.paint(sgrYellow, "▸") + " " + h.st.paint(sgrBold, text)
	}
	return "○ " + text
}

// setPlan takes the model's new plan. On a terminal it is pinned in the
// status area and printed whole when the turn ends. Callers hold mu.
func (h *human) setPlan(items []harness.TodoItem) {
	h.plan = append(h.plan[:0:0], items...)
	if h.spin {
		h.pinPlan = true
		h.drawStatus()
	}
}

// printPlan prints the plan pinned during the turn, once it ends, so the
// scrollback keeps it. Callers hold mu.
func (h *human) printPlan() {
	if !h.pinPlan || len(h.plan) == 0 {
		return
	}
	h.pinPlan = false
	h.endLine()
	if h.block != "" {
		h.write("\n")
	}
	for _, l := range h.planLines(h.plan, planFullRoom) {
		h.line(l)
	}
	h.block = "card"
}

// todoCard is the card of a todo call: piped, the plan under the head;
// on a terminal the plan is in the status area, so the head alone, with
// what is being done. Callers hold mu.
func (h *human) todoCard(items []harness.TodoItem) {
	if !h.spin {
		for _, l := range h.planLines(items, planFullRoom)[1:] {
			h.line(l)
		}
		return
	}
	for _, it := range items {
		if it.Status == harness.TodoInProgress {
			h.line("  " + h.st.paint(sgrDim, "now: "+cut(oneLine(it.Content), h.width-10)))
			return
		}
	}
}

// todoTitle is the head of a todo call's card: how much of the plan is
// done.
func todoTitle(items []harness.TodoItem) string {
	done := 0
	for _, it := range items {
		if it.Status == harness.TodoDone {
			done++
		}
	}
	return fmt.Sprintf("Plan · %d/%d done", done, len(items))
}

// questionsCard is the card of an ask_user call: each question and the
// answer it got. Callers hold mu.
func (h *human) questionsCard(qs []harness.Question, answers []string) {
	for i, q := range qs {
		a := "(no answer)"
		if i < len(answers) && strings.TrimSpace(answers[i]) != "" {
			a = oneLine(answers[i])
		}
		h.line("  " + h.st.paint(sgrDim, cut(oneLine(q.Question), h.width/2)+" → ") + cut(a, h.width/2-4))
	}
}
