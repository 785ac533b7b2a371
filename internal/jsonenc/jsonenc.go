// Package jsonenc writes the JSON of the provider adapters' request
// bodies. Each part of a body has one fixed spelling: the bytes a
// provider's prefix cache sees are the same on every request, and a part
// encoded once can be copied into later requests.
//
// [Marshal] encodes a value with encoding/json in that spelling (compact,
// HTML characters left as they are); agent/openai encodes its wire
// structs with it. The append helpers ([String], [Key] and the Field
// functions) write a body by hand; agent/anthropic uses them.
//
// It imports nothing of the module.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Marshal returns the compact JSON encoding of v, with <, > and & left
// as they are and no trailing newline (the bodies are read by a server,
// not a browser). Strings are escaped as encoding/json escapes them,
// which differs from [String] only for U+0008 and U+000C (\b and \f,
// where String writes \u0008 and \u000c).
func Marshal(v any) ([]byte, error) {
	var e Encoder
	return e.Append(nil, v)
}

// An Encoder appends values to byte slices as [Marshal] encodes them,
// reusing one buffer: a request body of many values allocates it once.
// The zero value is ready to use. An Encoder is not safe for concurrent
// use.
type Encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// Append appends the encoding of v to dst.
func (e *Encoder) Append(dst []byte, v any) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'})...), nil
}

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
