package session

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session/internal/storekit"
)

// Header is the first line of a session log.
type Header struct {
	// Format is the log format version.
	Format int `json:"format"`
	// ID names the session: letters, digits, '_', '-' and '.', not
	// starting with a punctuation mark, without "..", at most 128 bytes
	// (a store refuses any other with harness.CodeInvalidID). Create makes
	// one that sorts by creation time, "20261129-192228-3f9a1c2b7d4e",
	// when it is empty.
	ID string `json:"id"`
	// Cwd is the session's working directory, an absolute path. Listing
	// and search scope sessions by it.
	Cwd string `json:"cwd"`
	// Created is when the session was created.
	Created time.Time `json:"created"`
	// Parent is the id of the session this one was forked from, if any.
	Parent string `json:"parent,omitempty"`
	// ForkSeq is, for a session made by Store.Fork, the sequence number
	// of the parent's last event it copied: its log starts with the
	// parent's events up to that one.
	ForkSeq int64 `json:"fork_seq,omitempty"`
	// ParentCall is the id of the parent's tool call that started this
	// session, for a sub-agent's session (agent.WithSubAgents).
	ParentCall string `json:"parent_call,omitempty"`
}

// Store keeps session logs. Implementations must be safe for concurrent
// use. The conformance suite in session/sessiontest checks the contract.
type Store interface {
	// Create starts a new session log. A zero ID gets a new one, a zero
	// Created the current time, and Format is set to the newest format
	// this build writes. An existing ID fails with harness.CodeExists.
	Create(ctx context.Context, h Header) (Log, error)
	// Open loads a session and returns a log that appends after its last
	// event, with the transcript as loaded.
	Open(ctx context.Context, id string) (Log, *Transcript, error)
	// Load reads a session without opening it for appending.
	Load(ctx context.Context, id string) (*Transcript, error)
	// List describes the sessions that match opts, newest first.
	List(ctx context.Context, opts ListOptions) ([]Info, error)
	// Delete removes a session's log and its Meta. Deleting an unknown
	// id fails with harness.CodeNotFound, a session open for appending
	// with harness.CodeLocked. To delete what other stores keep for the
	// session too (spilled output, attachments, checkpoints), use a
	// Retention.
	Delete(ctx context.Context, id string) error
	// Fork creates a session that continues session id from one of its
	// events, leaving id as it is: the new log starts with a copy of
	// id's events up to and including the one numbered opts.At (all of
	// them when At is 0), byte for byte, sequence numbers and times
	// included, so it resumes, replays and derives its history like any
	// session. Its header has id's working directory, Parent id and
	// ForkSeq the last event copied; its ID is opts.ID, or a new one. It
	// works while id is open for appending elsewhere. An unknown id, or
	// an At that names no event of it, fails with harness.CodeNotFound;
	// a taken opts.ID with harness.CodeExists. The fork is not open:
	// resume it to append.
	Fork(ctx context.Context, id string, opts ForkOptions) (Header, error)
	// Rename sets the title List shows for the session (Meta.Title); an
	// empty title shows the start of its first user message again. It
	// works while the session is open for appending, and never changes
	// the log. A title that is too long or holds control characters
	// fails with harness.CodeInvalidOption.
	Rename(ctx context.Context, id, title string) error
	// Tag adds and then removes tags of the session (Meta.Tags) and
	// returns its tags, sorted. Like Rename, it never changes the log.
	Tag(ctx context.Context, id string, add, remove []string) ([]string, error)
}

// Log appends to one session.
type Log interface {
	// Header returns the session's header.
	Header() Header
	// Append numbers the payloads with the next sequence numbers, stamps
	// them with the time, and writes them through to the store before it
	// returns (durable against a process crash, not yet against power
	// loss; see Sync). It returns the events as written.
	Append(ctx context.Context, payloads ...Payload) ([]Event, error)
	// Sync makes everything appended so far durable, and the log's
	// creation with it.
	Sync() error
	// Close syncs and releases the log. Appending after Close fails with
	// harness.CodeClosed.
	Close() error
}

// A Deferrer is a Log that can hold appended events back and write them
// with the ones appended next, in one write: fewer writes for records
// whose loss in a crash the caller can afford. The JSONL store's logs are
// Deferrers. The agent defers the request fingerprint of a model call and
// the model's answer, which the start of the answer's calls or the end
// of the turn then writes through (see package agent, "Durability").
// A Store that wraps another's logs should pass Defer on to the wrapped
// log when it is a Deferrer: otherwise the agent writes each record on
// its own.
type Deferrer interface {
	// Defer numbers, stamps and checks payloads as Append does, and
	// returns the events as they will be written, but writes them only
	// with the log's next Append, Sync or Close, before what that call
	// writes. A crash before then loses them, never an event after them:
	// the log stays a prefix of what was appended. An error writing them
	// is the error of the call that writes them.
	Defer(ctx context.Context, payloads ...Payload) ([]Event, error)
}

// Transcript is a loaded session.
type Transcript struct {
	Header Header
	Events []Event
	// Warnings says what was skipped or repaired while loading.
	Warnings []Warning
}

