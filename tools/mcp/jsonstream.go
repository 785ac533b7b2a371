package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonStream reads one JSON value from a stream in bounded memory: small
// values are captured, large ones skipped, and strings decoded straight
// into a writer. It reads a tool result too large to decode in memory
// from the file it was spooled to.
type jsonStream struct {
	r   *bufio.Reader
	off int64 // bytes consumed
}

func newJSONStream(r io.Reader) *jsonStream {
	return &jsonStream{r: bufio.NewReaderSize(r, 64<<10)}
}

// errTooBig is returned by small for a value longer than its limit,
// which it has skipped.
var errTooBig = errors.New("mcp: a JSON value is larger than expected")

func (j *jsonStream) syntax(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", j.off, fmt.Sprintf(format, args...))
}

func (j *jsonStream) readByte() (byte, error) {
	c, err := j.r.ReadByte()
	if err == nil {
		j.off++
	} else if err == io.EOF {
		err = fmt.Errorf("incomplete JSON at byte %d: %w", j.off, io.ErrUnexpectedEOF)
	}
	return c, err
}

// peek returns the next byte that is not white space, without taking it.
func (j *jsonStream) peek() (byte, error) {
	for {
		b, err := j.r.Peek(1)
		if err != nil {
			if err == io.EOF {
				return 0, fmt.Errorf("incomplete JSON at byte %d: %w", j.off, io.ErrUnexpectedEOF)
			}
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\n', '\r':
			_, _ = j.r.ReadByte()
			j.off++
		default:
			return b[0], nil
		}
	}
}

// expect takes the next byte that is not white space, which must be c.
func (j *jsonStream) expect(c byte) error {
	got, err := j.peek()
	if err != nil {
		return err
	}
	if got != c {
		return j.syntax("%q where %q belongs", got, c)
	}
	_, _ = j.readByte()
	return nil
}

// object reads an object, calling each with every key; each must read
// the key's value.
func (j *jsonStream) object(each func(key string) error) error {
	if err := j.expect('{'); err != nil {
		return err
	}
	if c, err := j.peek(); err != nil {
		return err
	} else if c == '}' {
		_, _ = j.readByte()
		return nil
	}
	for {
		var key bytes.Buffer
		if c, err := j.peek(); err != nil {
			return err
		} else if c != '"' {
			return j.syntax("%q where a key belongs", c)
		}
		if _, err := j.str(&limitedBuffer{b: &key, max: 1 << 10}); err != nil {
			return err
		}
		if err := j.expect(':'); err != nil {
			return err
		}
		if err := each(key.String()); err != nil {
			return err
		}
		c, err := j.peek()
		if err != nil {
			return err
		}
		_, _ = j.readByte()
		switch c {
		case ',':
		case '}':
			return nil
		default:
			return j.syntax("%q after a value in an object", c)
		}
	}
}

// array reads an array, calling each for every element; each must read
// the element.
func (j *jsonStream) array(each func() error) error {
	if err := j.expect('['); err != nil {
		return err
	}
	if c, err := j.peek(); err != nil {
		return err
	} else if c == ']' {
		_, _ = j.readByte()
		return nil
	}
	for {
		if err := each(); err != nil {
			return err
		}
		c, err := j.peek()
		if err != nil {
			return err
		}
		_, _ = j.readByte()
		switch c {
		case ',':
		case ']':
			return nil
		default:
			return j.syntax("%q after a value in an array", c)
		}
	}
}

// maxSkipDepth bounds the nesting skip follows, as encoding/json's
// decoder bounds its own.
const maxSkipDepth = 10000

// skip reads a value and returns its size in bytes, keeping none of it.
func (j *jsonStream) skip() (int64, error) {
	return j.copyValue(io.Discard)
}

// copyValue copies the text of a value to w and returns its size. Its
// memory is bounded whatever the value: nesting is counted, not kept on
// a stack, and strings are copied in pieces.
func (j *jsonStream) copyValue(w io.Writer) (int64, error) {
	if _, err := j.peek(); err != nil {
		return 0, err
	}
	start := j.off
	depth := 0
	for {
		c, err := j.peek()
		if err != nil {
			return 0, err
		}
		switch {
		case c == '"':
			if err := j.rawString(w); err != nil {
				return 0, err
			}
		case c == '{' || c == '[':
			depth++
			if depth > maxSkipDepth {
				return 0, j.syntax("nested more than %d levels deep", maxSkipDepth)
			}
			_, _ = j.readByte()
			_, _ = w.Write([]byte{c})
			continue
		case c == '}' || c == ']':
			if depth == 0 {
				return 0, j.syntax("%q where a value belongs", c)
			}
			depth--
			_, _ = j.readByte()
			_, _ = w.Write([]byte{c})
		case c == ',' || c == ':':
			if depth == 0 {
				return 0, j.syntax("%q where a value belongs", c)
			}
			_, _ = j.readByte()
			_, _ = w.Write([]byte{c})
			continue
		default:
			if err := j.literal(w); err != nil {
				return 0, err
			}
		}
		if depth == 0 {
			return j.off - start, nil
		}
	}
}

// literal copies a number, true, false or null.
func (j *jsonStream) literal(w io.Writer) error {
	n := 0
	for {
		b, err := j.r.Peek(1)
		if err != nil && err != io.EOF {
			return err
		}
		if len(b) == 0 || !isLiteralByte(b[0]) {
			break
		}
		_, _ = j.readByte()
		_, _ = w.Write(b[:1])
		n++
		if n > 1<<10 {
			return j.syntax("a literal longer than 1 KiB")
		}
	}
	if n == 0 {
		c, _ := j.peek()
		return j.syntax("%q where a value belongs", c)
	}
	return nil
}

