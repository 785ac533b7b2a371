package ui

import (
	"bufio"
	"context"
	"fmt"
	"github.com/go-harness/harness"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"
)

// Console is the coder's side of the terminal: it reads prompts, asks the
// user questions during a turn, and follows Ctrl-C and the terminal's
// width while a turn runs.
//
// On a terminal (after OpenTerminal) the prompt line is edited in place
// with a history, and the keys typed during a turn are kept, unseen, as
// the next prompt's text. Otherwise it reads stdin line by line.
type Console struct {
	in         io.Reader
	out        io.Writer
	errOut     io.Writer
	interrupts <-chan os.Signal
	resize     <-chan os.Signal
	getenv     func(string) string
	view       View
	verbose    bool

	// term is the terminal the prompt loop edits lines on; nil when
	// stdin or stdout is not a terminal.
	term *terminal
	// lines are stdin's lines, shared by the prompt loop and Ask.
	lines     <-chan string
	linesOnce sync.Once
	stop      chan struct{}
	closeOnce sync.Once

	// steer takes a line typed while a turn runs (queue: with Tab);
	// draft is that line while it is typed.
	steer func(text string, queue bool)
	draft *lineEditor
}

// Steer makes a line typed while a turn runs on the terminal go to f
// when it is done: with Enter (queue false) or Tab (queue true). The
// line is shown below the turn's output as it is typed; one left
// unfinished when the turn ends comes back as the next prompt's text.
func (c *Console) Steer(f func(text string, queue bool)) { c.steer = f }

// Config is what the coder's user interface reads, writes and shows.
type Config struct {
	// In and Out are the program's stdin and stdout; ErrOut takes
	// messages for people under JSON, and the Console's own complaints
	// (with Verbose).
	In          io.Reader
	Out, ErrOut io.Writer
	// Interrupts delivers Ctrl-C, Resize the terminal's size changes.
	Interrupts, Resize <-chan os.Signal
	// Getenv reads the environment (NO_COLOR, TERM, $COLUMNS).
	Getenv func(string) string
	// JSON writes every event as a JSON line instead (NewJSON).
	JSON bool
	// Reasoning shows the model's reasoning; Root is the workspace, whose
	// paths are shown relative.
	Reasoning bool
	Root      string
	// Verbose reports failures to read or save the prompt history.
	Verbose bool
	// DiffNote, when set, returns the note a change's card shows under
	// its diff (the diagnostics the change introduced), or "".
	DiffNote func(*harness.ToolResult) string
	// SpillDir is where the spill:// outputs are kept, for the cards
	// that name one.
	SpillDir string
}

// Open returns the view c asks for, the one for people (NewHuman, with
// colour and a spinner on a terminal) or JSON lines (NewJSON), and the
// Console beside it, which reads stdin line by line until OpenTerminal
// switches it to editing lines on the terminal.
func Open(c Config) (View, *Console) {
	var v View
	if c.JSON {
		v = NewJSON(c.Out, c.ErrOut)
	} else {
		tty := IsTerminal(c.Out)
		v = NewHuman(c.Out, HumanOptions{Color: ColorEnabled(tty, c.Getenv), Spinner: tty, Reasoning: c.Reasoning,
			Root: c.Root, Width: Width(c.Out, c.Getenv), DiffNote: c.DiffNote, SpillDir: c.SpillDir,
			NoWrap: !tty && c.Getenv("COLUMNS") == ""})
	}
	return v, &Console{in: c.In, out: c.Out, errOut: c.ErrOut, interrupts: c.Interrupts, resize: c.Resize,
		getenv: c.Getenv, view: v, verbose: c.Verbose, stop: make(chan struct{})}
}

// terminal is the prompt loop's terminal: keys read as they are typed,
// those typed during a turn, and the workspace's prompt history.
type terminal struct {
	out       io.Writer
	keys      chan []byte
	typeahead []byte
	eof       bool
	hist      *history
	restore   func()
	// asks carries Ask's questions to the goroutine that owns the keys
	// while a turn runs, so that one reader edits every line.
	asks chan askLine
}

// askLine is a line the program asks the user for during a turn: the
// prompt shown before it and where the typed line goes ("" when the
// user gave no answer).
type askLine struct {
	head   func()
	prompt string
	reply  chan string
}

