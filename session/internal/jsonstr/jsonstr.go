// Package jsonstr decodes JSON string bodies from raw log bytes, also when
// they are cut short. It is shared by session (titles of long lines) and
// session/search (matching raw lines); it imports only the standard
// library.
package jsonstr

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Prefix decodes a JSON string body, b starting right after the
// opening quote, up to its closing quote or, when b ends first, as far as
// b holds complete characters. It reports whether the closing quote was
// reached. Invalid bytes become U+FFFD as encoding/json decodes them.
func Prefix(b []byte) (string, bool) {
	var sb strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return sb.String(), true
		case c == '\\':
			if i+1 >= len(b) {
				return sb.String(), false
			}
			switch b[i+1] {
			case '"', '\\', '/':
				sb.WriteByte(b[i+1])
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r, n := DecodeUEscape(b[i:], false)
				if n == 0 {
					return sb.String(), false
				}
				sb.WriteRune(r)
				i += n
				continue
			default:
				// Not valid JSON; keep the bytes as they are.
				sb.WriteByte(c)
				sb.WriteByte(b[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 && !utf8.FullRune(b[i:]) {
				return sb.String(), false // cut inside a character
			}
			sb.WriteRune(r)
			i += n
		}
	}
	return sb.String(), false
}

// DecodeUEscape decodes a \uXXXX escape at the start of b, and the low
// surrogate escape that must follow a high one. It returns the rune and
// the bytes used, or n == 0 when b is cut short and may end before the
// escape does; complete says b is the whole string.
func DecodeUEscape(b []byte, complete bool) (rune, int) {
	r, ok := Hex4(b)
	if !ok {
		if len(b) < 6 && allHex(b[2:]) && !complete {
			return 0, 0
		}
		return utf8.RuneError, 2 // malformed: skip the backslash and u
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if r >= 0xDC00 { // a lone low surrogate
		return utf8.RuneError, 6
	}
	if len(b) < 12 {
		if complete || len(b) >= 7 && b[6] != '\\' || len(b) >= 8 && (b[7] != 'u' || !allHex(b[8:])) {
			return utf8.RuneError, 6
		}
		return 0, 0
	}
	r2, ok := Hex4(b[6:])
	if !ok {
		return utf8.RuneError, 6
	}
	if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
		return d, 12
	}
	return utf8.RuneError, 6
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func Hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