// Warning reports a problem found while loading a log that did not stop it
// from loading.
type Warning struct {
	// Line is the 1-based line of the log (the header is line 1); 0 when
	// not line-related.
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("line %d: %s", w.Line, w.Message)
	}
	return w.Message
}

// ListOptions filter List.
type ListOptions struct {
	// Workspace, when set, keeps only sessions whose cwd is this directory
	// or a directory below it.
	Workspace string
	// Limit, when positive, keeps only the newest Limit sessions.
	Limit int
	// Tags, when set, keeps only sessions that carry every one of them.
	Tags []string
}

// Info describes a stored session.
type Info struct {
	Header Header `json:"header"`
	// Title is the title Rename gave the session, or else the start of
	// its first user message.
	Title string `json:"title,omitempty"`
	// Tags are the session's tags, sorted.
	Tags []string `json:"tags,omitempty"`
	// Updated is when the session was last appended to.
	Updated time.Time `json:"updated"`
	// Size is the log's size in bytes.
	Size int64 `json:"size"`
}

// storeErr returns the error a store reports for code: a *harness.Error
// whose text says what went wrong. Callers wrap it with the session id.
func storeErr(code harness.Code) error {
	var text string
	switch code {
	case harness.CodeNotFound:
		text = "session: not found"
	case harness.CodeExists:
		text = "session: already exists"
	case harness.CodeClosed:
		text = "session: log is closed"
	case harness.CodeLocked:
		text = "session: open for appending elsewhere"
	case harness.CodeInvalidID:
		text = "session: invalid session id"
	case harness.CodeInvalidQuery:
		text = "session: invalid search query"
	case harness.CodeInvalidDigest:
		text = "session: invalid attachment digest"
	case harness.CodeCorruptAttachment:
		text = "session: stored attachment does not match its digest"
	default:
		text = "session: " + string(code)
	}
	return &harness.Error{Code: code, Message: text}
}

// EventTooLargeError reports an event whose encoded line is longer than a
// store accepts. Stores return it as the cause of a *harness.Error with
// harness.CodeTooLarge.
type EventTooLargeError struct {
	// Session is the session's id.
	Session string
	// Seq and Type identify the refused event.
	Seq  int64
	Type string
	// Size is the encoded line's length in bytes, without its newline;
	// Max is the most the store accepts.
	Size, Max int
}

func (e *EventTooLargeError) Error() string {
	return fmt.Sprintf("session %s: the %s event %d is %d bytes encoded, more than the log's maximum line size of %d bytes; nothing of this append was written",
		e.Session, e.Type, e.Seq, e.Size, e.Max)
}

// StoreConfig configures the JSONL and memory stores ([NewJSONL],
// [NewMemory]). The zero value is the default.
type StoreConfig struct {
	// MaxLineSize is the longest line, in bytes without its newline, a
	// store writes or reads; 0 means the default, 16 MiB. Append refuses
	// a longer event with an error matching harness.CodeTooLarge, and
	// loading skips a longer line with a warning, without holding it in
	// memory; Create refuses a header line that is longer the same way.
	//
	// A negative size, or one shorter than the shortest header line of
	// the log format (80 bytes), can hold no log: every method of the
	// store then returns an error matching harness.CodeInvalidOption
	// saying so, and touches nothing.
	MaxLineSize int
	// ReleaseIdle makes a JSONL log let go of its file when it is told
	// the session is idle (Releaser: the agent tells it at the end of
	// each turn and once a session is started or resumed), and open it
	// again at its next write. An idle session then holds no open file,
	// which many sessions in one process need. The price: the lock that
	// keeps other processes from appending is let go with the file. While
	// the session is idle another process may open the log, and Delete
	// removes it; the log's next write then finds the file changed or
	// gone and fails with an error matching harness.CodeLocked, never
	// writing after someone else's events. The memory store ignores it.
	ReleaseIdle bool
}

// A Releaser is a Log that can let go of what it holds open while its
// session is idle: Release returns at once when it has nothing to let
// go of, and the log takes it again at its next write. See
// StoreConfig.ReleaseIdle.
type Releaser interface {
	Release() error
}

// storeConfig is a StoreConfig with its defaults filled in.
type storeConfig struct {
	maxLine int
	release bool
	// err is the StoreConfig's invalid value: every method of the store
	// returns it, so the first use reports the mistake.
	err error
}

// minLineSize is the shortest header line the log format allows (a
// one-letter id, no workspace, the zero time); a log line bound below it
// could hold no log at all. TestMinLineSize checks it.
const minLineSize = 80

func newStoreConfig(cfg StoreConfig) storeConfig {
	switch n := cfg.MaxLineSize; {
	case n == 0:
		return storeConfig{maxLine: storekit.DefaultMaxLineSize, release: cfg.ReleaseIdle}
	case n < minLineSize:
		return storeConfig{maxLine: storekit.DefaultMaxLineSize, err: &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf(
			"session: StoreConfig.MaxLineSize is %d: a log line must be allowed at least %d bytes (the shortest header line); use 0 for the default of %d", n, minLineSize, storekit.DefaultMaxLineSize)}}
	default:
		return storeConfig{maxLine: n, release: cfg.ReleaseIdle}
	}
}

