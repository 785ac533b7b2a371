package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The prompt loop on a terminal edits one line at a time: the cursor
// moves with the arrow keys, Home and End (Ctrl-A, Ctrl-E), Backspace and
// Delete remove a character, Ctrl-U and Ctrl-K cut to the start or the
// end, Ctrl-W the word before the cursor, Up and Down walk the history.
// A line longer than the terminal scrolls sideways instead of wrapping, so
// redrawing it never disturbs the lines above.

// lineEditor is the state of one line being edited.
type lineEditor struct {
	buf    []rune
	pos    int // the cursor, an index into buf
	prompt string
	// promptWidth is the prompt's width in columns (it may carry
	// colour codes).
	promptWidth int

	hist    *history
	histPos int    // len(hist.entries) while editing a new line
	draft   []rune // the new line, kept while walking the history

	// pending holds an incomplete escape sequence or UTF-8 character
	// until its next bytes arrive.
	pending []byte
}

// keyResult says what a key did.
type keyResult int

const (
	keyNone      keyResult = iota
	keyRedraw              // the line changed: draw it again
	keySubmit              // Enter: the line is done
	keyEOF                 // Ctrl-D on an empty line
	keyInterrupt           // Ctrl-C read as a byte (the terminal sends SIGINT otherwise)
	keyTab                 // Tab: the line is done, to be queued (while a turn runs)
)

func newLineEditor(prompt string, promptWidth int, hist *history, prefill string) *lineEditor {
	e := &lineEditor{prompt: prompt, promptWidth: promptWidth, hist: hist}
	e.histPos = hist.len()
	e.buf = []rune(prefill)
	e.pos = len(e.buf)
	return e
}

func (e *lineEditor) text() string { return string(e.buf) }

// feed processes input bytes and returns the strongest result among
// them, with the bytes left after a submit, EOF or interrupt (typed
// ahead of the next line).
func (e *lineEditor) feed(p []byte) (res keyResult, rest []byte) {
	data := append(e.pending, p...)
	e.pending = nil
	for len(data) > 0 {
		n, r := e.key(data)
		if n == 0 { // incomplete: wait for more
			e.pending = append([]byte(nil), data...)
			break
		}
		data = data[n:]
		switch r {
		case keySubmit, keyEOF, keyInterrupt, keyTab:
			return r, data
		case keyRedraw:
			res = keyRedraw
		}
	}
	return res, nil
}

// key handles the key at the start of p and returns how many bytes it
// took (0 when p holds only part of it).
func (e *lineEditor) key(p []byte) (int, keyResult) {
	switch c := p[0]; c {
	case '\r', '\n':
		n := 1
		if c == '\r' && len(p) > 1 && p[1] == '\n' {
			n = 2
		}
		return n, keySubmit
	case 0x03: // Ctrl-C
		return 1, keyInterrupt
	case '\t':
		return 1, keyTab
	case 0x04: // Ctrl-D
		if len(e.buf) == 0 {
			return 1, keyEOF
		}
		return 1, e.deleteAt(e.pos)
	case 0x7f, 0x08: // Backspace
		if e.pos == 0 {
			return 1, keyNone
		}
		e.pos--
		return 1, e.deleteAt(e.pos)
	case 0x01: // Ctrl-A
		return 1, e.moveTo(0)
	case 0x05: // Ctrl-E
		return 1, e.moveTo(len(e.buf))
	case 0x02: // Ctrl-B
		return 1, e.moveTo(e.pos - 1)
	case 0x06: // Ctrl-F
		return 1, e.moveTo(e.pos + 1)
	case 0x0b: // Ctrl-K
		e.buf = e.buf[:e.pos]
		return 1, keyRedraw
	case 0x15: // Ctrl-U
		e.buf = append([]rune(nil), e.buf[e.pos:]...)
		e.pos = 0
		return 1, keyRedraw
	case 0x17: // Ctrl-W
		start := e.pos
		for start > 0 && unicode.IsSpace(e.buf[start-1]) {
			start--
		}
		for start > 0 && !unicode.IsSpace(e.buf[start-1]) {
			start--
		}
		e.buf = append(e.buf[:start], e.buf[e.pos:]...)
		e.pos = start
		return 1, keyRedraw
	case 0x10: // Ctrl-P
		return 1, e.historyStep(-1)
	case 0x0e: // Ctrl-N
		return 1, e.historyStep(1)
	case 0x1b:
		return e.escape(p)
	}
	if p[0] < 0x20 {
		return 1, keyNone // other control keys do nothing
	}
	if !utf8.FullRune(p) {
		return 0, keyNone
	}
	r, n := utf8.DecodeRune(p)
	if r == utf8.RuneError && n == 1 {
		return 1, keyNone
	}
	e.buf = append(e.buf[:e.pos], append([]rune{r}, e.buf[e.pos:]...)...)
	e.pos++
	return n, keyRedraw
}

