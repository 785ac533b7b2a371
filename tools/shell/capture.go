package shell

import (
	"context"
	"fmt"
	"github.com/go-harness/harness/internal/spillwriter"
	"strings"
	"sync"

	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// capture collects one output stream in bounded memory for the shell's
// view of it: a spillwriter.Writer keeps the first limit bytes and the last
// limit bytes and, once the stream outgrows limit, copies it whole, as it
// arrives, to the output store (when there is one, up to maxSpill bytes),
// so that the model can be shown the head and tail and read the rest
// later. capture adds the shell's accounting: the bytes written so far,
// the owner of the stream, and an end after which writes are dropped (a
// process may still print after its result was taken). It is safe for
// concurrent use.
type capture struct {
	mu       sync.Mutex
	limit    int
	w        *spillwriter.Writer
	noStore  bool
	owner    tools.Owner
	total    int64
	finished *spillInfo
	out      spillwriter.Output
	// live, when set, sees every write as it arrives (the call's
	// progress report); it must not block.
	live func(p []byte)
}

// spillInfo says what became of the whole stream.
type spillInfo struct {
	// Stored is set when the stream was saved (maybe only its first
	// part, when Cut).
	Stored *tools.Stored
	Err    error
	Cut    bool
	// NoStore reports that there was nowhere to save it.
	NoStore bool
}

// newCapture returns a capture showing up to limit bytes that spills to
// store (nil: nowhere) under owner. ctx bounds the store's Save.
func newCapture(ctx context.Context, limit int, store tools.OutputStore, owner tools.Owner, maxSpill int64) *capture {
	w, err := spillwriter.NewWriter(ctx, store, owner, limit, spillwriter.WithMaxSave(maxSpill))
	if err != nil {
		// The options were validated when the tool was built (the
		// output limit is at least spillwriter.MinThreshold, the spill cap
		// positive), so this is not reached; a writer with the defaults
		// keeps the stream working if it ever is.
		w, _ = spillwriter.NewWriter(ctx, store, owner, spillwriter.DefaultThreshold)
		limit = spillwriter.DefaultThreshold
	}
	return &capture{limit: limit, w: w, noStore: store == nil, owner: owner}
}

// Write keeps what it must of p and forwards p to the store once the
// stream is too long to show whole. It never fails: a store failure is
// remembered and reported by finish, and writes after finish are dropped.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) == 0 || c.finished != nil {
		return len(p), nil
	}
	c.total += int64(len(p))
	_, _ = c.w.Write(p) // fails only once closed, which finished rules out
	if c.live != nil {
		c.live(p)
	}
	return len(p), nil
}

// Total returns the number of bytes written.
func (c *capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// setOwner changes the owner a later spill is saved under.
func (c *capture) setOwner(o tools.Owner) {
	c.mu.Lock()
	c.owner = o
	c.w.SetOwner(o)
	c.mu.Unlock()
}

// finish ends the stream. When force is set and the stream was not saved
// yet, it is saved now (the whole of it is in memory then). finish waits
// for the store and returns what became of the stream; later writes are
// ignored.
func (c *capture) finish(force bool) spillInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished != nil {
		return *c.finished
	}
	if force && c.total > 0 {
		c.w.Save()
	}
	_ = c.w.Close() // the error is in the Output
	c.out = c.w.Output()
	info := spillInfo{NoStore: c.noStore, Err: c.out.Err, Cut: c.out.Cut}
	if c.out.Err == nil && c.out.Stored.Locator != "" {
		st := c.out.Stored
		info.Stored = &st
	}
	c.finished = &info
	return info
}

// take ends the stream and returns what the model sees of it, cut to
// budget bytes, with what became of the whole stream. A stream cut for
// the view is saved even when it is shorter than the limit, so that all
// of it can be read.
func (c *capture) take(budget int) (shown, spillInfo) {
	budget = min(budget, c.limit)
	info := c.finish(c.Total() > int64(budget))
	return c.view(budget), info
}

