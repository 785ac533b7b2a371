package fs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unicode/utf8"

	"github.com/go-harness/harness"
)

// Defaults of a text window, as the read tool uses them.
const (
	// DefaultLimit is the default and the usual maximum number of lines
	// in one window.
	DefaultLimit = 2000
	// DefaultMaxLineRunes is the number of characters after which a line
	// is cut.
	DefaultMaxLineRunes = 2000
	// DefaultMaxBytes bounds the selected text of one window: the bytes of
	// its lines, one newline each.
	DefaultMaxBytes = 50 << 10
)

// binaryProbe is how many leading bytes are searched for a NUL byte, which
// marks a file as binary whatever window is asked for.
const binaryProbe = 8 << 10

// bom is the UTF-8 byte order mark.
const bom = "\uFEFF"

// Window selects lines of a text file. Zero fields take the defaults.
type Window struct {
	// Offset is the 1-based number of the first line; 0 means 1.
	Offset int
	// Limit is the largest number of lines returned; 0 means
	// DefaultLimit.
	Limit int
	// MaxLineRunes cuts longer lines; 0 means DefaultMaxLineRunes.
	MaxLineRunes int
	// MaxBytes bounds the selected text; 0 means DefaultMaxBytes. The
	// first line of a window is always returned (cut to MaxLineRunes), so
	// a window is never empty because of this bound.
	MaxBytes int
}

func (w Window) normalized() Window {
	if w.Offset <= 0 {
		w.Offset = 1
	}
	if w.Limit <= 0 {
		w.Limit = DefaultLimit
	}
	if w.MaxLineRunes <= 0 {
		w.MaxLineRunes = DefaultMaxLineRunes
	}
	if w.MaxBytes <= 0 {
		w.MaxBytes = DefaultMaxBytes
	}
	return w
}

// Line is one line of a window, without its line ending.
type Line struct {
	// Text is the line, cut after MaxLineRunes characters.
	Text string
	// Cut is the number of characters cut off the end; 0 for a whole
	// line.
	Cut int64
}

// Text is a window of a text file.
type Text struct {
	// Info describes the file; FileSystem.ReadText sets it, with the
	// version of the bytes scanned. ScanText leaves it zero.
	Info FileInfo
	// Lines are the selected lines. A UTF-8 byte order mark is not part
	// of the first line, and a carriage return before a line feed is not
	// part of any line.
	Lines []Line
	// Offset is the 1-based number of Lines[0].
	Offset int
	// TotalLines is the exact number of lines of the file. A final line
	// without a line feed counts; an empty file has none.
	TotalLines int
	// Size is the number of bytes scanned.
	Size int64
	// Capped reports that MaxBytes ended the window before Limit lines
	// or the end of the file.
	Capped bool
	// CRLF reports that most line endings among the selected lines are
	// CR LF.
	CRLF bool
	// BOM reports that the file starts with a UTF-8 byte order mark.
	BOM bool
}

// scanChunk is the largest read size of ScanText. Its first read is the
// size of r where r says it (a Len method, or an *io.LimitedReader), and
// scanFirst otherwise; each read that fills the buffer makes the next one
// four times larger, up to scanChunk. A small file thus costs a small
// buffer, not scanChunk (an agent reads many).
const (
	scanChunk = 256 << 10
	scanFirst = 8 << 10
)

// firstRead returns the size of ScanText's first read of r.
func firstRead(r io.Reader) int {
	n := int64(-1)
	switch r := r.(type) {
	case *io.LimitedReader:
		n = r.N
	case interface{ Len() int }:
		n = int64(r.Len())
	}
	if n < 0 {
		return scanFirst
	}
	// One byte more than r holds: the read that returns it all does not
	// fill the buffer, so the buffer never grows.
	return int(min(max(n+1, 512), scanChunk))
}

// ScanText reads r to its end and returns the window w of its lines.
//
// Lines end at a line feed; a carriage return before it is dropped. The text
// must be UTF-8: a NUL byte in the first binaryProbe bytes or in a selected
// line, or invalid UTF-8 in a selected line, fails with harness.CodeNotText. An
// Offset beyond the last line fails with harness.CodePastEnd and the total in
// PathError.Total (Offset 1 of an empty file is fine).
//
// Memory stays bounded whatever r holds: one read buffer (no larger than
// r where r says its size), the selected lines, and one line being cut. The total line count is exact. ctx is
// checked between reads; when it ends the scan fails with harness.CodeAborted
// (harness.CodeTimeout for an expired deadline).
func ScanText(ctx context.Context, r io.Reader, w Window) (*Text, error) {
	w = w.normalized()
	s := &scanner{w: w, t: &Text{Offset: w.Offset}, windowEnd: int64(w.Offset) + int64(w.Limit) - 1}
	br := bufio.NewReaderSize(r, 16)
	if head, _ := br.Peek(len(bom)); string(head) == bom {
		s.t.BOM = true
		br.Discard(len(bom))
		s.pos = int64(len(bom))
	}
	buf := make([]byte, firstRead(r))
	for {
		if err := ctx.Err(); err != nil {
			return nil, NewError(harness.CodeOf(err), &PathError{Op: "read", Err: err})
		}
		n, err := br.Read(buf)
		if n > 0 {
			if e := s.chunk(buf[:n]); e != nil {
				return nil, e
			}
		}
		if n == len(buf) && len(buf) < scanChunk {
			buf = make([]byte, min(4*len(buf), scanChunk)) // the scanner keeps no part of a chunk
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, NewError(codeOf(err), &PathError{Op: "read", Err: err})
		}
	}
	return s.finish()
}

