package session

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/go-harness/harness/session/internal/storekit"
)

// lineReader reads the lines of a log in bounded memory: a line longer
// than max is streamed past, never held whole.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// rawLine is one line of a log.
type rawLine struct {
	// data is the line without its newline; nil when the line is long.
	data []byte
	// size is the line's length in bytes, without its newline.
	size int64
	// long reports a line longer than the reader's maximum; head then
	// holds its first bytes.
	long bool
	head []byte
	// terminated reports that a newline ended the line (false for the
	// last, unterminated bytes of the input).
	terminated bool
}

// longLineHead is how much of a long line is kept to say what it was.
const longLineHead = 256

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = storekit.DefaultMaxLineSize
	}
	return &lineReader{br: bufio.NewReaderSize(r, readBufferSize(r)), max: max}
}

// Bounds of a lineReader's buffer.
const (
	maxReadBuffer = 256 << 10 // what a long log is read with
	minReadBuffer = 4 << 10
)

// readBufferSize returns the buffer to read r with: the whole file and
// a byte when r is a file smaller than maxReadBuffer, so that resuming
// thousands of short sessions does not allocate and clear a buffer a
// long log needs, for each (issue 38). A file that grows while it is
// read gets its longer lines copied, as a line longer than the buffer
// always is.
func readBufferSize(r io.Reader) int {
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return int(min(maxReadBuffer, max(minReadBuffer, fi.Size()+1)))
		}
	}
	return maxReadBuffer
}

// next returns the next line, or io.EOF when the input has no more bytes.
// The line's data is valid until the next call.
func (r *lineReader) next() (rawLine, error) {
	var ln rawLine
	r.buf = r.buf[:0]
	for first := true; ; first = false {
		frag, err := r.br.ReadSlice('\n')
		if first && err == nil && len(frag) <= r.max+1 {
			// The whole line is in the reader's buffer: no copy.
			frag = frag[:len(frag)-1]
			return rawLine{data: frag, size: int64(len(frag)), terminated: true}, nil
		}
		if err == nil {
			frag = frag[:len(frag)-1]
			ln.terminated = true
		}
		ln.size += int64(len(frag))
		switch {
		case ln.long:
		case len(r.buf)+len(frag) > r.max:
			ln.long = true
			keep := min(len(r.buf), longLineHead)
			ln.head = append(append(make([]byte, 0, longLineHead), r.buf[:keep]...), frag[:min(len(frag), longLineHead-keep)]...)
			r.buf = r.buf[:0]
		default:
			r.buf = append(r.buf, frag...)
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if ln.size == 0 {
				return rawLine{}, io.EOF
			}
		default:
			return rawLine{}, err
		}
		if !ln.long {
			ln.data = r.buf
		}
		return ln, nil
	}
}

// loaded is a transcript as read from a log.
type loaded struct {
	t *Transcript
	// endsInNewline is false for a torn last line, or a log whose header
	// line has no newline.
	endsInNewline bool
	// next is the sequence number to append with: one above the highest
	// seen.
	next int64
}

// readTranscript parses a whole log in memory bounded by maxLine.
//
// Loading never refuses a log for what it holds after a valid header: a
// line that does not decode, is longer than maxLine or has a type this
// build does not know, a block or content item without its payload, and
// sequence numbers that do not increase are each reported in a warning
// that says what was skipped and where, and everything else is kept.
func readTranscript(ctx context.Context, r io.Reader, id string, maxLine int) (loaded, error) {
	lr := newLineReader(r, maxLine)
	first, err := lr.next()
	switch {
	case errors.Is(err, io.EOF):
		return loaded{}, fmt.Errorf("session %s: the log is empty (no header line)", id)
	case err != nil:
		return loaded{}, fmt.Errorf("session %s: reading log: %w", id, err)
	case first.long:
		return loaded{}, fmt.Errorf("session %s: the first line is not a session header (%d bytes, more than the maximum line size of %d)", id, first.size, lr.max)
	case len(bytes.TrimSpace(first.data)) == 0:
		return loaded{}, fmt.Errorf("session %s: the log is empty (no header line)", id)
	}
	h, err := parseHeader(first.data, id)
	if err != nil {
		return loaded{}, err
	}
	ld := loaded{t: &Transcript{Header: h}, next: 1}
	if !first.terminated {
		return ld, nil
	}
	sq := seqCheck{t: ld.t}
	st := newDecodeState()
	lineNo := 1
	for {
		if lineNo%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return loaded{}, err
			}
		}
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			ld.endsInNewline = true
			break
		}
		if err != nil {
			return loaded{}, fmt.Errorf("session %s: reading log: %w", id, err)
		}
		lineNo++
		switch {
		case ln.long:
			ld.t.skipLong(lineNo, ln, lr.max, &sq)
		case len(bytes.TrimSpace(ln.data)) > 0:
			ld.t.addLine(lineNo, ln, &sq, st)
		}
		if !ln.terminated {
			break
		}
	}
	ld.next = max(sq.highest, 0) + 1
	return ld, nil
}