// shown is what the model sees of a stream.
type shown struct {
	Head    string
	Tail    string
	Omitted int64
	Total   int64
	Lines   int64
}

// view returns the finished stream cut to budget bytes: whole when it
// fits, otherwise a head (a fifth of the budget) and a tail, cut at line
// boundaries where possible.
func (c *capture) view(budget int) shown {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.out
	s := shown{Total: out.Size, Lines: out.Newlines}
	if out.Size <= int64(budget) {
		s.Head = out.Head
		return s
	}
	s.Head = textcut.HeadLines(out.Head, budget/5)
	s.Tail = textcut.TailLines(out.Tail, budget-len(s.Head))
	s.Omitted = out.Size - int64(len(s.Head)) - int64(len(s.Tail))
	return s
}

// split shares budget between two streams of sizes a and b: each gets
// what it needs up to half, and what one leaves goes to the other.
func split(budget int, a, b int64) (int, int) {
	half := int64(budget / 2)
	x := min(a, half)
	y := min(b, int64(budget)-x)
	x = min(a, int64(budget)-y)
	return int(x), int(y)
}

// writeStream appends a stream's view and its spill note to w.
func writeStream(w *strings.Builder, s shown, info spillInfo, what string) {
	w.WriteString(clean(s.Head))
	if s.Omitted > 0 {
		ensureNewline(w)
		fmt.Fprintf(w, "[... %s omitted ...]\n", units.Bytes(s.Omitted))
		w.WriteString(clean(s.Tail))
	}
	ensureNewline(w)
	if s.Omitted <= 0 {
		return
	}
	switch {
	case info.Stored != nil && info.Cut:
		fmt.Fprintf(w, "[%s was %s (%d lines); only its first %s were saved, as %s: read them with the read tool (file_path %q, offset and limit in lines).]\n",
			what, units.Bytes(s.Total), s.Lines, units.Bytes(info.Stored.Size), info.Stored.Locator, info.Stored.Locator)
	case info.Stored != nil:
		fmt.Fprintf(w, "[The whole %s (%s, %d lines) is saved as %s: read it with the read tool (file_path %q, offset and limit in lines).]\n",
			what, units.Bytes(s.Total), s.Lines, info.Stored.Locator, info.Stored.Locator)
	case info.Err != nil:
		fmt.Fprintf(w, "[The whole %s (%s) could not be saved (%v). To see all of it, run the command again with its output redirected to a file, then read the file.]\n",
			what, units.Bytes(s.Total), info.Err)
	default:
		fmt.Fprintf(w, "[The whole %s (%s) was not saved. To see all of it, run the command again with its output redirected to a file, then read the file.]\n",
			what, units.Bytes(s.Total))
	}
}

func ensureNewline(w *strings.Builder) {
	if w.Len() > 0 && !strings.HasSuffix(w.String(), "\n") {
		w.WriteByte('\n')
	}
}

// clean makes terminal output readable as text: invalid UTF-8 replaced,
// every ECMA-48 control sequence and C1 control dropped, CRLF read as LF,
// and a line redrawn with carriage returns (a progress bar) reduced to its
// last state. The result holds no ESC, no C1 control (U+0080 to U+009F)
// and no carriage return, so cleaning it again changes nothing.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if hasControlSequence(s) {
		s = stripControls(s)
	}
	return collapseCR(s)
}

