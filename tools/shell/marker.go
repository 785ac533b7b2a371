package shell

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// The marker protocol of persistent shells.
//
// Each command gets a fresh random nonce. The shell is sent one physical
// line: the command, quoted whole as a $'...' string, run by eval with its
// stdin from /dev/null, followed by a printf of the end marker
//
//	RS nonce " " status " " dir RS nonce "\n"
//
// (RS is the byte 0x1e) to a file descriptor that is a copy of the
// shell's original stdout, so a command that redirects its own stdout
// still ends. The marker is found anywhere in the stream, not only at the
// start of a line, so output that does not end in a newline is returned
// exactly; only a trailing RS byte is ever held back. The nonce never
// appears in the command text, so nothing the command prints can end it
// early unless it reads the shell's own input.

const markerFD = 19

const rs = "\x1e"

// newNonce returns a fresh random nonce (32 hex digits).
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// commandLine returns the line that runs command in the shell and then
// prints the end marker for nonce.
func commandLine(command, nonce string) string {
	var b strings.Builder
	b.Grow(len(command) + 128)
	b.WriteString("eval ")
	b.WriteString(ansiQuote(command))
	b.WriteString(" </dev/null; { printf '\\036%s %d %s\\036%s\\n' ")
	b.WriteString(nonce)
	b.WriteString(` "$?" "$PWD" `)
	b.WriteString(nonce)
	b.WriteString(" >&")
	b.WriteString(strconv.Itoa(markerFD))
	b.WriteString("; } 2>/dev/null\n")
	return b.String()
}

// ansiQuote quotes s as a bash $'...' string on one physical line: every
// byte that is not printable ASCII, and the quote and backslash, are
// escaped, so the shell reads the whole string before it runs anything
// and no byte of s can end the line or the quote.
func ansiQuote(s string) string {
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + len(s)/8 + 3)
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// mark is a parsed end marker.
type mark struct {
	Status int
	Dir    string
}

// maxMarkBody bounds the part of a marker between its delimiters; a
// directory name is far shorter.
const maxMarkBody = 64 << 10

var errBadMarker = errors.New("shell: malformed end marker")

// scanner finds the end marker of one command in the shell's output.
// Bytes that may be the start of the marker are held back until the next
// feed shows whether they are.
type scanner struct {
	start []byte // RS nonce " "
	end   []byte // RS nonce "\n"
	held  []byte // a possible start of the marker, or the marker body so far
	in    bool   // the start was seen
}

func newScanner(nonce string) *scanner {
	return &scanner{start: []byte(rs + nonce + " "), end: []byte(rs + nonce + "\n")}
}

// feed consumes p. Output bytes that are certainly not part of the marker
// are passed to out (which must not keep the slice). When the marker
// completes, feed returns it and the bytes that followed it in p; the
// scanner is then done. An error means the marker was malformed.
func (s *scanner) feed(p []byte, out func([]byte)) (m *mark, rest []byte, err error) {
	if !s.in {
		data := p
		if len(s.held) > 0 {
			data = append(s.held, p...)
			s.held = s.held[:0]
		}
		i := bytes.Index(data, s.start)
		if i < 0 {
			k := partialSuffix(data, s.start)
			if len(data)-k > 0 {
				out(data[:len(data)-k])
			}
			s.held = append(s.held[:0], data[len(data)-k:]...)
			return nil, nil, nil
		}
		if i > 0 {
			out(data[:i])
		}
		s.in = true
		s.held = append([]byte(nil), data[i+len(s.start):]...)
	} else {
		s.held = append(s.held, p...)
	}
	j := bytes.Index(s.held, s.end)
	if j < 0 {
		if len(s.held) > maxMarkBody {
			return nil, nil, errBadMarker
		}
		return nil, nil, nil
	}
	m, err = parseMark(s.held[:j])
	if err != nil {
		return nil, nil, err
	}
	return m, s.held[j+len(s.end):], nil
}

// flush returns the bytes held back (at the end of the stream, when no
// marker will come).
func (s *scanner) flush() []byte {
	if s.in {
		return nil // a cut-off marker is not output
	}
	h := s.held
	s.held = nil
	return h
}

// parseMark parses "status dir".
func parseMark(b []byte) (*mark, error) {
	st, dir, ok := bytes.Cut(b, []byte{' '})
	if !ok {
		return nil, errBadMarker
	}
	n, err := strconv.Atoi(string(st))
	if err != nil || n < 0 || n > 255 {
		return nil, errBadMarker
	}
	return &mark{Status: n, Dir: string(dir)}, nil
}

// partialSuffix returns the length of the longest suffix of data that is
// a proper prefix of tok.
func partialSuffix(data, tok []byte) int {
	for k := min(len(data), len(tok)-1); k > 0; k-- {
		if bytes.HasSuffix(data, tok[:k]) {
			return k
		}
	}
	return 0
}
