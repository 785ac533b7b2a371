package ui

import (
	"fmt"
	"golang.org/x/term"
	"io"
	"os"
	"sync"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
)

// View shows a session to the user: either rendered for people
// (NewHuman) or as JSON lines for scripts (NewJSON). Its methods are safe
// for concurrent use.
type View interface {
	// Banner introduces the session.
	Banner(b BannerInfo)
	// BeginTurn is called before a turn starts; prompt is echoed when
	// the user did not type it.
	BeginTurn(prompt string, echo bool)
	// Event shows one event of a turn.
	Event(ev agent.Event)
	// Notice shows a short message from the program itself.
	Notice(kind NoticeKind, text string)
	// Close stops the spinner and ends the last line.
	Close()
	// SetWidth says the terminal is now width columns wide.
	SetWidth(width int)
	// Hold stops (true) or resumes (false) the spinner while the program
	// edits a line of its own on the terminal, such as an answer to an
	// approval question.
	Hold(on bool)
	// Draft shows the line the user types while a turn runs (nil: the
	// turn takes no typed lines, or the line was sent).
	Draft(d *Draft)
}

// BannerInfo is what the program says about a session when it starts.
type BannerInfo struct {
	Model     string
	BaseURL   string
	Workspace string
	SessionID string
	Cwd       string
	Resumed   bool
	Messages  int
	Warnings  []session.Warning
}

// NoticeKind is how a notice is shown.
type NoticeKind int

// Notice kinds.

const (
	NoticeInfo NoticeKind = iota
	NoticeWarn
	NoticeError
	// NoticePrompt asks for input: the text is written without a line
	// end, and the line the user types ends it.
	NoticePrompt
)

// ColorEnabled decides whether output to a terminal gets colours:
// never when the output is not a terminal, when NO_COLOR is set to
// anything, or when TERM says the terminal is dumb.
func ColorEnabled(tty bool, getenv func(string) string) bool {
	return tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// IsTerminal reports whether f is a terminal, as the terminal driver
// answers: a character device that is not one (/dev/null) is not.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok || file == nil {
		return false
	}
	return term.IsTerminal(int(file.Fd()))
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

// NewJSON returns the view of -json: every event as one JSON line
// (agent.MarshalEvent) on out, after a first line describing the
// session. Messages for people go to errOut so that out stays parseable.
func NewJSON(out, errOut io.Writer) View { return &jsonView{out: out, errOut: errOut} }

// jsonView is NewJSON's view.
type jsonView struct {
	mu     sync.Mutex
	out    io.Writer
	errOut io.Writer
}

func (j *jsonView) Banner(b BannerInfo) {
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

func (j *jsonView) BeginTurn(string, bool) {}

func (j *jsonView) Event(ev agent.Event) {
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

func (j *jsonView) Notice(kind NoticeKind, text string) {
	if kind == NoticePrompt {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	fmt.Fprintln(j.errOut, text)
}

func (j *jsonView) Close() {}

func (j *jsonView) SetWidth(int) {}

func (j *jsonView) Hold(bool) {}

func (j *jsonView) Draft(*Draft) {}

// ErrorText is an error's message with its code, for one line.
func ErrorText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
