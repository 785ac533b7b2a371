package guard

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CanonicalJSON returns the canonical text of a call's arguments, so that
// two argument texts that mean the same compare equal: object keys sorted
// at every level, no whitespace between tokens, numbers in one form (1,
// 1.0 and 1e0 are all "1"), strings escaped one way. Empty arguments are
// "{}". Text that is not one valid JSON value is returned as it is,
// trimmed of surrounding JSON white space.
func CanonicalJSON(raw []byte) string {
	raw = bytes.Trim(raw, jsonSpace)
	if len(raw) == 0 {
		return "{}"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || len(bytes.Trim(raw[dec.InputOffset():], jsonSpace)) > 0 {
		return string(raw)
	}
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

// jsonSpace is the white space JSON allows between tokens.
const jsonSpace = " \t\r\n"

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(canonicalNumber(string(x)))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	}
}

// canonicalNumber writes integers as they are (JSON integers have one
// form, but for -0) and other numbers as the shortest float64 text, with
// integral values in integer form.
func canonicalNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func writeString(b *strings.Builder, s string) {
	const hexdigits = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte(hexdigits[r>>4])
			b.WriteByte(hexdigits[r&15])
		default:
			b.WriteRune(r) // invalid UTF-8 was decoded as U+FFFD
		}
	}
	b.WriteByte('"')
}

// cutRunes returns s cut to at most n characters (runes), with "…" added
// when something was cut. Invalid UTF-8 becomes U+FFFD.
func cutRunes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}
