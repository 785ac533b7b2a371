package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// JSONL is the default Store: one append-only JSON Lines file per session
// in a directory. The first line is the header; every further line is one
// event. Files are created 0600 in a 0700 directory.
//
// A log is open for appending in at most one place at a time (an advisory
// file lock on Unix); Load works at any time, also while another process
// appends.
type JSONL struct {
	dir string
	now func() time.Time
}

// NewJSONL returns a store keeping its logs in dir, which is created on
// first use.
func NewJSONL(dir string) *JSONL { return &JSONL{dir: dir, now: time.Now} }

// Dir returns the store's directory.
func (s *JSONL) Dir() string { return s.dir }

// Path returns the file that holds session id.
func (s *JSONL) Path(id string) string { return filepath.Join(s.dir, id+".jsonl") }

// Create implements Store. The header is written and synced to a
// temporary file that is then linked under the session's name, so a
// crash never leaves a log without its header behind.
func (s *JSONL) Create(ctx context.Context, h Header) (Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := prepareHeader(h, s.now())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: creating store directory: %w", err)
	}
	line, err := marshalHeader(h)
	if err != nil {
		return nil, fmt.Errorf("session: encoding header: %w", err)
	}
	line = append(line, '\n')
	var f *os.File
	if runtime.GOOS == "windows" {
		f, err = s.createInPlace(h.ID, line)
	} else {
		f, err = s.createLinked(h.ID, line)
	}
	if err != nil {
		return nil, err
	}
	return &jsonlLog{f: f, header: h, next: 1, now: s.now}, nil
}

// tempPrefix starts the names of files Create has not finished; List and
// Search skip them, Prune removes old ones.
const tempPrefix = ".create-"

// createLinked writes the header to a temporary file, syncs it, and links
// it under the log's name, which fails if the name is taken.
func (s *JSONL) createLinked(id string, header []byte) (*os.File, error) {
	if _, err := os.Lstat(s.Path(id)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, id)
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+id+"-*")
	if err != nil {
		return nil, fmt.Errorf("session: creating log: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	if err := lockFile(f); err != nil {
		return fail(fmt.Errorf("session %s: %w", id, err))
	}
	if _, err := f.Write(header); err != nil {
		return fail(fmt.Errorf("session: writing header: %w", err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("session: writing header: %w", err))
	}
	if err := os.Link(tmp, s.Path(id)); err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return fail(fmt.Errorf("%w: %s", ErrExists, id))
		}
		f.Close()
		// No hard links here (some file systems): write in place.
		return s.createInPlace(id, header)
	}
	if err := syncDir(s.dir); err != nil {
		return fail(fmt.Errorf("session: writing header: %w", err))
	}
	return f, nil
}

// createInPlace creates the log under its name and writes the header.
func (s *JSONL) createInPlace(id string, header []byte) (*os.File, error) {
	f, err := os.OpenFile(s.Path(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, iofs.ErrExist) {
		return nil, fmt.Errorf("%w: %s", ErrExists, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: creating log: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	_, err = f.Write(header)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = syncDir(s.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(s.Path(id))
		return nil, fmt.Errorf("session: writing header: %w", err)
	}
	return f, nil
}

// Open implements Store. A torn last line (a crash mid-write) is kept in
// the file as it is, ended with a newline so new events start on a line of
// their own; loading skips it with a warning.
func (s *JSONL) Open(ctx context.Context, id string) (Log, *Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if !ValidID(id) {
		return nil, nil, fmt.Errorf("%w: %q", ErrInvalid, id)
	}
	f, err := os.OpenFile(s.Path(id), os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session %s: opening log: %w", id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session %s: %w", id, err)
	}
	t, endsInNewline, err := readTranscript(ctx, f, id)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !endsInNewline {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("session %s: ending torn line: %w", id, err)
		}
	}
	next := int64(1)
	if n := len(t.Events); n > 0 {
		next = t.Events[n-1].Seq + 1
	}
	return &jsonlLog{f: f, header: t.Header, next: next, now: s.now}, t, nil
}

// Load implements Store.
func (s *JSONL) Load(ctx context.Context, id string) (*Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !ValidID(id) {
		return nil, fmt.Errorf("%w: %q", ErrInvalid, id)
	}
	f, err := os.Open(s.Path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: opening log: %w", id, err)
	}
	defer f.Close()
	t, _, err := readTranscript(ctx, f, id)
	return t, err
}

// List implements Store. It reads each log's header and only as much more
// as it takes to find the first user message.
func (s *JSONL) List(ctx context.Context, opts ListOptions) ([]Info, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: listing %s: %w", s.dir, err)
	}
	var out []Info
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || !ValidID(id) {
			continue
		}
		info, err := s.describe(id, opts.Workspace)
		if err != nil {
			continue // not a readable session log; Load reports why
		}
		if info != nil {
			out = append(out, *info)
		}
	}
	sortInfos(out)
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// describe reads the header and title of one log; nil when the workspace
// filter excludes it.
func (s *JSONL) describe(id, workspace string) (*Info, error) {
	f, err := os.Open(s.Path(id))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 16<<10)
	line, err := readLine(br)
	if err != nil && len(line) == 0 {
		return nil, err
	}
	h, err := parseHeader(line, id)
	if err != nil {
		return nil, err
	}
	if workspace != "" && !Below(h.Cwd, workspace) {
		return nil, nil
	}
	info := &Info{Header: h, Updated: st.ModTime().UTC(), Size: st.Size()}
	// The first user message is near the top; stop looking after a while.
	for range 64 {
		line, err := readLine(br)
		if len(line) > 0 && bytes.Contains(line, []byte(`"type":"user"`)) {
			var e Event
			if json.Unmarshal(line, &e) == nil {
				if u, ok := e.Data.(*UserMessage); ok {
					info.Title = titleOf(u)
					break
				}
			}
		}
		if err != nil {
			break
		}
	}
	return info, nil
}