// collapseCR reads CRLF as LF and keeps, of a line redrawn with carriage
// returns, what was written after the last one.
func collapseCR(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for line := range strings.SplitAfterSeq(s, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		line = strings.TrimRight(line, "\r")
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		b.WriteString(line)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Control characters that take part in control sequences.
const (
	esc = 0x1b
	bel = 0x07
	can = 0x18 // cancels a sequence
	sub = 0x1a // cancels a sequence
)

// hasControlSequence reports whether valid UTF-8 s holds an ESC or a C1
// control (U+0080 to U+009F, encoded as C2 80 to C2 9F).
func hasControlSequence(s string) bool {
	if strings.IndexByte(s, esc) >= 0 {
		return true
	}
	for i := 0; ; {
		j := strings.IndexByte(s[i:], 0xc2)
		if j < 0 {
			return false
		}
		i += j + 1
		if i < len(s) && s[i] <= 0x9f {
			return true
		}
	}
}

// stripControls drops from valid UTF-8 s every control sequence of
// ECMA-48, read the way terminals read them: CSI (ESC [ or U+009B)
// parameters, intermediates and a final byte; OSC (ESC ] or U+009D) up to
// BEL or ST; DCS, SOS, PM and APC (ESC P, X, ^, _ or their C1 forms) up
// to ST (ESC \ or U+009C); escape sequences of ESC, intermediates and a
// final byte; and the other C1 controls. As in a terminal, ESC inside a
// sequence ends it and starts the next, CAN and SUB cancel it, and the
// other C0 controls inside a CSI or escape sequence still count as
// text (a newline stays a newline). An unterminated string runs to the
// end. A lone ESC is dropped.
func stripControls(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == esc:
			i = skipEscape(&b, s, i+1)
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			i = skipC1(&b, s, s[i+1], i+2)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// skipEscape skips the sequence whose ESC came just before s[i] and
// returns where the text goes on.
func skipEscape(b *strings.Builder, s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(b, s, i+1)
	case c == ']':
		return skipString(s, i+1, true)
	case c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1, false)
	case c >= 0x20 && c <= 0x2f: // intermediates, then a final byte
		return skipToFinal(b, s, i, 0x30)
	case c >= 0x30 && c <= 0x7e: // a two-byte sequence
		return i + 1
	default:
		return i // a lone ESC; what follows is text or the next sequence
	}
}

// skipC1 skips the C1 control c (its second UTF-8 byte) and, for one
// that introduces a sequence, the sequence, which goes on at s[i].
func skipC1(b *strings.Builder, s string, c byte, i int) int {
	switch c {
	case 0x9b: // CSI
		return skipCSI(b, s, i)
	case 0x9d: // OSC
		return skipString(s, i, true)
	case 0x90, 0x98, 0x9e, 0x9f: // DCS, SOS, PM, APC
		return skipString(s, i, false)
	default:
		return i
	}
}

// skipCSI skips the parameters, intermediates and final byte of a CSI
// sequence that goes on at s[i].
func skipCSI(b *strings.Builder, s string, i int) int { return skipToFinal(b, s, i, 0x40) }

// skipToFinal skips the rest of a sequence that goes on at s[i], up to
// and with its final byte: bytes from 0x20 to below final (and DEL) go
// on, a byte from final to 0x7e ends it, CAN and SUB cancel it.
func skipToFinal(b *strings.Builder, s string, i int, final byte) int {
	for i < len(s) {
		switch c := s[i]; {
		case c >= 0x20 && c < final || c == 0x7f:
			i++
		case c >= final && c <= 0x7e:
			return i + 1
		case c == can || c == sub:
			return i + 1
		case c < 0x20 && c != esc:
			b.WriteByte(c) // executed as in a terminal
			i++
		default:
			return i // ESC starts the next sequence; other bytes are text
		}
	}
	return i
}

// skipString skips the body of a control string (OSC, DCS, SOS, PM,
// APC) that goes on at s[i] and its terminator: ST (ESC \ or U+009C),
// BEL for an OSC, CAN or SUB. ESC followed by anything but \ also ends
// it, and starts the next sequence.
func skipString(s string, i int, osc bool) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == bel && osc:
			return i + 1
		case c == can || c == sub:
			return i + 1
		case c == esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		case c == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		default:
			i++
		}
	}
	return i
}
