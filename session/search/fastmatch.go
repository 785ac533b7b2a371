package search

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/jsonstr"
)

// The fast path matches a candidate line without decoding it whole: it
// walks the JSON of an event written by Event.MarshalJSON, picks out the
// strings the model saw, and decodes only those. When the line holds no
// \u escape and no "\/", its strings are encoded the one way
// Event.MarshalJSON encodes them, so a literal is found in the raw bytes
// of a string (at a character boundary) and only the snippet around it is
// decoded. Lines laid out otherwise, and event types without a fast
// path, are decoded with encoding/json (matchEvent); both paths report
// the same matches.

// fastType reports whether the fast path handles events of type typ.
func fastType(typ string) bool {
	switch typ {
	case session.TypeUser, session.TypeAssistant, session.TypeToolResult, session.TypeReminder, session.TypeSystem:
		return true
	}
	return false
}

// envelopeLine is the start of a line as Event.MarshalJSON writes it.
type envelopeLine struct {
	seq  []byte
	time []byte
	typ  string
	data int // offset of the data value
}

// parseEnvelope recognizes `{"seq":N,"time":"T","type":"X","data":`.
func parseEnvelope(line []byte) (envelopeLine, bool) {
	var e envelopeLine
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return e, false
	}
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return e, false
	}
	e.seq, rest = rest[:i], rest[i:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"time":"`)); !ok {
		return e, false
	}
	if i = bytes.IndexByte(rest, '"'); i < 0 {
		return e, false
	}
	e.time, rest = rest[:i], rest[i:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`","type":"`)); !ok {
		return e, false
	}
	if i = bytes.IndexByte(rest, '"'); i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return e, false
	}
	e.typ, rest = string(rest[:i]), rest[i:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`","data":`)); !ok {
		return e, false
	}
	e.data = len(line) - len(rest)
	return e, true
}

// piece is a string of an event the model saw, as a span of its line.
type piece struct {
	lo, hi int // the string's body, between its quotes
	role   harness.Role
	tool   string
	args   bool // tool call arguments: also search their decoded values
}

// fastMatch matches one candidate line. handled is false when the line
// needs the slow path.
func (s *searcher) fastMatch(line []byte) (m Match, found, handled bool) {
	return s.fastMatchAt(line, -1, nil)
}

// fastMatchAt is fastMatch for a line whose first occurrence of the
// literal's anchor is at anchorAt (-1 when not known). scratch, when not
// nil, holds the pieces of the previous line, for reuse.
func (s *searcher) fastMatchAt(line []byte, anchorAt int, scratch *[]piece) (m Match, found, handled bool) {
	env, ok := parseEnvelope(line)
	if !ok || !fastType(env.typ) {
		return m, false, false
	}
	if !s.types.has(env.typ) {
		return m, false, true
	}
	w := &walker{b: line, i: env.data}
	var pieces []piece
	if scratch != nil {
		pieces = (*scratch)[:0]
	}
	pieces, ok = dataPieces(w, env.typ, pieces)
	if scratch != nil {
		*scratch = pieces
	}
	if !ok {
		return m, false, false
	}
	w.ws()
	if w.i >= len(line) || line[w.i] != '}' || len(bytes.TrimSpace(line[w.i+1:])) != 0 {
		return m, false, false
	}
	for _, p := range pieces {
		snip, ms, me, found := s.matchPiece(line, p, anchorAt)
		if !found {
			continue
		}
		seq, err := strconv.ParseInt(string(env.seq), 10, 64)
		if err != nil {
			return m, false, false
		}
		t, err := time.Parse(time.RFC3339Nano, string(env.time))
		if err != nil {
			return m, false, false
		}
		return Match{Seq: seq, Type: env.typ, Time: t, Role: p.role, Tool: p.tool,
			Snippet: snip, MatchStart: ms, MatchEnd: me}, true, true
	}
	return m, false, true
}

// matchPiece finds the first match in one piece of a line and returns
// its snippet.
func (s *searcher) matchPiece(line []byte, p piece, anchorAt int) (snip string, ms, me int, found bool) {
	span := line[p.lo:p.hi]
	if p.args {
		args := string(unescape(make([]byte, 0, len(span)), span))
		if snip, ms, me, found = s.snippetOf(args); found {
			return snip, ms, me, true
		}
		var v any
		if json.Unmarshal([]byte(args), &v) == nil {
			eachString(v, func(t string) bool {
				snip, ms, me, found = s.snippetOf(t)
				return !found
			})
		}
		return snip, ms, me, found
	}
	if s.rawForm != nil {
		if at, ok := s.rawIndex(span, p.lo, anchorAt); ok {
			if at < 0 {
				return "", 0, 0, false
			}
			snip, ms, me = rawSnippet(span, at, len(s.rawForm), s.context)
			return snip, ms, me, true
		}
	}
	return s.snippetOf(string(unescape(make([]byte, 0, len(span)), span)))
}