// Delete implements Store.
func (s *JSONL) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !ValidID(id) {
		return fmt.Errorf("%w: %q", ErrInvalid, id)
	}
	err := os.Remove(s.Path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return err
}

type jsonlLog struct {
	mu     sync.Mutex
	f      *os.File
	header Header
	next   int64
	now    func() time.Time
	buf    []byte
	err    error // sticky write error: the file may hold a torn line
	closed bool
}

func (l *jsonlLog) Header() Header { return l.header }

func (l *jsonlLog) Append(ctx context.Context, payloads ...Payload) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if l.err != nil {
		return nil, fmt.Errorf("session %s: log unusable after an earlier write failure: %w", l.header.ID, l.err)
	}
	now := l.now().UTC()
	events := make([]Event, len(payloads))
	buf := l.buf[:0]
	for i, p := range payloads {
		events[i] = Event{Seq: l.next + int64(i), Time: now, Data: p}
		line, err := events[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, line...), '\n')
	}
	if _, err := l.f.Write(buf); err != nil {
		l.err = err
		return nil, fmt.Errorf("session %s: appending: %w", l.header.ID, err)
	}
	if cap(buf) <= 1<<20 {
		l.buf = buf
	}
	l.next += int64(len(payloads))
	return events, nil
}

func (l *jsonlLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.f.Sync()
}

func (l *jsonlLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.f.Sync()
	return errors.Join(err, l.f.Close())
}

type headerLine struct {
	Type string `json:"type"`
	Header
}

func marshalHeader(h Header) ([]byte, error) {
	return marshalNoEscape(headerLine{Type: "session", Header: h})
}

func parseHeader(line []byte, id string) (Header, error) {
	var hl headerLine
	if err := json.Unmarshal(bytes.TrimSpace(line), &hl); err != nil || hl.Type != "session" {
		return Header{}, fmt.Errorf("session %s: the first line is not a session header", id)
	}
	if hl.Format != FormatVersion {
		return Header{}, &FormatError{ID: id, Format: hl.Format, Supported: FormatVersion}
	}
	return hl.Header, nil
}

// readLine reads one line without its newline. At the end of the input it
// returns the last, unterminated bytes with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadBytes('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	return line, err
}

// readTranscript parses a whole log. It reports whether the input ends
// with a newline (false means a torn last line, or an empty file).
func readTranscript(ctx context.Context, r io.Reader, id string) (*Transcript, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := readLine(br)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("session %s: reading log: %w", id, err)
	}
	if len(bytes.TrimSpace(first)) == 0 {
		return nil, false, fmt.Errorf("session %s: the log is empty (no header line)", id)
	}
	h, herr := parseHeader(first, id)
	if herr != nil {
		return nil, false, herr
	}
	t := &Transcript{Header: h}
	if errors.Is(err, io.EOF) {
		return t, false, nil
	}
	lineNo := 1
	var prev int64
	for {
		if lineNo%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		line, err := readLine(br)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil, false, fmt.Errorf("session %s: reading log: %w", id, err)
		}
		if eof && len(line) == 0 {
			return t, true, nil
		}
		lineNo++
		if len(bytes.TrimSpace(line)) > 0 {
			var e Event
			if uerr := json.Unmarshal(line, &e); uerr != nil {
				msg := fmt.Sprintf("unreadable event skipped (%d bytes): %v", len(line), uerr)
				switch {
				case eof:
					msg = fmt.Sprintf("torn last line dropped (%d bytes, an interrupted write)", len(line))
				case truncatedJSON(uerr, line):
					// Open ended an earlier torn last line so appending
					// could go on; it stays in the file, unreadable.
					msg = fmt.Sprintf("torn line skipped (%d bytes, a write cut short by a crash)", len(line))
				}
				t.Warnings = append(t.Warnings, Warning{Line: lineNo, Message: msg})
			} else {
				if u, ok := e.Data.(*Unknown); ok {
					t.Warnings = append(t.Warnings, Warning{Line: lineNo,
						Message: fmt.Sprintf("event %d has type %q, unknown to this build; skipped", e.Seq, u.Type)})
				}
				if prev > 0 && e.Seq != prev+1 {
					t.Warnings = append(t.Warnings, Warning{Line: lineNo,
						Message: fmt.Sprintf("sequence jumps from %d to %d", prev, e.Seq)})
				}
				prev = e.Seq
				t.Events = append(t.Events, e)
			}
		}
		if eof {
			return t, false, nil
		}
	}
}

// truncatedJSON reports that err says line ends in the middle of a JSON
// value: the line is the start of an event whose write was cut short.
func truncatedJSON(err error, line []byte) bool {
	var syn *json.SyntaxError
	return errors.As(err, &syn) && syn.Offset >= int64(len(bytes.TrimRight(line, " \t\r"))) &&
		strings.Contains(syn.Error(), "unexpected end")
}

func sortInfos(infos []Info) {
	sort.SliceStable(infos, func(i, j int) bool {
		a, b := infos[i], infos[j]
		if !a.Updated.Equal(b.Updated) {
			return a.Updated.After(b.Updated)
		}
		if !a.Header.Created.Equal(b.Header.Created) {
			return a.Header.Created.After(b.Header.Created)
		}
		return a.Header.ID > b.Header.ID
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