func (t *Transcript) warn(line int, format string, args ...any) {
	t.Warnings = append(t.Warnings, Warning{Line: line, Message: fmt.Sprintf(format, args...)})
}

// skipLong reports a line too long to read.
func (t *Transcript) skipLong(lineNo int, ln rawLine, max int, sq *seqCheck) {
	seq, typ, ok := peekEvent(ln.head)
	what := "a line"
	if ok {
		what = fmt.Sprintf("event %d (%s)", seq, typ)
	}
	if !ln.terminated {
		t.warn(lineNo, "%s of %d bytes at the end of the log, without a newline and more than the maximum line size of %d bytes, skipped unread", what, ln.size, max)
		return
	}
	t.warn(lineNo, "%s of %d bytes, more than the maximum line size of %d bytes, skipped unread", what, ln.size, max)
	if ok {
		// The event is in the log; numbering must not reuse its seq.
		sq.see(lineNo, seq)
	}
}

// addLine decodes one event line and keeps the event, cleaned of what
// would break the derived history.
func (t *Transcript) addLine(lineNo int, ln rawLine, sq *seqCheck, st *decodeState) {
	e, err := decodeEvent(ln.data, st)
	if err != nil {
		switch {
		case !ln.terminated:
			t.warn(lineNo, "torn last line dropped (%d bytes, an interrupted write)", len(ln.data))
		case truncatedJSON(err, ln.data):
			// Open ended an earlier torn last line so appending could go
			// on; it stays in the file, unreadable.
			t.warn(lineNo, "torn line skipped (%d bytes, a write cut short by a crash)", len(ln.data))
		default:
			t.warn(lineNo, "unreadable event skipped (%d bytes): %v", len(ln.data), err)
		}
		return
	}
	sq.see(lineNo, e.Seq)
	if u, ok := e.Data.(*Unknown); ok {
		t.warn(lineNo, "event %d has type %q, unknown to this build; skipped", e.Seq, u.Type)
		t.Events = append(t.Events, e)
		return
	}
	p, problems, keep := cleanPayload(e.Data)
	for _, pr := range problems {
		if keep {
			t.warn(lineNo, "event %d (%s): %s; skipped", e.Seq, e.Type(), pr)
		} else {
			t.warn(lineNo, "event %d (%s) skipped: %s", e.Seq, e.Type(), pr)
		}
	}
	if keep {
		e.Data = p
		t.Events = append(t.Events, e)
	}
}

// seqCheck follows the sequence numbers of a log as it is read.
type seqCheck struct {
	t       *Transcript
	seen    bool
	highest int64
}

// see checks the next sequence number: the first must be 1, and each must
// be one above the highest before it. Gaps and numbers that do not
// increase are reported; appending continues after the highest.
func (c *seqCheck) see(lineNo int, seq int64) {
	switch {
	case !c.seen && seq <= 0:
		c.t.warn(lineNo, "the first event has seq %d; sequence numbers start at 1", seq)
	case !c.seen && seq != 1:
		c.t.warn(lineNo, "the first event has seq %d; sequence numbers start at 1, so events before it are missing", seq)
	case c.seen && seq <= c.highest:
		c.t.warn(lineNo, "seq %d does not increase (an earlier event has seq %d); kept, and new events are numbered after %d", seq, c.highest, c.highest)
	case c.seen && seq != c.highest+1:
		c.t.warn(lineNo, "sequence jumps from %d to %d", c.highest, seq)
	}
	if !c.seen || seq > c.highest {
		c.highest = seq
	}
	c.seen = true
}

// peekEvent reads the seq and type of an event line from its start, as
// Event.MarshalJSON writes it: {"seq":N,"time":"...","type":"T",...
func peekEvent(head []byte) (int64, string, bool) {
	rest, ok := bytes.CutPrefix(head, []byte(`{"seq":`))
	if !ok {
		return 0, "", false
	}
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, "", false
	}
	seq, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return 0, "", false
	}
	i := bytes.Index(rest, []byte(`"type":"`))
	if i < 0 {
		return 0, "", false
	}
	typ := rest[i+len(`"type":"`):]
	j := bytes.IndexByte(typ, '"')
	if j <= 0 || j > 64 {
		return 0, "", false
	}
	return seq, string(typ[:j]), true
}
