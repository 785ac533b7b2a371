package ui

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
)

// CardTerminalLines is how many of a command's last lines its card shows
// on a terminal.
const CardTerminalLines = 8

// Card limits: how much of a result a card shows.
const (
	cardDiffLines     = 60
	cardTerminalLines = CardTerminalLines
	cardGenericLines  = 4
	cardErrorLines    = 3
	cardLocations     = 5
	cardNoteLines     = 12
)

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
	if rd.Kind == harness.RenderTodo && !r.IsError {
		title = todoTitle(rd.Todo)
	}
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
	if why, ok := h.denials[e.Call.ID]; ok && r.IsError {
		// The reason, once: the result's text repeats it for the model.
		delete(h.denials, e.Call.ID)
		h.body(why, cardErrorLines, sgrRed)
		return
	}

	switch {
	case rd.Kind == harness.RenderTodo && !r.IsError:
		h.todoCard(rd.Todo)
	case rd.Kind == harness.RenderQuestions && !r.IsError:
		h.questionsCard(rd.Questions, rd.Answers)
	case rd.Kind == harness.RenderDiff && rd.Diff != nil:
		h.diffCard(rd.Diff)
		if h.diffNote != nil {
			if note := h.diffNote(r); note != "" {
				h.body(h.relText(note), cardNoteLines, sgrYellow)
			}
		}
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
	h.spillLine(r)
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
		h.line("  " + h.st.paint(sgrDim, "… "+plural(total-shown, "more line", "more lines")))
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
		h.line("  " + h.st.paint(sgrDim, fmt.Sprintf("│ (%s of output above)", plural(h.shownLive, "line", "lines"))))
		out = ""
	}
	if out != "" {
		lines := strings.Split(out, "\n")
		if n := len(lines) - cardTerminalLines; n > 0 {
			h.line("  " + h.st.paint(sgrDim, fmt.Sprintf("│ … %s above", plural(n, "line", "lines"))))
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
			h.line("  " + h.st.paint(sgrDim, "… "+plural(len(lines)-i, "more line", "more lines")))
			break
		}
		if code == sgrRed || code == sgrYellow {
			// Errors and notes wrap on words rather than lose their
			// remedy.
			for w := range strings.SplitSeq(h.wrap("  "+expandTabs(l)), "\n") {
				h.line(h.st.paint(code, w))
			}
			continue
		}
		h.line("  " + h.st.paint(code, cut(expandTabs(l), h.width-4)))
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

// spillLocator finds the spill:// locators a result's text names.
var spillLocator = regexp.MustCompile(`spill://[^\s"'\]\)]+`)

// spillLine names, whole, where a result's full output was saved, and
// where spill:// lives on disk. Callers hold mu.
func (h *human) spillLine(r *harness.ToolResult) {
	loc := spillLocator.FindString(r.Text())
	if loc == "" {
		return
	}
	loc = strings.TrimRight(loc, ":.,;")
	text := "  ⤷ saved whole as " + loc
	if h.spillDir != "" {
		text += " (spill:// is " + h.spillDir + ")"
	}
	for _, l := range strings.Split(h.wrap(text), "\n") {
		h.line(h.st.paint(sgrDim, l))
	}
}
