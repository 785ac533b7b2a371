package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// ReasoningMark starts each line of reasoning when there is no colour to
// dim it.
const ReasoningMark = "┆ "

// spinnerFrames are drawn one per tick while the model thinks or a tool
// runs.
var spinnerFrames = [...]string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// human renders a session for people: streamed text, dimmed reasoning,
// a card per tool call chosen by its render intent, a footer per turn,
// and on a terminal a spinner with the elapsed time while waiting.
type human struct {
	mu        sync.Mutex
	w         io.Writer
	st        style
	spin      bool // draw a spinner (a terminal only)
	held      bool // the spinner is held while a line is edited
	reasoning bool // show reasoning, dimmed
	root      string
	width     int
	diffNote  func(*harness.ToolResult) string
	noWrap    bool
	spillDir  string
	now       func() time.Time

	col0     bool   // the cursor is at the start of a line
	block    string // what was shown last: "stream" or "card"
	mode     string // "", "text" or "reasoning": what is streaming
	streamed bool   // the current step streamed text or reasoning

	waitLabel string
	waitSince time.Time
	drawn     int // lines of the status area drawn (the spinner's line and the plan above it)
	frame     int
	pending   []harness.ToolCall
	turnStart time.Time

	denials   map[string]string    // why a call was denied, by call id, for its card
	live      map[string]*liveCall // running calls' output shown so far, by call id
	liveDrawn int                  // lines of live output drawn above the cursor (a terminal)
	shownLive int                  // lines of the card's call already appended (piped)
	lastLive  string               // the call whose output was appended last (piped)

	draft   *Draft             // the line typed during the turn; nil when the console does not steer
	plan    []harness.TodoItem // the model's latest plan
	pinPlan bool               // the plan changed this turn: shown in the status area (a terminal)

	quit chan struct{}
	done chan struct{}
}

// HumanOptions configure NewHuman's view.
type HumanOptions struct {
	Color     bool   // paint with ANSI colours
	Spinner   bool   // draw a spinner and redraw live output (a terminal)
	Reasoning bool   // show the model's reasoning
	Root      string // the workspace, whose paths are shown relative
	Width     int    // columns; 100 when zero
	// NoWrap keeps long lines of notices and errors whole (output that
	// is not a terminal and has no $COLUMNS: a log, a pipe).
	NoWrap bool
	// SpillDir is the directory of spill:// outputs ("" unknown).
	SpillDir string
	// DiffNote returns the note shown under a change's diff, or "".
	DiffNote func(*harness.ToolResult) string
}

// NewHuman returns the view for people: streamed text, dimmed reasoning,
// a card per tool call chosen by its render intent, a footer per turn,
// and, with Spinner, a spinner with the elapsed time while waiting.
func NewHuman(w io.Writer, o HumanOptions) View { return newHuman(w, o) }

func newHuman(w io.Writer, o HumanOptions) *human {
	h := &human{w: w, st: style(o.Color), spin: o.Spinner, reasoning: o.Reasoning,
		root: strings.TrimSuffix(o.Root, "/"), width: o.Width, diffNote: o.DiffNote, noWrap: o.NoWrap, spillDir: o.SpillDir, now: time.Now, col0: true}
	if h.width <= 0 {
		h.width = 100
	}
	if h.spin {
		h.quit, h.done = make(chan struct{}), make(chan struct{})
		go h.spinLoop()
	}
	return h
}

func (h *human) spinLoop() {
	defer close(h.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			h.tick()
		case <-h.quit:
			return
		}
	}
}

// tick draws the next spinner frame, if the view is waiting and the
// cursor is at the start of a line.
func (h *human) tick() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.spin || h.held || !h.col0 || h.waitLabel == "" && (h.draft == nil || h.draft.Text == "") {
		return
	}
	h.drawStatus()
	h.frame++
}

// clearSpinner erases a drawn status area: the spinner's line, or the
// line being typed, and the plan above it. Callers hold mu.
func (h *human) clearSpinner() {
	switch {
	case h.drawn == 1:
		io.WriteString(h.w, "\r\x1b[K")
	case h.drawn > 1:
		fmt.Fprintf(h.w, "\x1b[%dA\r\x1b[J", h.drawn-1)
	}
	h.drawn = 0
}

// wait sets what the spinner says. Callers hold mu.
func (h *human) wait(label string) {
	if label != h.waitLabel {
		h.waitLabel, h.waitSince = label, h.now()
	}
}

// write prints s, keeping track of the cursor. Callers hold mu.
func (h *human) write(s string) {
	if s == "" {
		return
	}
	h.clearSpinner()
	io.WriteString(h.w, s)
	h.liveDrawn = 0 // drawLive sets it again after its own write
	h.col0 = strings.HasSuffix(s, "\n")
}

// line prints s on a line of its own, without trailing blanks. Callers
// hold mu.
func (h *human) line(s string) {
	h.endLine()
	h.write(strings.TrimRight(s, " \t") + "\n")
}