// snippetOf finds the first match in text and returns its snippet.
func (s *searcher) snippetOf(text string) (snip string, ms, me int, found bool) {
	start, end, ok := s.find(text)
	if !ok {
		return "", 0, 0, false
	}
	snip, ms, me = snippet(text, start, end, s.context)
	return snip, ms, me, true
}

// rawIndex looks for the literal's raw form in span, a string body at
// offset lo of its line, and returns where the first match of the
// decoded string begins (-1: there is none). ok is false when the raw
// bytes cannot tell, and the string must be decoded.
//
// A match found raw is the first when no loose escape comes before it
// (one could hide an earlier occurrence), and a string without loose
// escapes that lacks the raw form holds no match. Every encoding of the
// literal holds its anchor as it is, and a match starting earlier has
// its anchor earlier; so when anchorAt, the first anchor of the line,
// comes after span, or is the anchor of the raw form found, the raw
// search decides without looking for escapes.
func (s *searcher) rawIndex(span []byte, lo, anchorAt int) (at int, ok bool) {
	if anchorAt >= lo+len(span) {
		return -1, true
	}
	from := 0
	if anchorAt >= 0 {
		from = max(0, anchorAt-s.anchorOff-lo)
	}
	at = alignedIndex(span, s.rawForm, from)
	switch {
	case at >= 0 && anchorAt >= 0 && lo+at+s.anchorOff == anchorAt:
		return at, true
	case at >= 0:
		return at, !looseEscape(span[:at])
	}
	return -1, !looseEscape(span)
}

// dataPieces walks the data value of an event of type typ and appends
// its searchable strings to out, in the order matchEvent searches them.
func dataPieces(w *walker, typ string, out []piece) ([]piece, bool) {
	var ok bool
	switch typ {
	case session.TypeUser:
		ok = w.object(func(key []byte) bool {
			if string(key) != "content" {
				return w.skip()
			}
			return w.textBlocks(&out, piece{role: harness.RoleUser})
		})
	case session.TypeAssistant:
		ok = w.object(func(key []byte) bool {
			if string(key) != "content" {
				return w.skip()
			}
			return w.array(func() bool { return w.assistantBlock(&out) })
		})
	case session.TypeToolResult:
		first := len(out)
		var name string
		ok = w.object(func(key []byte) bool {
			switch string(key) {
			case "name":
				var ok bool
				name, ok = w.strValue()
				return ok
			case "result":
				return w.object(func(key []byte) bool {
					if string(key) != "content" {
						return w.skip()
					}
					return w.textBlocks(&out, piece{role: harness.RoleTool})
				})
			}
			return w.skip()
		})
		for i := first; i < len(out); i++ {
			out[i].tool = name
		}
	case session.TypeReminder, session.TypeSystem:
		role := harness.RoleUser
		if typ == session.TypeSystem {
			role = "system"
		}
		ok = w.textObject(&out, piece{role: role})
	}
	return out, ok
}

// assistantBlock reads one content block of an assistant message and
// appends its searchable string: a tool call's arguments, or its text.
func (w *walker) assistantBlock(out *[]piece) bool {
	var typ, name string
	var call bool
	text, args := piece{lo: -1}, piece{lo: -1}
	if !w.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "type":
			typ, ok = w.strValue()
			return ok
		case "text":
			text.lo, text.hi, ok = w.str()
			return ok
		case "tool_call":
			call = true
			return w.object(func(key []byte) bool {
				var ok bool
				switch string(key) {
				case "name":
					name, ok = w.strValue()
					return ok
				case "arguments":
					args.lo, args.hi, ok = w.str()
					return ok
				}
				return w.skip()
			})
		}
		return w.skip()
	}) {
		return false
	}
	switch {
	case typ == string(harness.BlockToolCall) && call:
		if args.lo >= 0 {
			*out = append(*out, piece{lo: args.lo, hi: args.hi, role: harness.RoleAssistant, tool: name, args: true})
		}
	case text.lo >= 0:
		*out = append(*out, piece{lo: text.lo, hi: text.hi, role: harness.RoleAssistant})
	}
	return true
}

// textBlocks reads an array of content blocks and appends their "text"
// strings as pieces like p.
func (w *walker) textBlocks(out *[]piece, p piece) bool {
	return w.array(func() bool { return w.textObject(out, p) })
}