// escape handles an escape sequence: the arrow keys, Home, End and
// Delete in their CSI and SS3 forms, and Alt-b, Alt-f. Unknown
// sequences are skipped whole.
func (e *lineEditor) escape(p []byte) (int, keyResult) {
	if len(p) < 2 {
		return 0, keyNone
	}
	switch p[1] {
	case '[', 'O':
		// Parameters, then one final byte in 0x40..0x7e.
		i := 2
		for i < len(p) && (p[i] < 0x40 || p[i] > 0x7e) {
			i++
		}
		if i == len(p) {
			if len(p) > 16 {
				return len(p), keyNone // not a sequence we know: drop it
			}
			return 0, keyNone
		}
		params, final := string(p[2:i]), p[i]
		n := i + 1
		switch final {
		case 'A':
			return n, e.historyStep(-1)
		case 'B':
			return n, e.historyStep(1)
		case 'C':
			return n, e.moveTo(e.pos + 1)
		case 'D':
			return n, e.moveTo(e.pos - 1)
		case 'H':
			return n, e.moveTo(0)
		case 'F':
			return n, e.moveTo(len(e.buf))
		case '~':
			switch params {
			case "1", "7":
				return n, e.moveTo(0)
			case "4", "8":
				return n, e.moveTo(len(e.buf))
			case "3":
				return n, e.deleteAt(e.pos)
			}
		}
		return n, keyNone
	case 'b':
		return 2, e.moveTo(e.wordStart())
	case 'f':
		return 2, e.moveTo(e.wordEnd())
	}
	return 1, keyNone // a lone Escape
}

func (e *lineEditor) wordStart() int {
	i := e.pos
	for i > 0 && unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	return i
}

func (e *lineEditor) wordEnd() int {
	i := e.pos
	for i < len(e.buf) && unicode.IsSpace(e.buf[i]) {
		i++
	}
	for i < len(e.buf) && !unicode.IsSpace(e.buf[i]) {
		i++
	}
	return i
}

func (e *lineEditor) moveTo(i int) keyResult {
	i = max(0, min(i, len(e.buf)))
	if i == e.pos {
		return keyNone
	}
	e.pos = i
	return keyRedraw
}

func (e *lineEditor) deleteAt(i int) keyResult {
	if i < 0 || i >= len(e.buf) {
		return keyNone
	}
	e.buf = append(e.buf[:i], e.buf[i+1:]...)
	return keyRedraw
}

// historyStep moves through the history: -1 to an older entry, +1 to a
// newer one, past the newest back to the line being typed.
func (e *lineEditor) historyStep(d int) keyResult {
	n := e.hist.len()
	next := e.histPos + d
	if next < 0 || next > n {
		return keyNone
	}
	if e.histPos == n {
		e.draft = append([]rune(nil), e.buf...)
	}
	e.histPos = next
	if next == n {
		e.buf = append([]rune(nil), e.draft...)
	} else {
		e.buf = []rune(e.hist.at(next))
	}
	e.pos = len(e.buf)
	return keyRedraw
}

// render returns what redraws the line on a terminal width columns wide:
// back to the line's start, the prompt, the part of the text around the
// cursor that fits, the rest of the line cleared, and the cursor put in
// place. The text scrolls sideways rather than wrap.
func (e *lineEditor) render(width int) string {
	line, back := e.renderParts(width)
	line += "\x1b[K"
	if back > 0 {
		line += "\x1b[" + itoa(back) + "D"
	}
	return line
}

// renderParts is render without the clearing and the cursor's move:
// the line drawn, and how many columns back from its end the cursor
// goes.
func (e *lineEditor) renderParts(width int) (line string, back int) {
	avail := max(width-e.promptWidth-1, 8)
	shown := make([]rune, len(e.buf))
	for i, r := range e.buf {
		if r == '\n' || r == '\t' || unicode.IsControl(r) {
			r = ' '
		}
		shown[i] = r
	}
	start := 0
	if e.pos > avail-1 {
		start = e.pos - (avail - 1)
	}
	end := min(len(shown), start+avail)
	var b strings.Builder
	b.WriteString("\r")
	b.WriteString(e.prompt)
	if start > 0 {
		b.WriteString("…")
		start++
	}
	b.WriteString(string(shown[start:end]))
	return b.String(), end - e.pos
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