// endLine ends a line left open by streamed text. Callers hold mu.
func (h *human) endLine() {
	if !h.col0 {
		h.write("\n")
	}
	h.mode = ""
}

func (h *human) Banner(b BannerInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// One line at any width: the base URL goes first, then the
	// workspace is shortened from the left.
	room := h.width - 1
	url, ws := "", b.Workspace
	if b.BaseURL != "" {
		url = " (" + b.BaseURL + ")"
	}
	fixed := utf8.RuneCountInString("coder ·  · " + b.Model)
	if fixed+utf8.RuneCountInString(url+ws) > room {
		url = ""
	}
	if n := utf8.RuneCountInString(ws); fixed+n > room {
		ws = cutLeft(ws, max(room-fixed, 8))
	}
	h.line(h.st.paint(sgrBold, "coder") + " · " + h.st.paint(sgrBold, b.Model) + h.st.paint(sgrDim, url) + " · " + ws)
	state := "new"
	if b.Resumed {
		state = fmt.Sprintf("resumed, %d messages", b.Messages)
	}
	where := ""
	if rel := h.rel(b.Cwd); rel != "." && rel != "" {
		where = " in " + rel
	}
	h.line(h.st.paint(sgrDim, "session "+b.SessionID+" ("+state+")"+where))
	for _, w := range b.Warnings {
		h.line(h.st.paint(sgrYellow, "! "+w.String()))
	}
}

func (h *human) BeginTurn(prompt string, echo bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endLine()
	if echo {
		h.write("\n" + h.st.paint(sgrBold+";"+sgrBlue, "›") + " " + h.st.paint(sgrBold, prompt) + "\n")
	}
	h.write("\n")
	h.turnStart = h.now()
	h.block = ""
	h.pending = h.pending[:0]
	h.streamed = false
	h.pinPlan = false
	h.wait("thinking")
}

func (h *human) Notice(kind NoticeKind, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch kind {
	case NoticePrompt:
		h.endLine()
		h.write(h.st.paint(sgrBold+";"+sgrBlue, text))
		h.col0 = true // the user's Enter ends the line
		return
	case NoticeWarn:
		text = h.paintLines(sgrYellow, h.wrap(text))
	case NoticeError:
		text = h.paintLines(sgrRed, h.wrap(text))
	default:
		text = h.paintLines(sgrDim, h.wrap(text))
	}
	// A live block drawn on a terminal stays below the notice, redrawn,
	// not left behind above it.
	live := h.spin && h.liveDrawn > 0
	if live {
		h.eraseLive()
	}
	h.line(text)
	if live {
		h.drawLive()
	}
}

func (h *human) Hold(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if on {
		h.clearSpinner()
	}
	h.held = on
}

func (h *human) SetWidth(w int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w > 0 {
		h.width = w
	}
}