// OpenTerminal puts stdin in key mode and starts reading keys, with the
// prompt history kept in the file historyFile.
func (c *Console) OpenTerminal(historyFile string) error {
	in := c.in.(*os.File)
	restore, err := keyMode(int(in.Fd()))
	if err != nil {
		return err
	}
	hist, err := loadHistory(historyFile)
	if err != nil && c.verbose {
		fmt.Fprintf(c.errOut, "coder: reading the prompt history: %v\n", err)
	}
	t := &terminal{out: c.out, keys: make(chan []byte, 64), hist: hist, restore: restore, asks: make(chan askLine)}
	go func() {
		defer close(t.keys)
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				t.keys <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	c.term = t
	return nil
}

// Close restores the terminal and stops handing out stdin's lines. It
// may be called more than once.
func (c *Console) Close() {
	c.closeOnce.Do(func() {
		close(c.stop)
		if c.term != nil {
			c.term.restore()
		}
	})
}

// Terminal reports whether lines are edited on the terminal.
func (c *Console) Terminal() bool { return c.term != nil }

// stdinLines returns the lines of stdin, shared by the prompt loop and
// Ask. A read that blocks when the program exits is left behind; the
// process ends anyway.
func (c *Console) stdinLines() <-chan string {
	c.linesOnce.Do(func() {
		ch := make(chan string)
		go readLines(c.in, ch, c.stop)
		c.lines = ch
	})
	return c.lines
}

// ReadPrompt reads one prompt, joining lines that end with a backslash,
// and keeps it in the history. ok is false at end of input; exit is
// true on Ctrl-C at the prompt or when ctx ends. interactive shows a
// prompt marker before each line read from a non-terminal stdin.
func (c *Console) ReadPrompt(ctx context.Context, interactive bool) (prompt string, ok, exit bool) {
	var lines <-chan string
	if c.term == nil {
		lines = c.stdinLines()
	}
	var parts []string
	for {
		marker := "\n› "
		if len(parts) > 0 {
			marker = "… "
		}
		var l string
		if c.term != nil {
			var more bool
			l, more, exit = c.editLine(ctx, strings.TrimPrefix(marker, "\n"), len(parts) == 0)
			if exit {
				return "", false, true
			}
			if !more {
				return strings.Join(parts, "\n"), len(parts) > 0, false
			}
		} else {
			if interactive {
				c.view.Notice(NoticePrompt, marker)
			}
			select {
			case got, more := <-lines:
				if !more {
					if interactive {
						c.view.Notice(NoticeInfo, "") // Ctrl-D left the cursor after the prompt
					}
					return strings.Join(parts, "\n"), len(parts) > 0, false
				}
				l = strings.TrimRight(got, "\r\n")
			case <-c.interrupts:
				c.view.Notice(NoticeInfo, "")
				return "", false, true
			case <-ctx.Done():
				return "", false, true
			}
		}
		if cont, found := strings.CutSuffix(l, `\`); found {
			parts = append(parts, cont)
			continue
		}
		prompt = strings.Join(append(parts, l), "\n")
		if c.term != nil {
			if err := c.term.hist.add(prompt); err != nil && c.verbose {
				fmt.Fprintf(c.errOut, "coder: saving the prompt history: %v\n", err)
			}
		}
		return prompt, true, false
	}
}

// Ask asks the user a question during a turn, with prompt before the
// answer, and returns the line typed. On a terminal the goroutine that
// owns the keys (WaitTurn's) edits the answer; otherwise the next line of
// stdin is the answer, and ok is false at end of input.
func (c *Console) Ask(ctx context.Context, prompt string) (line string, ok bool, err error) {
	return c.AskAfter(ctx, nil, prompt)
}

// AskAfter is Ask with head, which shows what is asked (the question,
// its choices), run once the answer owns the keys: on a terminal, keys
// typed after the question appears go to the answer, never to the
// line that steers the turn.
func (c *Console) AskAfter(ctx context.Context, head func(), prompt string) (line string, ok bool, err error) {
	if c.term != nil {
		q := askLine{head: head, prompt: prompt, reply: make(chan string, 1)}
		select {
		case c.term.asks <- q:
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
		select {
		case l := <-q.reply:
			return l, true, nil
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
	}
	if head != nil {
		head()
	}
	c.view.Notice(NoticePrompt, prompt)
	select {
	case l, more := <-c.stdinLines():
		return l, more, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
}

// WaitTurn follows the user while a turn runs, until done is closed:
// it answers Ask's questions, keeps the keys typed ahead, follows the
// terminal's width, and on Ctrl-C cancels the turn with cancel. A second
// Ctrl-C, or ctx ending, also waits for done and reports exit: the user
// asked to leave.
func (c *Console) WaitTurn(ctx context.Context, done <-chan struct{}, cancel context.CancelFunc) (exit bool) {
	cancelling := false
	var keys <-chan []byte
	var asks <-chan askLine
	if c.term != nil {
		keys, asks = c.term.keys, c.term.asks
	}
	steering := c.term != nil && c.steer != nil
	if steering {
		c.view.Draft(c.draftState())
		defer c.view.Draft(nil)
	}
	for {
		select {
		case <-done:
			return false
		case q := <-asks:
			if q.head != nil {
				q.head()
			}
			line, interrupted := c.answerLine(ctx, q.prompt)
			q.reply <- line
			if interrupted && !cancelling {
				cancelling = true
				cancel()
				c.view.Notice(NoticeWarn, "cancelling the turn… (Ctrl-C again to exit)")
			}
			if steering {
				c.view.Draft(c.draftState())
			}
		case b, ok := <-keys:
			if !ok {
				c.term.eof, keys = true, nil
				continue
			}
			if !steering {
				// Typed ahead: kept, unseen, for the next prompt.
				c.term.typeahead = append(c.term.typeahead, b...)
				continue
			}
			c.typed(b)
		case <-c.resize:
			c.view.SetWidth(c.Width())
		case <-c.interrupts:
			if cancelling {
				c.view.Notice(NoticeWarn, "exiting")
				cancel()
				<-done
				return true
			}
			cancelling = true
			cancel()
			c.view.Notice(NoticeWarn, "cancelling the turn… (Ctrl-C again to exit)")
		case <-ctx.Done():
			cancel()
			<-done
			return true
		}
	}
}

// typed edits the line typed while a turn runs with the keys b: Enter
// steers it, Tab queues it. Other keys that end a line (Ctrl-D) do
// nothing here.
func (c *Console) typed(b []byte) {
	if c.draft == nil {
		c.draft = newLineEditor(draftPrompt, len(draftPrompt), c.term.hist, "")
	}
	for {
		res, rest := c.draft.feed(b)
		if res == keySubmit || res == keyTab {
			text := strings.TrimSpace(c.draft.text())
			c.draft = newLineEditor(draftPrompt, len(draftPrompt), c.term.hist, "")
			c.view.Draft(c.draftState())
			if text != "" {
				if err := c.term.hist.add(text); err != nil && c.verbose {
					fmt.Fprintf(c.errOut, "coder: saving the prompt history: %v\n", err)
				}
				c.steer(text, res == keyTab)
			}
		}
		if len(rest) == 0 {
			break
		}
		b = rest
	}
	c.view.Draft(c.draftState())
}

// draftState is the line typed during the turn, for the view.
func (c *Console) draftState() *Draft {
	if c.draft == nil {
		return &Draft{}
	}
	return &Draft{Text: c.draft.text(), Cursor: c.draft.pos}
}

// editLine edits one line at the prompt. more is false at end of input
// (Ctrl-D on an empty line); exit is true on Ctrl-C or when the program
// is stopped. Keys typed during the last turn come back as the line's
// text, never sent without an Enter at the prompt.
func (c *Console) editLine(ctx context.Context, marker string, first bool) (line string, more, exit bool) {
	if first {
		c.view.Notice(NoticePrompt, "\n")
	} else {
		c.view.Notice(NoticePrompt, "")
	}
	st := style(ColorEnabled(true, c.getenv))
	prefill := ""
	if c.draft != nil {
		prefill, c.draft = c.draft.text(), nil
	}
	ed := newLineEditor(st.paint(sgrBold+";"+sgrBlue, marker), utf8.RuneCountInString(marker), c.term.hist, prefill)
	if len(c.term.typeahead) > 0 {
		ahead := c.term.typeahead
		c.term.typeahead = nil
		for len(ahead) > 0 {
			res, rest := ed.feed(ahead)
			if res == keySubmit {
				ed.buf = append(ed.buf, ' ')
				ed.pos = len(ed.buf)
			}
			ahead = rest
		}
		ed.buf = []rune(strings.TrimRight(ed.text(), " "))
		ed.pos = len(ed.buf)
	}
	if ed.text() != "" {
		c.view.Notice(NoticeInfo, "(typed during the turn, not sent: Enter sends it, Ctrl-U clears it)")
		c.view.Notice(NoticePrompt, "")
	}
	if c.term.eof {
		io.WriteString(c.term.out, "\r\n")
		return "", false, false
	}
	io.WriteString(c.term.out, ed.render(c.Width()))
	for {
		select {
		case b, ok := <-c.term.keys:
			if !ok {
				io.WriteString(c.term.out, "\r\n")
				return "", false, false
			}
			res, rest := feedLine(ed, b)
			switch res {
			case keyRedraw:
				io.WriteString(c.term.out, ed.render(c.Width()))
			case keySubmit:
				ed.pos = len(ed.buf)
				io.WriteString(c.term.out, ed.render(c.Width())+"\r\n")
				c.term.typeahead = rest
				return ed.text(), true, false
			case keyEOF:
				io.WriteString(c.term.out, "\r\n")
				return "", false, false
			case keyInterrupt:
				io.WriteString(c.term.out, "\r\n")
				return "", false, true
			}
		case <-c.resize:
			w := c.Width()
			c.view.SetWidth(w)
			io.WriteString(c.term.out, ed.render(w))
		case <-c.interrupts:
			io.WriteString(c.term.out, "\r\n")
			return "", false, true
		case <-ctx.Done():
			io.WriteString(c.term.out, "\r\n")
			return "", false, true
		}
	}
}

// answerLine edits the answer to a question asked during a turn, with
// prompt before it. Keys typed before the question stay typed ahead for
// the next prompt; interrupted is true on Ctrl-C, and the answer is then
// empty (no).
func (c *Console) answerLine(ctx context.Context, prompt string) (line string, interrupted bool) {
	c.view.Hold(true)
	defer c.view.Hold(false)
	ed := newLineEditor(prompt, utf8.RuneCountInString(prompt), nil, "")
	io.WriteString(c.term.out, ed.render(c.Width()))
	for {
		select {
		case b, ok := <-c.term.keys:
			if !ok {
				c.term.eof = true
				io.WriteString(c.term.out, "\r\n")
				return "", false
			}
			res, rest := feedLine(ed, b)
			switch res {
			case keyRedraw:
				io.WriteString(c.term.out, ed.render(c.Width()))
			case keySubmit:
				ed.pos = len(ed.buf)
				io.WriteString(c.term.out, ed.render(c.Width())+"\r\n")
				c.term.typeahead = append(c.term.typeahead, rest...)
				return ed.text(), false
			case keyEOF:
				io.WriteString(c.term.out, "\r\n")
				return "", false
			case keyInterrupt:
				io.WriteString(c.term.out, "\r\n")
				return "", true
			}
		case <-c.resize:
			w := c.Width()
			c.view.SetWidth(w)
			io.WriteString(c.term.out, ed.render(w))
		case <-c.interrupts:
			io.WriteString(c.term.out, "\r\n")
			return "", true
		case <-ctx.Done():
			io.WriteString(c.term.out, "\r\n")
			return "", true
		}
	}
}

// Width is the terminal's width in columns: asked of the terminal when
// stdout is one, else $COLUMNS, else 100.
func (c *Console) Width() int { return Width(c.out, c.getenv) }

// Width is the width in columns of out: asked of the terminal when out
// is one, else $COLUMNS (from getenv), else 100.
func Width(out io.Writer, getenv func(string) string) int {
	if f, ok := out.(*os.File); ok && IsTerminal(f) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return max(w, 20)
		}
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 100
}

// Height is the height in rows of out: asked of the terminal when out
// is one, else 24.
func Height(out io.Writer) int {
	if f, ok := out.(*os.File); ok && IsTerminal(f) {
		if _, h, err := term.GetSize(int(f.Fd())); err == nil && h > 0 {
			return h
		}
	}
	return 24
}

// readLines sends r's lines until end of input or stop.
func readLines(r io.Reader, out chan<- string, stop <-chan struct{}) {
	defer close(out)
	br := bufio.NewReader(r)
	for {
		l, err := br.ReadString('\n')
		if l != "" {
			select {
			case out <- l:
			case <-stop:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// feedLine feeds p to a line that Tab does nothing to (the prompt, an
// answer): the keys after a Tab are fed too.
func feedLine(ed *lineEditor, p []byte) (keyResult, []byte) {
	res := keyNone
	for {
		r, rest := ed.feed(p)
		if r != keyTab {
			if r == keyNone {
				r = res
			}
			return r, rest
		}
		res, p = keyRedraw, rest
		if len(p) == 0 {
			return res, nil
		}
	}
}
