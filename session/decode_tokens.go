package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session/internal/jsonstr"
)

// The tokenizer of the fast log decoder (see decode.go): the decoder
// reads the JSON values of one line (strings, integers, booleans, times,
// objects and lists) and gives up, with bad set, on anything it does not
// decode exactly as encoding/json would. decode.go reads the events and
// their payloads with it.

// decoder reads JSON from b. Once bad is set every method fails.
type decoder struct {
	b   []byte
	i   int
	st  *decodeState
	bad bool
}

// Bounds of the short strings a load shares.
const (
	maxName  = 32
	maxNames = 4096
)

// text returns b as a string, shared when it is short.
func (d *decoder) text(b []byte) string {
	if len(b) > maxName {
		return string(b)
	}
	if d.st == nil || d.st.names == nil {
		// One line decoded alone (Event.UnmarshalJSON): only the
		// vocabulary's own names are shared.
		if s, ok := vocabulary(b); ok {
			return s
		}
		return string(b)
	}
	if s, ok := d.st.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.st.names) < maxNames {
		d.st.names[s] = s
	}
	return s
}

// vocabulary returns the constant b spells when it is an event type, a
// block type or a role, without allocating.
func vocabulary(b []byte) (string, bool) {
	switch string(b) {
	case TypeUser:
		return TypeUser, true
	case TypeAssistant:
		return TypeAssistant, true
	case TypeToolResult:
		return TypeToolResult, true
	case TypeReminder:
		return TypeReminder, true
	case TypeSystem:
		return TypeSystem, true
	case typeToolStart:
		return typeToolStart, true
	case typeModelRequest:
		return typeModelRequest, true
	case typeTurnEnd:
		return typeTurnEnd, true
	case typeRecord:
		return typeRecord, true
	case typeRetry:
		return typeRetry, true
	case typeFallback:
		return typeFallback, true
	case typePrune:
		return typePrune, true
	case typeCompaction:
		return typeCompaction, true
	case typeApproval:
		return typeApproval, true
	case typePermission:
		return typePermission, true
	case string(harness.BlockText):
		return string(harness.BlockText), true
	case string(harness.BlockReasoning):
		return string(harness.BlockReasoning), true
	case string(harness.BlockImage):
		return string(harness.BlockImage), true
	case string(harness.BlockToolCall):
		return string(harness.BlockToolCall), true
	}
	return "", false
}

func (d *decoder) fail() bool {
	d.bad = true
	return false
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// null consumes a null if one comes next.
func (d *decoder) null() bool {
	if d.peek() == 'n' && d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// fields iterates the keys of an object: call it with first set to true
// before the first key; it returns the next key, and "" with ok false
// after the last one (or on bad input, with d.bad set). A key with
// escapes makes the decoder give up.
func (d *decoder) fields(first *bool) (key []byte, ok bool) {
	if d.bad {
		return nil, false
	}
	if *first {
		*first = false
		if d.peek() != '{' {
			return nil, d.fail()
		}
		d.i++
		if d.peek() == '}' {
			d.i++
			return nil, false
		}
	} else {
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil, false
		default:
			return nil, d.fail()
		}
	}
	if d.peek() != '"' {
		return nil, d.fail()
	}
	start := d.i + 1
	j := start
	for j < len(d.b) && d.b[j] != '"' {
		if d.b[j] == '\\' || d.b[j] < 0x20 {
			return nil, d.fail()
		}
		j++
	}
	if j >= len(d.b) {
		return nil, d.fail()
	}
	key = d.b[start:j]
	d.i = j + 1
	if d.peek() != ':' {
		return nil, d.fail()
	}
	d.i++
	return key, true
}

// maxKeys is the most keys an object of the vocabulary has, rounded up:
// an object with more repeats one or has one the decoder does not know.
const maxKeys = 16

// object reads an object, calling field with each key to decode its
// value; field reports false for a key it does not know. An unknown key,
// a repeated one (encoding/json merges repeated objects, which is not
// worth copying) or a key with escapes makes the decoder give up. A null
// leaves the value as it is, as encoding/json does for a struct: the
// callers that keep a null pointer as nil check for it first.
func (d *decoder) object(field func(key []byte) bool) {
	if d.null() {
		return
	}
	// seen has a bit for the length and first byte of each key read: only
	// a key whose bit is set already is compared with the keys before it.
	var seen uint64
	var keys [maxKeys][]byte
	n := 0
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			return
		}
		if n == len(keys) || len(k) == 0 {
			d.fail() // no key of the vocabulary is empty
			return
		}
		bit := uint64(1) << ((uint(len(k))*8 + uint(k[0])) & 63)
		if seen&bit != 0 {
			for _, prev := range keys[:n] {
				if string(prev) == string(k) {
					d.fail()
					return
				}
			}
		}
		seen |= bit
		keys[n] = k
		n++
		if !field(k) {
			d.fail()
			return
		}
	}
}

