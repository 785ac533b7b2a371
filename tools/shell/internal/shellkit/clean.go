package shellkit

import "strings"

// Clean makes terminal output readable as text: invalid UTF-8 replaced,
// every ECMA-48 control sequence and C1 control dropped, CRLF read as LF,
// and a line redrawn with carriage returns (a progress bar) reduced to its
// last state. The result holds no ESC, no C1 control (U+0080 to U+009F)
// and no carriage return, so cleaning it again changes nothing.
func Clean(s string) string {
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