func (h *human) Close() {
	if h.spin {
		close(h.quit)
		<-h.done
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wait("")
	h.clearSpinner()
	h.endLine()
}

func (h *human) Event(ev agent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch e := ev.(type) {
	case *agent.TextDelta:
		if h.mode != "text" {
			h.endLine()
			if h.streamed || h.block == "card" {
				h.write("\n")
			}
			h.mode, h.block = "text", "stream"
		}
		h.streamed = true
		h.wait("")
		h.write(e.Text)
	case *agent.ReasoningDelta:
		if !h.reasoning {
			h.wait("thinking")
			return
		}
		if h.mode != "reasoning" {
			h.endLine()
			if h.block == "card" {
				h.write("\n")
			}
			h.mode, h.block = "reasoning", "stream"
		}
		h.streamed = true
		h.wait("")
		if h.st {
			h.write(h.st.paint(sgrDim, e.Text))
			h.col0 = strings.HasSuffix(e.Text, "\n") // past the colour's reset
			return
		}
		// Without colour, every line of reasoning starts with a mark, so
		// it can be told from the answer (and filtered out).
		var b strings.Builder
		for i, l := range strings.SplitAfter(e.Text, "\n") {
			if l == "" {
				continue
			}
			if i > 0 || h.col0 {
				b.WriteString(ReasoningMark)
			}
			b.WriteString(l)
		}
		h.write(b.String())
	case *agent.SubAgentEvent:
		h.subEvent(e)
	case *agent.ToolCallStart:
		h.endLine()
		h.pending = append(h.pending, e.Call)
		h.waitForTools()
	case *agent.ToolCallProgress:
		h.progress(e)
	case *agent.PermissionDecision:
		if e.Outcome == permission.Deny {
			if h.denials == nil {
				h.denials = map[string]string{}
			}
			h.denials[e.Call.ID] = denialText(e)
		}
	case *agent.ToolCallEnd:
		h.endLine()
		h.shownLive = h.settleLive(e.Call.ID)
		for i, c := range h.pending {
			if c.ID == e.Call.ID {
				h.pending = append(h.pending[:i], h.pending[i+1:]...)
				break
			}
		}
		h.card(e)
		h.shownLive = 0
		h.redrawLive()
		h.waitForTools()
	case *agent.Retry:
		h.endLine()
		msg := fmt.Sprintf("↻ %s", ErrorText(e.Err))
		if e.Delay > 0 {
			msg += fmt.Sprintf("; retrying in %s (attempt %d)", seconds(e.Delay), e.Attempt)
		} else {
			msg += fmt.Sprintf("; retrying (attempt %d)", e.Attempt)
		}
		if h.streamed {
			msg += "; the answer above starts over"
		}
		h.line(h.st.paint(sgrYellow, msg))
		h.streamed = false
		h.wait("thinking")
	case *agent.ReminderAdded:
		h.endLine()
		first, _, _ := strings.Cut(strings.TrimSpace(e.Text), "\n")
		h.line(h.st.paint(sgrYellow, "⚑ "+e.Source+": ") + h.st.paint(sgrDim, cut(first, h.width-len(e.Source)-6)))
	case *agent.ContextPruned:
		h.endLine()
		h.line(h.st.paint(sgrMagenta, fmt.Sprintf("⌁ context: %s replaced by placeholders (about %s tokens before)",
			plural(len(e.Calls), "superseded tool result", "superseded tool results"), Count(e.EstimatedTokens))))
	case *agent.ContextCompacted:
		h.endLine()
		h.line(h.st.paint(sgrMagenta, fmt.Sprintf("⌁ context: %s summarized (%s → %s tokens)",
			plural(e.Messages, "earlier message", "earlier messages"), Count(e.SourceTokens), Count(e.SummaryTokens))))
	case *agent.StepEnd:
		h.streamed = false
		h.wait("thinking")
	case *agent.ModelUsage:
		// Summed in the turn's footer.
	case *agent.TodoUpdated:
		h.setPlan(e.Items)
	case *agent.SteerDelivered:
		if e.Queued {
			h.endLine()
			h.line(h.paintLines(sgrYellow, h.wrap("» the turn ended before reading “"+cut(oneLine(e.Text), 60)+"”: it is queued and runs next")))
		}
	case *agent.TurnEnd:
		h.wait("")
		h.endLine()
		h.printPlan()
		h.footer(e)
	}
}

// waitForTools points the spinner at the calls still running. Callers
// hold mu.
func (h *human) waitForTools() {
	switch len(h.pending) {
	case 0:
		h.wait("thinking")
	case 1:
		label := "running " + h.pending[0].Name
		if arg := firstStringArg(h.pending[0].Arguments); arg != "" {
			label += ": " + h.relText(arg)
		}
		h.wait(label)
	default:
		names := make([]string, len(h.pending))
		for i, c := range h.pending {
			names[i] = c.Name
		}
		h.wait("running " + strings.Join(names, ", "))
	}
}

// footer sums a turn up: how it ended, steps, time, tokens and cost.
func (h *human) footer(e *agent.TurnEnd) {
	parts := []string{e.Reason, plural(e.Steps, "step", "steps"), seconds(h.now().Sub(h.turnStart))}
	if u := e.Usage; u.InputTokens > 0 || u.OutputTokens > 0 {
		in := Count(u.InputTokens) + " in"
		if u.CacheHitTokens > 0 && u.InputTokens > 0 {
			in += fmt.Sprintf(" (%s cached, %d%%)", Count(u.CacheHitTokens), u.CacheHitTokens*100/u.InputTokens)
		}
		out := Count(u.OutputTokens) + " out"
		if u.ReasoningTokens > 0 {
			out += fmt.Sprintf(" (%s reasoning)", Count(u.ReasoningTokens))
		}
		parts = append(parts, in, out)
	}
	if e.Cost > 0 {
		parts = append(parts, money(e.Cost))
	}
	code := sgrDim
	switch e.Reason {
	case session.ReasonError:
		code = sgrRed
	case session.ReasonCancelled, session.ReasonStepLimit:
		code = sgrYellow
	}
	h.write("\n" + h.st.paint(code, cut("── "+strings.Join(parts, " · "), h.width-1)) + "\n")
}

// denialText says once why a call was denied, for its card: the reason,
// or who denied it, and the user's words when they gave any.
func denialText(d *agent.PermissionDecision) string {
	why := d.Reason
	if why == "" {
		switch {
		case d.Rule != "":
			why = "denied by the rule " + d.Rule
		case d.By == "user":
			why = "rejected by the user"
		default:
			why = "denied by " + d.By
		}
	}
	if d.Feedback != "" {
		why += " · feedback: " + d.Feedback
	}
	return why
}

// wrap wraps text on words to the view's width, unless NoWrap.
func (h *human) wrap(text string) string {
	if h.noWrap {
		return text
	}
	return wrap(text, h.width-1)
}

// paintLines paints each line of text on its own, so that every line of
// a wrapped notice starts and ends its colour.
func (h *human) paintLines(code, text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = h.st.paint(code, l)
	}
	return strings.Join(lines, "\n")
}
