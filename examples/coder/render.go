package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/session"
)

// view shows a session to the user: either rendered for people (human)
// or as JSON lines for scripts (jsonView).
type view interface {
	// banner introduces the session.
	banner(b bannerInfo)
	// beginTurn is called before a turn starts; prompt is echoed when
	// the user did not type it.
	beginTurn(prompt string, echo bool)
	// event shows one event of a turn.
	event(ev agent.Event)
	// notice shows a short message from the program itself.
	notice(kind noticeKind, text string)
	// close stops the spinner and ends the last line.
	close()
	// setWidth says the terminal is now width columns wide.
	setWidth(width int)
	// hold stops (true) or resumes (false) the spinner while the program
	// edits a line of its own on the terminal, such as an answer to an
	// approval question.
	hold(on bool)
}

// bannerInfo is what the program says about a session when it starts.
type bannerInfo struct {
	Model     string
	BaseURL   string
	Workspace string
	SessionID string
	Cwd       string
	Resumed   bool
	Messages  int
	Warnings  []session.Warning
}

type noticeKind int

const (
	noticeInfo noticeKind = iota
	noticeWarn
	noticeError
	// noticePrompt asks for input: the text is written without a line
	// end, and the line the user types ends it.
	noticePrompt
)

// colorEnabled decides whether output to a terminal gets colours:
// never when the output is not a terminal, when NO_COLOR is set to
// anything, or when TERM says the terminal is dumb.
func colorEnabled(tty bool, getenv func(string) string) bool {
	return tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// isTerminal reports whether f is a character device, which is what a
// terminal looks like without asking the terminal itself.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok || file == nil {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// style paints text with ANSI SGR codes, or leaves it alone.
type style bool

const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrBlue    = "34"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

func (s style) paint(code, text string) string {
	if !s || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Card limits: how much of a result a card shows.
const (
	cardDiffLines     = 60
	cardTerminalLines = 8
	cardGenericLines  = 4
	cardErrorLines    = 3
	cardLocations     = 5
)

// reasoningMark starts each line of reasoning when there is no colour to
// dim it.
const reasoningMark = "┆ "

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
	now       func() time.Time

	col0     bool   // the cursor is at the start of a line
	block    string // what was shown last: "stream" or "card"
	mode     string // "", "text" or "reasoning": what is streaming
	streamed bool   // the current step streamed text or reasoning

	waitLabel string
	waitSince time.Time
	drawn     bool
	frame     int
	pending   []harness.ToolCall
	turnStart time.Time

	live      map[string]*liveCall // running calls' output shown so far, by call id
	liveDrawn int                  // lines of live output drawn above the cursor (a terminal)
	shownLive int                  // lines of the card's call already appended (piped)
	lastLive  string               // the call whose output was appended last (piped)

	quit chan struct{}
	done chan struct{}
}

// humanOptions configure a human view.
type humanOptions struct {
	Color     bool
	Spinner   bool
	Reasoning bool
	Root      string
	Width     int
}

func newHuman(w io.Writer, o humanOptions) *human {
	h := &human{w: w, st: style(o.Color), spin: o.Spinner, reasoning: o.Reasoning,
		root: strings.TrimSuffix(o.Root, "/"), width: o.Width, now: time.Now, col0: true}
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
	if !h.spin || h.held || h.waitLabel == "" || !h.col0 {
		return
	}
	elapsed := h.now().Sub(h.waitSince)
	label := cut(h.waitLabel, min(48, max(10, h.width-16)))
	frame := spinnerFrames[h.frame%len(spinnerFrames)]
	h.frame++
	fmt.Fprintf(h.w, "\r\x1b[K%s %s %s", h.st.paint(sgrCyan, frame), label, h.st.paint(sgrDim, seconds(elapsed)))
	h.drawn = true
}

// clearSpinner erases a drawn spinner line. Callers hold mu.
func (h *human) clearSpinner() {
	if h.drawn {
		io.WriteString(h.w, "\r\x1b[K")
		h.drawn = false
	}
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

func (h *human) banner(b bannerInfo) {
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

func (h *human) beginTurn(prompt string, echo bool) {
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
	h.wait("thinking")
}

func (h *human) notice(kind noticeKind, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch kind {
	case noticePrompt:
		h.endLine()
		h.write(h.st.paint(sgrBold+";"+sgrBlue, text))
		h.col0 = true // the user's Enter ends the line
		return
	case noticeWarn:
		text = h.st.paint(sgrYellow, text)
	case noticeError:
		text = h.st.paint(sgrRed, text)
	default:
		text = h.st.paint(sgrDim, text)
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

func (h *human) hold(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if on {
		h.clearSpinner()
	}
	h.held = on
}

func (h *human) setWidth(w int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w > 0 {
		h.width = w
	}
}

func (h *human) close() {
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

func (h *human) event(ev agent.Event) {
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
				b.WriteString(reasoningMark)
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
		msg := fmt.Sprintf("↻ %s", errorText(e.Err))
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
			units.Plural(len(e.Calls), "superseded tool result", "superseded tool results"), count(e.EstimatedTokens))))
	case *agent.ContextCompacted:
		h.endLine()
		h.line(h.st.paint(sgrMagenta, fmt.Sprintf("⌁ context: %s summarized (%s → %s tokens)",
			units.Plural(e.Messages, "earlier message", "earlier messages"), count(e.SourceTokens), count(e.SummaryTokens))))
	case *agent.StepEnd:
		h.streamed = false
		h.wait("thinking")
	case *agent.ModelUsage:
		// Summed in the turn's footer.
	case *agent.TurnEnd:
		h.wait("")
		h.endLine()
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
	parts := []string{e.Reason, units.Plural(e.Steps, "step", "steps"), seconds(h.now().Sub(h.turnStart))}
	if u := e.Usage; u.InputTokens > 0 || u.OutputTokens > 0 {
		in := count(u.InputTokens) + " in"
		if u.CacheHitTokens > 0 && u.InputTokens > 0 {
			in += fmt.Sprintf(" (%s cached, %d%%)", count(u.CacheHitTokens), u.CacheHitTokens*100/u.InputTokens)
		}
		out := count(u.OutputTokens) + " out"
		if u.ReasoningTokens > 0 {
			out += fmt.Sprintf(" (%s reasoning)", count(u.ReasoningTokens))
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

// card shows a finished call, by its render intent: never by tool name.
func (h *human) card(e *agent.ToolCallEnd) {
	r := e.Result
	if r == nil {
		r = &harness.ToolResult{}
	}
	rd := r.Render
	if rd == nil {
		rd = &harness.Render{Kind: harness.RenderGeneric}
	}
	title := h.relText(rd.Title)
	if title == "" {
		title = strings.TrimSpace(e.Call.Name + " " + h.relText(firstStringArg(e.Call.Arguments)))
	}
	var term *harness.Terminal
	if rd.Kind == harness.RenderTerminal && rd.Terminal != nil {
		term = rd.Terminal
		if cmd := commandLine(term.Command); title == "" || strings.HasPrefix(cmd, strings.TrimSuffix(title, "...")) {
			// The title only repeats the command: show the command.
			title, term = "$ "+cmd+h.where(term.Cwd), &harness.Terminal{Output: term.Output, ExitCode: term.ExitCode, Status: term.Status}
		}
	}
	if h.block == "stream" {
		h.write("\n")
	}
	h.block = "card"
	mark, markCode := "●", sgrGreen
	if r.IsError {
		mark, markCode = "✗", sgrRed
	}
	head := h.st.paint(markCode, mark) + " " + h.st.paint(sgrBold, cut(title, h.width-20))
	var extra []string
	if rd.Kind == harness.RenderDiff && rd.Diff != nil {
		extra = append(extra, h.st.paint(sgrGreen, "+"+strconv.Itoa(rd.Diff.Added))+" "+h.st.paint(sgrRed, "-"+strconv.Itoa(rd.Diff.Removed)))
	}
	if r.IsError && r.Code != "" {
		extra = append(extra, h.st.paint(sgrRed, string(r.Code)))
	}
	if e.Duration >= 500*time.Millisecond {
		extra = append(extra, h.st.paint(sgrDim, seconds(e.Duration)))
	}
	if len(extra) > 0 {
		head += "  " + strings.Join(extra, " · ")
	}
	h.line(head)

	switch {
	case rd.Kind == harness.RenderDiff && rd.Diff != nil:
		h.diffCard(rd.Diff)
	case term != nil:
		h.terminalCard(term)
	case rd.Kind == harness.RenderLocations && len(rd.Locations) > 0:
		h.locationsCard(rd.Locations)
	default:
		text := rd.Text
		if text == "" || r.IsError {
			text = r.Text()
		}
		limit, code := cardGenericLines, sgrDim
		if r.IsError {
			limit, code = cardErrorLines, sgrRed
		}
		h.body(h.relText(text), limit, code)
		if rd.Text == "" {
			for _, c := range r.Content {
				if c.Type == harness.BlockImage && c.Image != nil {
					h.line("  " + h.st.paint(sgrDim, h.imageText(c.Image)))
				}
			}
		}
	}
	if r.IsError && rd.Kind != harness.RenderGeneric {
		// The message tells what went wrong; the card alone may not. A
		// terminal card has shown the output already: only the notes
		// after it are new.
		text := r.Text()
		if term != nil || rd.Kind == harness.RenderTerminal {
			text = terminalNotes(text)
		}
		h.body(text, cardErrorLines, sgrRed)
	}
}

// diffCard shows a change as a unified diff with line numbers: each
// hunk's header, then its lines numbered in the old file (removed and
// unchanged lines) or the new one (added lines).
func (h *human) diffCard(d *harness.Diff) {
	if len(d.Hunks) == 0 {
		if d.Truncated {
			h.line("  " + h.st.paint(sgrDim, h.rel(d.Path)+": too large to show"))
		}
		return
	}
	shown, total, widest := 0, 0, 1
	for _, hk := range d.Hunks {
		total += 1 + len(hk.Lines)
		widest = max(widest, hk.OldStart+hk.OldLines, hk.NewStart+hk.NewLines)
	}
	numWidth := len(strconv.Itoa(widest))
	for _, hk := range d.Hunks {
		if shown >= cardDiffLines {
			break
		}
		h.line("  " + h.st.paint(sgrCyan, fmt.Sprintf("@@ -%d,%d +%d,%d @@", hk.OldStart, hk.OldLines, hk.NewStart, hk.NewLines)))
		shown++
		oldN, newN := hk.OldStart, hk.NewStart
		for _, l := range hk.Lines {
			if shown >= cardDiffLines {
				break
			}
			shown++
			marker, text := " ", l
			if l != "" {
				marker, text = l[:1], l[1:]
			}
			// Tabs expand relative to the text, after the marker.
			text = cut(expandTabs(text), h.width-numWidth-8)
			var n int
			code := sgrDim
			switch marker {
			case "+":
				n, code = newN, sgrGreen
				newN++
			case "-":
				n, code = oldN, sgrRed
				oldN++
			default:
				n = oldN
				oldN++
				newN++
			}
			num := h.st.paint(sgrDim, fmt.Sprintf("%*d", numWidth, n))
			if code == sgrDim {
				h.line("  " + num + "   " + text)
			} else {
				h.line("  " + num + " " + h.st.paint(code, marker+" "+text))
			}
		}
	}
	if total > shown {
		h.line("  " + h.st.paint(sgrDim, "… "+units.Plural(total-shown, "more line", "more lines")))
	} else if d.Truncated {
		h.line("  " + h.st.paint(sgrDim, "… the rest of the diff was too large to keep"))
	}
}

func (h *human) terminalCard(t *harness.Terminal) {
	if t.Command != "" {
		h.line("  " + h.st.paint(sgrBold, "$") + " " + cut(commandLine(t.Command), h.width-10) + h.st.paint(sgrDim, h.where(t.Cwd)))
	}
	out := strings.TrimRight(t.Output, "\n")
	if out != "" && h.shownLive > 0 {
		// Piped, the output was appended as it came: say so, once.
		h.line("  " + h.st.paint(sgrDim, fmt.Sprintf("│ (%s of output above)", units.Plural(h.shownLive, "line", "lines"))))
		out = ""
	}
	if out != "" {
		lines := strings.Split(out, "\n")
		if n := len(lines) - cardTerminalLines; n > 0 {
			h.line("  " + h.st.paint(sgrDim, fmt.Sprintf("│ … %s above", units.Plural(n, "line", "lines"))))
			lines = lines[n:]
		}
		for _, l := range lines {
			h.line("  " + h.st.paint(sgrDim, "│ "+cut(expandTabs(l), h.width-6)))
		}
	}
	var status string
	code := sgrDim
	switch {
	case t.ExitCode != nil && *t.ExitCode == 0:
		status, code = "exit 0", sgrGreen
	case t.ExitCode != nil:
		status, code = "exit "+strconv.Itoa(*t.ExitCode), sgrRed
	case t.Status == "running":
		status = "still running"
	case t.Status == "timeout":
		status, code = "timed out", sgrRed
	case t.Status == "killed":
		status, code = "killed", sgrRed
	case t.Status == "cancelled":
		status, code = "cancelled", sgrYellow
	case t.Status != "":
		status = t.Status
	}
	if status != "" {
		h.line("  " + h.st.paint(code, status))
	}
}

func (h *human) locationsCard(locs []harness.Location) {
	for i, l := range locs {
		if i == cardLocations {
			h.line("  " + h.st.paint(sgrDim, fmt.Sprintf("… %d more", len(locs)-i)))
			break
		}
		s := h.rel(l.Path)
		switch {
		case l.StartLine > 0 && l.EndLine > l.StartLine:
			s += fmt.Sprintf(":%d-%d", l.StartLine, l.EndLine)
		case l.StartLine > 0:
			s += fmt.Sprintf(":%d", l.StartLine)
		}
		h.line("  " + h.st.paint(sgrDim, s))
	}
}

// where says in which directory a command ran, unless the workspace.
func (h *human) where(cwd string) string {
	if rel := h.rel(cwd); cwd != "" && rel != "." {
		return "  (in " + rel + ")"
	}
	return ""
}

// terminalNotes returns the bracketed notes that end a command's result
// text ("[exit code 1 ...]", "[The command was cancelled ...]"), without
// the output before them, which the card shows, or the working directory.
func terminalNotes(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	i := len(lines)
	for i > 0 && strings.HasPrefix(lines[i-1], "[") {
		i--
	}
	var notes []string
	for _, l := range lines[i:] {
		if !strings.HasPrefix(l, "[cwd ") {
			notes = append(notes, l)
		}
	}
	return strings.Join(notes, "\n")
}

// commandLine is the first line of a command, marked when more follow.
func commandLine(cmd string) string {
	first, _, more := strings.Cut(strings.TrimSpace(cmd), "\n")
	if more {
		first += " …"
	}
	return first
}

// firstStringArg returns the first string value among a call's
// arguments, in the order the model wrote them: usually what the call is
// about (a path, a command).
func firstStringArg(args string) string {
	dec := json.NewDecoder(strings.NewReader(args))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return cut(oneLine(args), 60)
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // key
			break
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			return cut(oneLine(s), 60)
		}
	}
	return ""
}

// body shows the first lines of text that are not blank, indented.
func (h *human) body(text string, limit int, code string) {
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		if i == limit {
			h.line("  " + h.st.paint(sgrDim, "… "+units.Plural(len(lines)-i, "more line", "more lines")))
			break
		}
		width := h.width - 4
		if code == sgrRed {
			width = 4 * h.width // errors wrap rather than lose their remedy
		}
		h.line("  " + h.st.paint(code, cut(expandTabs(l), width)))
	}
}

// rel shows a path relative to the workspace when it lies inside it.
func (h *human) rel(p string) string {
	if h.root == "" || p == "" {
		return p
	}
	if p == h.root {
		return "."
	}
	if rest, ok := strings.CutPrefix(p, h.root+"/"); ok {
		return path.Clean(rest)
	}
	return p
}

// relText shortens workspace paths inside a line of text.
func (h *human) relText(s string) string {
	if h.root == "" || h.root == "/" {
		return s
	}
	return strings.ReplaceAll(s, h.root+"/", "")
}

// jsonView writes every event as one JSON line (agent.MarshalEvent), and
// a first line describing the session. Messages for people go to
// stderr so that stdout stays parseable.
type jsonView struct {
	mu     sync.Mutex
	out    io.Writer
	errOut io.Writer
}

func (j *jsonView) banner(b bannerInfo) {
	line := map[string]any{
		"type": "session", "session_id": b.SessionID, "cwd": b.Cwd, "workspace": b.Workspace,
		"model": b.Model, "resumed": b.Resumed, "messages": b.Messages,
	}
	if len(b.Warnings) > 0 {
		ws := make([]string, len(b.Warnings))
		for i, w := range b.Warnings {
			ws[i] = w.String()
		}
		line["warnings"] = ws
	}
	j.writeJSON(line)
}

func (j *jsonView) beginTurn(string, bool) {}

func (j *jsonView) event(ev agent.Event) {
	b, err := agent.MarshalEvent(ev)
	if err != nil {
		j.writeJSON(map[string]any{"type": "encoding_error", "event": fmt.Sprintf("%T", ev), "error": err.Error()})
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.out.Write(append(b, '\n'))
}

func (j *jsonView) writeJSON(v map[string]any) {
	b, err := marshalLine(v)
	if err != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.out.Write(b)
}

func (j *jsonView) notice(kind noticeKind, text string) {
	if kind == noticePrompt {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	fmt.Fprintln(j.errOut, text)
}

func (j *jsonView) close() {}

func (j *jsonView) setWidth(int) {}

func (j *jsonView) hold(bool) {}

// errorText is an error's message with its code, for one line.
func errorText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// imageText describes an image content block.
func (h *human) imageText(img *harness.Image) string {
	s := "[image"
	if img.Name != "" {
		s += " " + h.rel(img.Name)
	}
	if img.Width > 0 && img.Height > 0 {
		s += fmt.Sprintf(", %dx%d", img.Width, img.Height)
	}
	if img.MediaType != "" {
		s += ", " + img.MediaType
	}
	return s + "]"
}

// seconds formats a duration the way a person reads it.
func seconds(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// marshalLine encodes v as one JSON line.
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// count formats a token count: 950, 12.3k, 1.2M.
func count(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	default:
		return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M"
	}
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if n < 2 {
		n = 2
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, runes := 0, 0
	for i < len(s) && runes < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		runes++
	}
	return s[:i] + "…"
}

// cutLeft shortens s to at most n runes by dropping its start, marking
// the cut with "…".
func cutLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// oneLine folds whitespace runs, newlines included, into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// expandTabs replaces tabs with spaces so cut lines keep their width,
// and drops control characters that would move the cursor.
func expandTabs(s string) string {
	if !strings.ContainsAny(s, "\t\r\x1b\b") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		switch {
		case r == '\t':
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case r == '\r', r == '\x1b', r == '\b':
			// Terminal control: a card shows text, not cursor moves.
		default:
			b.WriteRune(r)
			col++
		}
	}
	return b.String()
}