func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// rawString copies a string with its quotes and escapes as they are.
func (j *jsonStream) rawString(w io.Writer) error {
	if _, err := j.readByte(); err != nil {
		return err
	}
	_, _ = w.Write([]byte{'"'})
	for {
		buf, err := j.fill()
		if err != nil {
			return err
		}
		i := bytes.IndexAny(buf, "\"\\")
		if i < 0 {
			_, _ = w.Write(buf)
			j.discard(len(buf))
			continue
		}
		_, _ = w.Write(buf[:i+1])
		j.discard(i + 1)
		if buf[i] == '"' {
			return nil
		}
		c, err := j.readByte() // the escaped byte
		if err != nil {
			return err
		}
		_, _ = w.Write([]byte{c})
	}
}

// fill returns the buffered bytes, reading more when there are none.
func (j *jsonStream) fill() ([]byte, error) {
	if j.r.Buffered() == 0 {
		if _, err := j.r.Peek(1); err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("incomplete JSON at byte %d: %w", j.off, io.ErrUnexpectedEOF)
			}
			return nil, err
		}
	}
	b, _ := j.r.Peek(j.r.Buffered())
	return b, nil
}

func (j *jsonStream) discard(n int) {
	_, _ = j.r.Discard(n)
	j.off += int64(n)
}

// small reads a value of at most limit bytes and returns its text; a
// longer one is skipped and errTooBig returned.
func (j *jsonStream) small(limit int) (json.RawMessage, error) {
	var b bytes.Buffer
	lw := &limitedBuffer{b: &b, max: limit}
	if _, err := j.copyValue(lw); err != nil {
		return nil, err
	}
	if lw.over {
		return nil, errTooBig
	}
	return b.Bytes(), nil
}

// limitedBuffer keeps up to max bytes and notes that more came.
type limitedBuffer struct {
	b    *bytes.Buffer
	max  int
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room < len(p) {
		l.over = true
		p = p[:max(room, 0)]
	}
	l.b.Write(p)
	return len(p), nil
}

// str decodes a string into w, as encoding/json decodes strings (invalid
// UTF-8 and lone surrogates become U+FFFD), in pieces, and returns the
// number of bytes written.
func (j *jsonStream) str(w io.Writer) (int64, error) {
	if err := j.expect('"'); err != nil {
		return 0, err
	}
	var n int64
	write := func(p []byte) {
		k, _ := w.Write(p)
		n += int64(k)
	}
	for {
		buf, err := j.fill()
		if err != nil {
			return n, err
		}
		i := 0
		stop := false // buf[i] ends the run: a quote, a backslash or a control byte
		more := false // buf ends inside a rune
	scan:
		for i < len(buf) {
			c := buf[i]
			switch {
			case c == '"' || c == '\\' || c < 0x20:
				stop = true
				break scan
			case c < utf8.RuneSelf:
				i++
			default:
				r, size := utf8.DecodeRune(buf[i:])
				if r == utf8.RuneError && size == 1 {
					if !utf8.FullRune(buf[i:]) {
						more = true
						break scan
					}
					write(buf[:i])
					write(replacement)
					j.discard(i + 1)
					buf, i = buf[i+1:], 0
					continue
				}
				i += size
			}
		}
		write(buf[:i])
		j.discard(i)
		switch {
		case more:
			// Read on, so that the rune is whole in the buffer (or the
			// input ends inside it).
			if _, err := j.r.Peek(len(buf) - i + 1); err != nil {
				if err == io.EOF {
					return n, fmt.Errorf("incomplete JSON at byte %d: %w", j.off, io.ErrUnexpectedEOF)
				}
				return n, err
			}
			continue
		case !stop:
			continue
		}
		c := buf[i]
		j.discard(1)
		switch {
		case c == '"':
			return n, nil
		case c < 0x20:
			return n, j.syntax("a control character in a string")
		}
		if err := j.escape(write); err != nil {
			return n, err
		}
	}
}

var replacement = []byte("\uFFFD")

// escape decodes the escape after a backslash.
func (j *jsonStream) escape(write func([]byte)) error {
	c, err := j.readByte()
	if err != nil {
		return err
	}
	switch c {
	case '"', '\\', '/':
		write([]byte{c})
	case 'b':
		write([]byte{'\b'})
	case 'f':
		write([]byte{'\f'})
	case 'n':
		write([]byte{'\n'})
	case 'r':
		write([]byte{'\r'})
	case 't':
		write([]byte{'\t'})
	case 'u':
		var h [4]byte
		for i := range h {
			if h[i], err = j.readByte(); err != nil {
				return err
			}
		}
		r, ok := hex4(h[:])
		if !ok {
			return j.syntax("an invalid \\u escape")
		}
		if !utf16.IsSurrogate(r) {
			write(utf8.AppendRune(nil, r))
			return nil
		}
		// A pair is \uD8xx\uDCxx. Anything else leaves a lone
		// surrogate, which becomes U+FFFD, and the next escape is read
		// on its own.
		if b, _ := j.r.Peek(6); len(b) == 6 && b[0] == '\\' && b[1] == 'u' {
			if r2, ok := hex4(b[2:]); ok {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					j.discard(6)
					write(utf8.AppendRune(nil, dec))
					return nil
				}
			}
		}
		write(replacement)
	default:
		return j.syntax("an invalid escape \\%c", c)
	}
	return nil
}

// hex4 decodes four hexadecimal digits.
func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b[:4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// end checks that nothing but white space follows the value.
func (j *jsonStream) end() error {
	if _, err := j.peek(); err == nil {
		c, _ := j.peek()
		return j.syntax("%q after the end of the value", c)
	} else if !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	return nil
}