// headerTooLarge refuses a header line longer than maxLine, which
// loading could not read back.
func headerTooLarge(h Header, line []byte, maxLine int) error {
	if len(line) <= maxLine {
		return nil
	}
	return &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
		"session %s: the header is %d bytes encoded, more than the log's maximum line size of %d bytes; nothing was written", h.ID, len(line), maxLine)}
}

// logState is what the logs of the JSONL and memory stores share: the
// header, the seq of the next event, the line bound, and the lock that
// orders the log's calls with the closed state it guards.
type logState struct {
	mu      sync.Mutex
	header  Header
	next    int64
	maxLine int
	closed  bool
}

func (l *logState) Header() Header { return l.header }

// lockOpen locks l for an append. When ctx is done or l is closed it
// returns why, with l unlocked.
func (l *logState) lockOpen(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return storeErr(harness.CodeClosed)
	}
	return nil
}

// ifOpen runs fn with l locked, unless l is closed.
func (l *logState) ifOpen(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return storeErr(harness.CodeClosed)
	}
	return fn()
}

// closeOnce marks l closed and runs fn with l locked; closing a closed
// log does nothing.
func (l *logState) closeOnce(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return fn()
}

// encodeBatch numbers payloads from next, stamps them with now and
// encodes each as a line, refusing the batch when one line is longer than
// maxLine.
func encodeBatch(id string, next int64, now time.Time, maxLine int, payloads []Payload) ([]Event, [][]byte, error) {
	events := make([]Event, len(payloads))
	lines := make([][]byte, len(payloads))
	for i, p := range payloads {
		if p == nil {
			return nil, nil, fmt.Errorf("session %s: appending a nil payload", id)
		}
		events[i] = Event{Seq: next + int64(i), Time: now, Data: p}
		line, err := events[i].MarshalJSON()
		if err != nil {
			return nil, nil, err
		}
		if len(line) > maxLine {
			return nil, nil, &harness.Error{Code: harness.CodeTooLarge, Err: &EventTooLargeError{Session: id, Seq: events[i].Seq, Type: p.eventType(), Size: len(line), Max: maxLine}}
		}
		lines[i] = line
	}
	return events, lines, nil
}

// appendBatch is encodeBatch appending the lines, each ended by a
// newline, to dst, with enc. On error it returns dst as it was.
func appendBatch(enc *eventEncoder, dst []byte, id string, next int64, now time.Time, maxLine int, payloads []Payload) ([]Event, []byte, error) {
	events := make([]Event, len(payloads))
	start := len(dst)
	for i, p := range payloads {
		if p == nil {
			return nil, dst[:start], fmt.Errorf("session %s: appending a nil payload", id)
		}
		events[i] = Event{Seq: next + int64(i), Time: now, Data: p}
		lineStart := len(dst)
		var err error
		if dst, err = enc.append(dst, events[i]); err != nil {
			return nil, dst[:start], err
		}
		if n := len(dst) - lineStart; n > maxLine {
			return nil, dst[:start], &harness.Error{Code: harness.CodeTooLarge, Err: &EventTooLargeError{Session: id, Seq: events[i].Seq, Type: p.eventType(), Size: n, Max: maxLine}}
		}
		dst = append(dst, '\n')
	}
	return events, dst, nil
}

// validID reports whether id can name a session (see Header.ID).
func validID(id string) bool { return storekit.ValidID(id) }

// newID returns a new session id that sorts by creation time:
// "20261129-192228-3f9a1c2b7d4e".
func newID(now time.Time) string { return storekit.NewID(now) }

// Below reports whether dir is workspace or a directory below it. Both are
// slash-separated paths, cleaned lexically before they are compared;
// "/a/bc" is not below "/a/b". A backslash is an ordinary character of a
// name, never a separator: the workspace "/w/a\.." is the directory
// named "a\.." in /w, not /w itself. An empty dir or workspace is below
// nothing and holds nothing.
func Below(dir, workspace string) bool {
	if dir == "" || workspace == "" {
		return false
	}
	dir, workspace = path.Clean(dir), path.Clean(workspace)
	if dir == workspace {
		return true
	}
	if workspace == "/" {
		return strings.HasPrefix(dir, "/")
	}
	return strings.HasPrefix(dir, workspace+"/")
}

// prepareHeader fills the zero fields of a header for Create.
func prepareHeader(h Header, now time.Time) (Header, error) {
	if h.Created.IsZero() {
		h.Created = now
	}
	h.Created = h.Created.UTC()
	if h.ID == "" {
		h.ID = newID(h.Created)
	}
	if !validID(h.ID) {
		return h, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), h.ID)
	}
	h.Format = storekit.FormatVersion
	return h, nil
}

// titleOf returns the first line of a user message, cut to 80 runes.
func titleOf(u *UserMessage) string {
	for _, c := range u.Content {
		if c.Text != "" {
			return storekit.Title(c.Text)
		}
	}
	return ""
}