// textObject reads an object and appends its "text" string as a piece
// like p.
func (w *walker) textObject(out *[]piece, p piece) bool {
	return w.object(func(key []byte) bool {
		if string(key) != "text" {
			return w.skip()
		}
		var ok bool
		p.lo, p.hi, ok = w.str()
		*out = append(*out, p)
		return ok
	})
}

// walker steps through JSON text without decoding it. It accepts all
// valid JSON; what it accepts beyond that is decoded by encoding/json on
// the slow path only if it is valid there too.
type walker struct {
	b     []byte
	i     int
	depth int
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

func (w *walker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// str reads a string and returns the span of its body.
func (w *walker) str() (lo, hi int, ok bool) {
	w.ws()
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return 0, 0, false
	}
	lo = w.i + 1
	for j := lo; ; {
		k := nextQuote(w.b[j:])
		if k < 0 {
			return 0, 0, false
		}
		q := j + k
		if backslashesBefore(w.b[lo:], q-lo)%2 == 0 {
			w.i = q + 1
			return lo, q, true
		}
		j = q + 1
	}
}

// strValue reads a string and returns it decoded.
func (w *walker) strValue() (string, bool) {
	lo, hi, ok := w.str()
	return string(unescape(nil, w.b[lo:hi])), ok
}

// object reads an object, calling each with every key; each must read
// the key's value.
func (w *walker) object(each func(key []byte) bool) bool {
	return w.container('{', '}', func() bool {
		lo, hi, ok := w.str()
		if !ok {
			return false
		}
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return false
		}
		w.i++
		key := w.b[lo:hi]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = unescape(nil, key)
		}
		return each(key)
	})
}

// array reads an array, calling each to read every element.
func (w *walker) array(each func() bool) bool { return w.container('[', ']', each) }

// container reads an object or an array, between the brackets open and
// close, calling each to read every member or element.
func (w *walker) container(open, close byte, each func() bool) bool {
	w.ws()
	if w.i >= len(w.b) || w.b[w.i] != open {
		return false
	}
	if w.depth++; w.depth > maxDepth {
		return false
	}
	ok := w.members(close, each)
	w.depth--
	return ok
}

// members reads the members or elements of a container after its
// opening bracket, and its closing bracket.
func (w *walker) members(close byte, each func() bool) bool {
	w.i++
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == close {
		w.i++
		return true
	}
	for {
		if !each() {
			return false
		}
		w.ws()
		if w.i >= len(w.b) {
			return false
		}
		switch w.b[w.i] {
		case ',':
			w.i++
		case close:
			w.i++
			return true
		default:
			return false
		}
	}
}

// skip reads any value.
func (w *walker) skip() bool {
	w.ws()
	if w.i >= len(w.b) {
		return false
	}
	switch c := w.b[w.i]; {
	case c == '"':
		_, _, ok := w.str()
		return ok
	case c == '{':
		return w.object(func([]byte) bool { return w.skip() })
	case c == '[':
		return w.array(w.skip)
	case c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n':
		start := w.i
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return w.i > start
			}
			w.i++
		}
		return w.i > start
	}
	return false
}