type scanner struct {
	w         Window
	t         *Text
	windowEnd int64 // last line number of the window
	nl        int64 // line feeds seen
	pos       int64 // bytes consumed
	content   bool  // any byte after the BOM
	last      byte  // last byte consumed
	done      bool  // window complete

	line     []byte // kept bytes of the current window line
	runes    int    // characters kept
	cut      int64  // characters dropped
	cutEndCR bool   // the dropped tail ends with '\r'
	started  bool   // the current window line has begun
	shown    int    // selected bytes so far
	crlf, lf int
}

func (s *scanner) chunk(p []byte) error {
	if s.pos < binaryProbe {
		probe := p[:min(int64(len(p)), binaryProbe-s.pos)]
		if i := bytes.IndexByte(probe, 0); i >= 0 {
			return NewError(harness.CodeNotText, &PathError{Op: "read", Detail: fmt.Sprintf("NUL byte at byte offset %d: the file is binary", s.pos+int64(i))})
		}
	}
	s.pos += int64(len(p))
	s.content = true
	s.last = p[len(p)-1]
	for len(p) > 0 {
		cur := s.nl + 1
		if s.done || cur > s.windowEnd {
			s.nl += int64(bytes.Count(p, nl))
			return nil
		}
		if cur < int64(s.w.Offset) {
			need := int64(s.w.Offset) - cur
			c := int64(bytes.Count(p, nl))
			if c < need {
				s.nl += c
				return nil
			}
			for ; need > 0; need-- {
				i := bytes.IndexByte(p, '\n')
				p = p[i+1:]
				s.nl++
			}
			continue
		}
		s.started = true
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			return nil
		}
		s.keep(p[:i])
		p = p[i+1:]
		if err := s.endLine(true); err != nil {
			return err
		}
		s.nl++
	}
	return nil
}

var nl = []byte{'\n'}

// keep adds seg to the current line, keeping at most MaxLineRunes
// characters and counting the rest.
func (s *scanner) keep(seg []byte) {
	if len(seg) == 0 {
		return
	}
	if s.cut == 0 {
		i := 0
		for ; i < len(seg); i++ {
			if utf8.RuneStart(seg[i]) {
				if s.runes == s.w.MaxLineRunes {
					break
				}
				s.runes++
			}
		}
		s.line = append(s.line, seg[:i]...)
		seg = seg[i:]
		if len(seg) == 0 {
			return
		}
	}
	s.cut += int64(len(seg)) - continuationBytes(seg)
	s.cutEndCR = seg[len(seg)-1] == '\r'
}

// endLine completes the current window line.
func (s *scanner) endLine(feed bool) error {
	lineNo := s.nl + 1
	text := s.line
	if feed {
		switch {
		case s.cut > 0 && s.cutEndCR:
			s.cut--
			s.crlf++
		case s.cut == 0 && len(text) > 0 && text[len(text)-1] == '\r':
			text = text[:len(text)-1]
			s.crlf++
		default:
			s.lf++
		}
	}
	if len(s.t.Lines) > 0 && s.shown+len(text)+1 > s.w.MaxBytes {
		s.t.Capped = true
		s.done = true
	} else {
		if bytes.IndexByte(text, 0) >= 0 {
			return NewError(harness.CodeNotText, &PathError{Op: "read", Lines: []int{int(lineNo)}, Detail: fmt.Sprintf("line %d contains a NUL byte", lineNo)})
		}
		if !utf8.Valid(text) {
			return NewError(harness.CodeNotText, &PathError{Op: "read", Lines: []int{int(lineNo)}, Detail: fmt.Sprintf("line %d is not valid UTF-8", lineNo)})
		}
		s.t.Lines = append(s.t.Lines, Line{Text: string(text), Cut: s.cut})
		s.shown += len(text) + 1
		if len(s.t.Lines) >= s.w.Limit {
			s.done = true
		}
	}
	s.line, s.runes, s.cut, s.cutEndCR, s.started = s.line[:0], 0, 0, false, false
	return nil
}

func (s *scanner) finish() (*Text, error) {
	t := s.t
	t.Size = s.pos
	t.TotalLines = int(s.nl)
	if s.content && s.last != '\n' {
		t.TotalLines++
		if s.started && !s.done {
			if err := s.endLine(false); err != nil {
				return nil, err
			}
		}
	}
	t.CRLF = s.crlf > s.lf
	if t.Offset > t.TotalLines && !(t.Offset == 1 && t.TotalLines == 0) {
		return nil, NewError(harness.CodePastEnd, &PathError{Op: "read", Total: int64(t.TotalLines),
			Detail: fmt.Sprintf("offset %d is past the end: the file has %d lines", t.Offset, t.TotalLines)})
	}
	return t, nil
}

// continuationBytes counts the UTF-8 continuation bytes (10xxxxxx) of p,
// eight bytes at a time.
func continuationBytes(p []byte) int64 {
	const hi = 0x8080808080808080
	var n int
	for len(p) >= 8 {
		x := binary.LittleEndian.Uint64(p)
		n += bits.OnesCount64(x & ^(x << 1) & hi)
		p = p[8:]
	}
	for _, b := range p {
		if b&0xC0 == 0x80 {
			n++
		}
	}
	return int64(n)
}