// list reads an array, each element with elem; null is a nil list and
// [] an empty one, as encoding/json has them.
func list[T any](d *decoder, elem func() T) []T {
	if d.null() {
		return nil
	}
	out := []T{}
	for first := true; d.elems(&first); {
		out = append(out, elem())
	}
	return out
}

// elems iterates the elements of an array like fields; it reports
// whether an element follows. A null array is no array (the caller
// checks null first).
func (d *decoder) elems(first *bool) bool {
	if d.bad {
		return false
	}
	if *first {
		*first = false
		if d.peek() != '[' {
			return d.fail()
		}
		d.i++
		if d.peek() == ']' {
			d.i++
			return false
		}
		return true
	}
	switch d.peek() {
	case ',':
		d.i++
		return true
	case ']':
		d.i++
		return false
	}
	return d.fail()
}

// str reads a string.
func (d *decoder) str() string {
	if d.bad || d.peek() != '"' {
		d.fail()
		return ""
	}
	start := d.i + 1
	j := start
	escaped, ascii := false, true
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			if !validEscape(d.b[j:]) {
				d.fail()
				return ""
			}
			escaped = true
			j++
		case c < 0x20:
			d.fail()
			return ""
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if j >= len(d.b) {
		d.fail()
		return ""
	}
	d.i = j + 1
	span := d.b[start:j]
	valid := ascii || utf8.Valid(span)
	if escaped && valid {
		if s, ok := d.unescape(span); ok {
			return s
		}
	}
	if escaped || !valid {
		// \u escapes, or invalid bytes that become U+FFFD.
		s, _ := jsonstr.Prefix(d.b[start : j+1])
		return s
	}
	return d.text(span)
}