// looseEscape reports whether a string body holds an escape that
// Event.MarshalJSON may not have written: \uXXXX (which it writes only for
// control characters, U+2028, U+2029 and invalid UTF-8) or "\/".
func looseEscape(span []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(span[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if i+1 >= len(span) {
			return false
		}
		if c := span[i+1]; c == 'u' || c == '/' {
			return true
		}
		i += 2
	}
}

// backslashesBefore counts the backslashes right before b[i].
func backslashesBefore(b []byte, i int) int {
	n := 0
	for i > 0 && b[i-1] == '\\' {
		n++
		i--
	}
	return n
}

// alignedIndex returns the first index of form in span, at or after
// from, that starts at a character boundary of the encoded string (not
// inside an escape), or -1.
func alignedIndex(span, form []byte, from int) int {
	for from <= len(span)-len(form) {
		k := bytes.Index(span[from:], form)
		if k < 0 {
			return -1
		}
		at := from + k
		if backslashesBefore(span, at)%2 == 0 && !inUEscape(span, at) {
			return at
		}
		from = at + 1
	}
	return -1
}

// inUEscape reports whether span[at] is one of the hex digits of a
// \uXXXX escape.
func inUEscape(span []byte, at int) bool {
	for k := 2; k <= 5 && at-k >= 0; k++ {
		if span[at-k] == '\\' && span[at-k+1] == 'u' && backslashesBefore(span, at-k)%2 == 0 {
			return true
		}
	}
	return false
}

// rawSnippet builds the snippet of a match found at span[at:at+n] of an
// encoded string, decoding only the bytes around it. It returns what
// snippet returns for the decoded string.
func rawSnippet(span []byte, at, n, context int) (string, int, int) {
	var scratch [3][256]byte // for the usual context, nothing on the heap
	match := unescape(scratch[0][:0], span[at:at+n])
	if len(match) > maxSnippetMatch {
		// Not taken: literals that long go the decoding way.
		text := string(unescape(nil, span))
		start := len(unescape(nil, span[:at]))
		return snippet(text, start, start+len(match), context)
	}
	before, ws := window(scratch[1][:0], span, at, true, context)
	after, we := window(scratch[2][:0], span, at+n, false, context)
	b := textcut.Suffix(string(before), context)
	a := textcut.Prefix(string(after), context)
	var sb strings.Builder
	sb.Grow(len(b) + len(match) + len(a) + 2*len("…"))
	if ws > 0 || len(b) < len(before) {
		sb.WriteString("…")
	}
	sb.WriteString(b)
	ms := sb.Len()
	sb.Write(match)
	me := sb.Len()
	sb.WriteString(a)
	if we < len(span) || len(a) < len(after) {
		sb.WriteString("…")
	}
	return sb.String(), ms, me
}

// window decodes the bytes on one side of span[at], before it (back) or
// from it on, at least enough for more than context bytes of text or up
// to the end of span, widening the window until it holds that much. It
// appends them to dst and returns them and where the window ends in
// span, away from at, on a character boundary.
func window(dst, span []byte, at int, back bool, context int) ([]byte, int) {
	for size := 2*context + 8; ; size *= 2 {
		lo, hi := at, min(len(span), at+size)
		if back {
			lo, hi = max(0, at-size), at
			for lo < at && !boundary(span, lo) {
				lo++
			}
		} else {
			for hi > at && hi < len(span) && !boundary(span, hi) {
				hi--
			}
		}
		dst = unescape(dst[:0], span[lo:hi])
		end := hi
		if back {
			end = lo
		}
		if back && lo == 0 || !back && hi == len(span) || len(dst) > context+utf8.UTFMax {
			return dst, end
		}
	}
}

// boundary reports whether span[i] starts a character of the encoded
// string: not inside an escape, not inside a UTF-8 sequence.
func boundary(span []byte, i int) bool {
	return utf8.RuneStart(span[i]) && backslashesBefore(span, i)%2 == 0 && !inUEscape(span, i) && !inSurrogatePair(span, i)
}

// inSurrogatePair reports whether span[i] starts the second escape of a
// surrogate pair, which decodes together with the first.
func inSurrogatePair(span []byte, i int) bool {
	if i < 6 || i+6 > len(span) || span[i] != '\\' || span[i+1] != 'u' {
		return false
	}
	if span[i-6] != '\\' || span[i-5] != 'u' || backslashesBefore(span, i-6)%2 != 0 {
		return false
	}
	hi, ok1 := jsonstr.Hex4(span[i-6:])
	lo, ok2 := jsonstr.Hex4(span[i:])
	return ok1 && ok2 && hi >= 0xD800 && hi < 0xDC00 && lo >= 0xDC00 && lo < 0xE000
}

// unescape appends the decoded body of a JSON string to dst, as
// encoding/json decodes it: invalid UTF-8 and lone surrogates become
// U+FFFD. Malformed escapes are kept as they are.
func unescape(dst, span []byte) []byte {
	for i := 0; i < len(span); {
		j := indexBackslash(span[i:])
		run := span[i:]
		if j >= 0 {
			run = span[i : i+j]
		}
		dst = appendValid(dst, run)
		if j < 0 {
			break
		}
		i += j
		if i+1 >= len(span) {
			return append(dst, '\\')
		}
		switch c := span[i+1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n := jsonstr.DecodeUEscape(span[i:], true)
			dst = utf8.AppendRune(dst, r)
			i += n
			continue
		default:
			dst = append(dst, '\\', c)
		}
		i += 2
	}
	return dst
}

// indexBackslash returns the index of the first backslash in b, or -1.
// Text holds escapes often (a \n a line), and a loop finds a near one
// sooner than a bytes.IndexByte call.
func indexBackslash(b []byte) int {
	for i, c := range b[:min(len(b), 32)] {
		if c == '\\' {
			return i
		}
	}
	if len(b) <= 32 {
		return -1
	}
	if k := bytes.IndexByte(b[32:], '\\'); k >= 0 {
		return 32 + k
	}
	return -1
}

// appendValid appends b with each invalid UTF-8 byte replaced by U+FFFD.
func appendValid(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}
