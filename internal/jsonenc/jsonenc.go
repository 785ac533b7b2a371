// Package jsonenc appends JSON to byte slices, for request bodies the
// provider adapters write by hand: each part of a body has one fixed
// spelling (the bytes a provider's prefix cache sees are the same on
// every request), and a part encoded once can be copied into later
// requests.
//
// It imports nothing of the module.
package jsonenc

import (
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// String appends s to b as a JSON string. Quotes, backslashes and
// control characters are escaped, as are U+2028 and U+2029 (which some
// JavaScript-based servers choke on); invalid UTF-8 becomes U+FFFD. HTML
// characters are left as they are.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Key appends ,"key": (or "key": first in an object, when b ends
// with '{'). An empty b continues a body whose last part was a segment
// kept from before, so it takes the comma.
func Key(b []byte, key string) []byte {
	if len(b) == 0 || b[len(b)-1] != '{' && b[len(b)-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// StringField appends a key and a string value.
func StringField(b []byte, key, value string) []byte {
	return String(Key(b, key), value)
}

// BoolField appends a key and a boolean.
func BoolField(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(Key(b, key), v)
}

// IntField appends a key and an integer.
func IntField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(Key(b, key), v, 10)
}

// FloatField appends a key and a number.
func FloatField(b []byte, key string, v float64) []byte {
	return strconv.AppendFloat(Key(b, key), v, 'g', -1, 64)
}