// unescape decodes the body of a string of valid UTF-8 whose escapes are
// all of one character (\n, \", ...); ok is false for a \u escape.
func (d *decoder) unescape(span []byte) (string, bool) {
	// The string is built in place, in one allocation of its exact
	// length: each escape is two bytes for one.
	n := len(span)
	for i := 0; ; {
		j := bytes.IndexByte(span[i:], '\\')
		if j < 0 {
			break
		}
		n--
		i += j + 2
		if i >= len(span) {
			break
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	for i := 0; i < len(span); {
		j := bytes.IndexByte(span[i:], '\\')
		if j < 0 {
			sb.Write(span[i:])
			break
		}
		sb.Write(span[i : i+j])
		i += j
		var c byte
		switch span[i+1] {
		case 'n':
			c = '\n'
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case '"', '\\', '/':
			c = span[i+1]
		default:
			return "", false
		}
		sb.WriteByte(c)
		i += 2
	}
	return sb.String(), true
}

// validEscape reports whether b starts with an escape JSON allows.
func validEscape(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(b) < 6 {
			return false
		}
		_, ok := jsonstr.Hex4(b)
		return ok
	}
	return false
}

// int reads an integer that fits an int64: no fraction, no exponent.
func (d *decoder) int() int64 {
	if d.bad {
		return 0
	}
	d.ws()
	j := d.i
	neg := false
	if j < len(d.b) && d.b[j] == '-' {
		neg = true
		j++
	}
	start := j
	var n int64
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		n = n*10 + int64(d.b[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 18 || digits > 1 && d.b[start] == '0' {
		d.fail()
		return 0
	}
	if j < len(d.b) {
		switch d.b[j] {
		case '.', 'e', 'E':
			d.fail()
			return 0
		}
	}
	d.i = j
	if neg {
		return -n
	}
	return n
}

// intField reads an integer into an int, giving up where it does not fit.
func (d *decoder) intField() int {
	n := d.int()
	if int64(int(n)) != n {
		d.fail()
	}
	return int(n)
}

func (d *decoder) bool() bool {
	if d.bad {
		return false
	}
	d.ws()
	switch {
	case d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true
	case d.i+5 <= len(d.b) && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false
	}
	d.fail()
	return false
}

// time reads a time as Event.MarshalJSON writes it (RFC 3339 in UTC);
// other forms go through time.Time's own decoding.
func (d *decoder) time() time.Time {
	if d.bad || d.peek() != '"' {
		d.fail()
		return time.Time{}
	}
	start := d.i
	end := start + 1
	for end < len(d.b) && d.b[end] != '"' && d.b[end] != '\\' {
		end++
	}
	if end >= len(d.b) || d.b[end] != '"' {
		d.fail()
		return time.Time{}
	}
	d.i = end + 1
	if t, ok := parseUTC(d.b[start+1 : end]); ok {
		return t
	}
	var t time.Time
	if err := t.UnmarshalJSON(d.b[start : end+1]); err != nil {
		d.fail()
	}
	return t
}

// parseUTC parses "2006-01-02T15:04:05[.fraction]Z".
func parseUTC(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(b[0:4])
	month, ok2 := num(b[5:7])
	day, ok3 := num(b[8:10])
	hour, ok4 := num(b[11:13])
	minute, ok5 := num(b[14:16])
	sec, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	frac := b[19 : len(b)-1]
	if len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		n, ok := num(frac[1:])
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			n *= 10
		}
		nsec = n
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // Feb 30 and the like: let time.Parse say no
		return time.Time{}, false
	}
	return t, true
}

// skip reads past one value, checking its syntax, and returns its bytes.
func (d *decoder) skip(depth int) []byte {
	if d.bad {
		return nil
	}
	if depth > 512 {
		d.fail()
		return nil
	}
	start := func() int { d.ws(); return d.i }()
	switch d.peek() {
	case '{':
		first := true
		for {
			if _, ok := d.fields(&first); !ok {
				break
			}
			d.skip(depth + 1)
		}
	case '[':
		first := true
		for d.elems(&first) {
			d.skip(depth + 1)
		}
	case '"':
		d.str()
	case 't', 'f':
		d.bool()
	case 'n':
		if !d.null() {
			d.fail()
		}
	default:
		d.number()
	}
	if d.bad {
		return nil
	}
	return d.b[start:d.i]
}

// number reads past any JSON number.
func (d *decoder) number() {
	j := d.i
	digits := func() int {
		k := j
		for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
			j++
		}
		return j - k
	}
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	lead := j
	n := digits()
	if n == 0 || n > 1 && d.b[lead] == '0' {
		d.fail()
		return
	}
	if j < len(d.b) && d.b[j] == '.' {
		j++
		if digits() == 0 {
			d.fail()
			return
		}
	}
	if j < len(d.b) && (d.b[j] == 'e' || d.b[j] == 'E') {
		j++
		if j < len(d.b) && (d.b[j] == '+' || d.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			d.fail()
			return
		}
	}
	d.i = j
}

// raw reads a value kept as it is; null is not kept that way.
func (d *decoder) raw() json.RawMessage {
	if d.peek() == 'n' {
		d.fail()
		return nil
	}
	v := d.skip(0)
	if d.bad {
		return nil
	}
	return append(json.RawMessage(nil), v...)
}
