package session

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session/internal/jsonstr"
)

// Loading decodes each log line with a hand-written decoder for the
// event types and the harness vocabulary, which is several times faster
// than encoding/json and allocates little more than what it returns:
// short strings that repeat (block types, tool names) are made once per
// load. The decoder
// handles lines as this package writes them and any other valid JSON it
// can decode exactly as encoding/json would; anything else (an unknown
// or repeated key, a key with escapes, a number that is not a plain
// integer, a null where a value is kept, invalid JSON) makes it give up,
// and the line is decoded with encoding/json (Event.UnmarshalJSON), which
// also says what is wrong with it. Both give the same event for every
// line the fast decoder accepts; FuzzDecodeEvent checks it.

// decodeState is what the decoding of one log's lines shares.
type decodeState struct {
	// names holds short strings already made (block types, tool names,
	// roles, reasons), so each is allocated once per load.
	names map[string]string
	// scratch is where escaped strings are decoded.
	scratch []byte
}

func newDecodeState() *decodeState { return &decodeState{names: map[string]string{}} }

// decodeEvent decodes one log line, falling back to encoding/json.
func decodeEvent(line []byte, st *decodeState) (Event, error) {
	if e, ok := fastDecodeEvent(line, st); ok {
		return e, nil
	}
	var e Event
	err := json.Unmarshal(line, &e)
	return e, err
}

// fastDecodeEvent decodes line with the fast decoder; ok is false when
// it gave up.
func fastDecodeEvent(line []byte, st *decodeState) (Event, bool) {
	d := decoder{b: line, st: st}
	e, ok := d.event()
	if !ok || d.bad {
		return Event{}, false
	}
	d.ws()
	if d.i != len(d.b) {
		return Event{}, false
	}
	return e, true
}

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
	if s, ok := d.st.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.st.names) < maxNames {
		d.st.names[s] = s
	}
	return s
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

// seen marks field bit of an object as read and gives up on a repeated
// key: encoding/json merges repeated objects, which is not worth copying.
func (d *decoder) seen(mask *uint32, bit uint32) bool {
	if *mask&bit != 0 {
		return d.fail()
	}
	*mask |= bit
	return true
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
	buf := d.st.scratch[:0]
	for i := 0; i < len(span); {
		j := bytes.IndexByte(span[i:], '\\')
		if j < 0 {
			buf = append(buf, span[i:]...)
			break
		}
		buf = append(buf, span[i:i+j]...)
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
		buf = append(buf, c)
		i += 2
	}
	if cap(buf) <= 1<<20 {
		d.st.scratch = buf
	}
	return string(buf), true
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

// event reads the envelope and, when its type comes before its data as
// Event.MarshalJSON writes it, the payload in the same pass.
func (d *decoder) event() (Event, bool) {
	var e Event
	var typ string
	var p Payload
	var data []byte // the data, when it came before the type
	dataSeen := false
	var mask uint32
	first := true
	for {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "seq":
			d.seen(&mask, 1)
			e.Seq = d.int()
		case "time":
			d.seen(&mask, 2)
			e.Time = d.time()
		case "type":
			d.seen(&mask, 4)
			typ = d.str()
		case "data":
			d.seen(&mask, 8)
			dataSeen = true
			if d.peek() == 'n' {
				return e, d.fail() // encoding/json keeps a null payload's "null"
			}
			if typ != "" {
				p = d.payload(typ)
			} else {
				data = d.skip(0)
			}
		default:
			return e, d.fail()
		}
	}
	if d.bad || typ == "" {
		return e, false
	}
	if data != nil {
		sub := decoder{b: data, st: d.st}
		if p = sub.payload(typ); sub.bad {
			return e, false
		}
		sub.ws()
		if sub.i != len(sub.b) {
			return e, false
		}
	}
	if !dataSeen {
		if p, ok := newPayload(typ); ok {
			e.Data = p
		} else {
			e.Data = &Unknown{Type: typ}
		}
		return e, true
	}
	e.Data = p
	return e, !d.bad
}

// payload reads the data of an event of type typ.
func (d *decoder) payload(typ string) Payload {
	switch typ {
	case TypeUser:
		p := &UserMessage{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "content":
				d.seen(&mask, 1)
				p.Content = d.blocks()
			default:
				d.fail()
			}
		}
		return p
	case TypeAssistant:
		p := &AssistantMessage{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "step":
				d.seen(&mask, 1)
				p.Step = d.intField()
			case "model":
				d.seen(&mask, 2)
				p.Model = d.str()
			case "content":
				d.seen(&mask, 4)
				p.Content = d.blocks()
			case "finish":
				d.seen(&mask, 8)
				p.Finish = d.str()
			case "usage":
				d.seen(&mask, 16)
				if !d.null() {
					u := d.usage()
					p.Usage = &u
				}
			default:
				d.fail()
			}
		}
		return p
	case typeToolStart:
		p := &ToolStarted{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "step":
				d.seen(&mask, 1)
				p.Step = d.intField()
			case "call_id":
				d.seen(&mask, 2)
				p.CallID = d.str()
			case "name":
				d.seen(&mask, 4)
				p.Name = d.str()
			default:
				d.fail()
			}
		}
		return p
	case TypeToolResult:
		p := &ToolFinished{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "step":
				d.seen(&mask, 1)
				p.Step = d.intField()
			case "call_id":
				d.seen(&mask, 2)
				p.CallID = d.str()
			case "name":
				d.seen(&mask, 4)
				p.Name = d.str()
			case "result":
				d.seen(&mask, 8)
				if d.null() {
					break
				}
				p.Result = d.toolResult()
			case "duration_ms":
				d.seen(&mask, 16)
				p.DurationMS = d.int()
			default:
				d.fail()
			}
		}
		return p
	case typeModelRequest:
		p := &ModelRequest{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "step":
				d.seen(&mask, 1)
				p.Step = d.intField()
			case "model":
				d.seen(&mask, 2)
				p.Model = d.str()
			case "fingerprint":
				d.seen(&mask, 4)
				if !d.null() {
					p.Fingerprint = d.fingerprint()
				}
			default:
				d.fail()
			}
		}
		return p
	case TypeReminder:
		p := &Reminded{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "source":
				d.seen(&mask, 1)
				p.Source = d.str()
			case "text":
				d.seen(&mask, 2)
				p.Text = d.str()
			default:
				d.fail()
			}
		}
		return p
	case typeTurnEnd:
		p := &TurnEnded{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "reason":
				d.seen(&mask, 1)
				p.Reason = d.str()
			case "steps":
				d.seen(&mask, 2)
				p.Steps = d.intField()
			case "usage":
				d.seen(&mask, 4)
				if !d.null() {
					p.Usage = d.usage()
				}
			case "error":
				d.seen(&mask, 8)
				if !d.null() {
					p.Error = d.errorInfo()
				}
			default:
				d.fail()
			}
		}
		return p
	case TypeSystem:
		p := &SystemPrompt{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "text":
				d.seen(&mask, 1)
				p.Text = d.str()
			default:
				d.fail()
			}
		}
		return p
	case typeRecord:
		p := &ToolRecord{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "call_id":
				d.seen(&mask, 1)
				p.CallID = d.str()
			case "tool":
				d.seen(&mask, 2)
				p.Tool = d.str()
			case "name":
				d.seen(&mask, 4)
				p.Name = d.str()
			case "data":
				d.seen(&mask, 8)
				p.Data = d.raw()
			default:
				d.fail()
			}
		}
		return p
	case typeRetry:
		p := &ModelRetry{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "step":
				d.seen(&mask, 1)
				p.Step = d.intField()
			case "attempt":
				d.seen(&mask, 2)
				p.Attempt = d.intField()
			case "code":
				d.seen(&mask, 4)
				p.Code = harness.Code(d.str())
			case "message":
				d.seen(&mask, 8)
				p.Message = d.str()
			case "delay_ms":
				d.seen(&mask, 16)
				p.DelayMS = d.int()
			default:
				d.fail()
			}
		}
		return p
	case typePrune:
		p := &Pruned{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "calls":
				d.seen(&mask, 1)
				if d.null() {
					break
				}
				p.Calls = []PrunedCall{}
				for first := true; d.elems(&first); {
					p.Calls = append(p.Calls, d.prunedCall())
				}
			case "estimated_tokens":
				d.seen(&mask, 2)
				p.EstimatedTokens = d.int()
			default:
				d.fail()
			}
		}
		return p
	case typeCompaction:
		p := &Compacted{}
		var mask uint32
		for first := true; ; {
			k, ok := d.fields(&first)
			if !ok {
				break
			}
			switch string(k) {
			case "messages":
				d.seen(&mask, 1)
				p.Messages = d.intField()
			case "summary":
				d.seen(&mask, 2)
				p.Summary = d.str()
			case "model":
				d.seen(&mask, 4)
				p.Model = d.str()
			case "source_tokens":
				d.seen(&mask, 8)
				p.SourceTokens = d.int()
			case "summary_tokens":
				d.seen(&mask, 16)
				p.SummaryTokens = d.int()
			default:
				d.fail()
			}
		}
		return p
	case typeApproval, typePermission:
		// Rare events (one per decision): the plain decoder.
		raw := d.raw()
		p, _ := newPayload(typ)
		if d.bad || json.Unmarshal(raw, p) != nil {
			d.fail()
		}
		return p
	}
	return &Unknown{Type: typ, Data: d.raw()}
}

func (d *decoder) prunedCall() PrunedCall {
	var c PrunedCall
	if d.null() {
		return c
	}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "call_id":
			d.seen(&mask, 1)
			c.CallID = d.str()
		case "seq":
			d.seen(&mask, 2)
			c.Seq = d.int()
		case "placeholder":
			d.seen(&mask, 4)
			c.Placeholder = d.str()
		default:
			d.fail()
		}
	}
	return c
}

func (d *decoder) fingerprint() Fingerprint {
	var f Fingerprint
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "system":
			d.seen(&mask, 1)
			f.System = d.str()
		case "tools":
			d.seen(&mask, 2)
			f.Tools = d.str()
		case "history":
			d.seen(&mask, 4)
			f.History = d.str()
		case "messages":
			d.seen(&mask, 8)
			f.Messages = d.intField()
		default:
			d.fail()
		}
	}
	return f
}

func (d *decoder) errorInfo() *ErrorInfo {
	e := &ErrorInfo{}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "code":
			d.seen(&mask, 1)
			e.Code = harness.Code(d.str())
		case "message":
			d.seen(&mask, 2)
			e.Message = d.str()
		default:
			d.fail()
		}
	}
	return e
}

func (d *decoder) usage() harness.Usage {
	var u harness.Usage
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "input_tokens":
			d.seen(&mask, 1)
			u.InputTokens = d.int()
		case "output_tokens":
			d.seen(&mask, 2)
			u.OutputTokens = d.int()
		case "cache_hit_tokens":
			d.seen(&mask, 4)
			u.CacheHitTokens = d.int()
		case "cache_miss_tokens":
			d.seen(&mask, 8)
			u.CacheMissTokens = d.int()
		case "reasoning_tokens":
			d.seen(&mask, 16)
			u.ReasoningTokens = d.int()
		default:
			d.fail()
		}
	}
	return u
}

// blocks reads a list of blocks; null is a nil list.
func (d *decoder) blocks() []harness.Block {
	if d.null() {
		return nil
	}
	out := make([]harness.Block, 0, 2)
	for first := true; d.elems(&first); {
		out = append(out, d.block())
	}
	return out
}

func (d *decoder) block() harness.Block {
	var b harness.Block
	if d.null() {
		return b
	}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			d.seen(&mask, 1)
			b.Type = harness.BlockType(d.str())
		case "text":
			d.seen(&mask, 2)
			b.Text = d.str()
		case "image":
			d.seen(&mask, 4)
			if !d.null() {
				b.Image = d.image()
			}
		case "tool_call":
			d.seen(&mask, 8)
			if !d.null() {
				b.ToolCall = d.toolCall()
			}
		case "tool_result":
			d.seen(&mask, 16)
			if !d.null() {
				r := d.toolResult()
				b.ToolResult = &r
			}
		default:
			d.fail()
		}
	}
	return b
}

func (d *decoder) image() *harness.Image {
	img := &harness.Image{}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "digest":
			d.seen(&mask, 1)
			img.Digest = d.str()
		case "media_type":
			d.seen(&mask, 2)
			img.MediaType = d.str()
		case "width":
			d.seen(&mask, 4)
			img.Width = d.intField()
		case "height":
			d.seen(&mask, 8)
			img.Height = d.intField()
		case "size":
			d.seen(&mask, 16)
			img.Size = d.int()
		case "name":
			d.seen(&mask, 32)
			img.Name = d.str()
		default:
			d.fail()
		}
	}
	return img
}

func (d *decoder) toolCall() *harness.ToolCall {
	c := &harness.ToolCall{}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "id":
			d.seen(&mask, 1)
			c.ID = d.str()
		case "name":
			d.seen(&mask, 2)
			c.Name = d.str()
		case "arguments":
			d.seen(&mask, 4)
			c.Arguments = d.str()
		default:
			d.fail()
		}
	}
	return c
}

func (d *decoder) toolResult() harness.ToolResult {
	var r harness.ToolResult
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "call_id":
			d.seen(&mask, 1)
			r.CallID = d.str()
		case "name":
			d.seen(&mask, 2)
			r.Name = d.str()
		case "content":
			d.seen(&mask, 4)
			r.Content = d.blocks()
		case "is_error":
			d.seen(&mask, 8)
			r.IsError = d.bool()
		case "code":
			d.seen(&mask, 16)
			r.Code = harness.Code(d.str())
		case "render":
			d.seen(&mask, 32)
			if !d.null() {
				r.Render = d.render()
			}
		case "files":
			d.seen(&mask, 64)
			if d.null() {
				break
			}
			r.Files = []harness.FileAccess{}
			for first := true; d.elems(&first); {
				r.Files = append(r.Files, d.fileAccess())
			}
		default:
			d.fail()
		}
	}
	return r
}

func (d *decoder) fileAccess() harness.FileAccess {
	var f harness.FileAccess
	if d.null() {
		return f
	}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "op":
			d.seen(&mask, 1)
			f.Op = harness.FileOp(d.str())
		case "path":
			d.seen(&mask, 2)
			f.Path = d.str()
		case "version":
			d.seen(&mask, 4)
			f.Version = d.str()
		case "start_line":
			d.seen(&mask, 8)
			f.StartLine = d.intField()
		case "end_line":
			d.seen(&mask, 16)
			f.EndLine = d.intField()
		case "complete":
			d.seen(&mask, 32)
			f.Complete = d.bool()
		default:
			d.fail()
		}
	}
	return f
}

func (d *decoder) render() *harness.Render {
	r := &harness.Render{}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "kind":
			d.seen(&mask, 1)
			r.Kind = harness.RenderKind(d.str())
		case "title":
			d.seen(&mask, 2)
			r.Title = d.str()
		case "terminal":
			d.seen(&mask, 4)
			if !d.null() {
				r.Terminal = d.terminal()
			}
		case "diff":
			d.seen(&mask, 8)
			if !d.null() {
				r.Diff = d.diff()
			}
		case "locations":
			d.seen(&mask, 16)
			if d.null() {
				break
			}
			r.Locations = []harness.Location{}
			for first := true; d.elems(&first); {
				r.Locations = append(r.Locations, d.location())
			}
		case "text":
			d.seen(&mask, 32)
			r.Text = d.str()
		default:
			d.fail()
		}
	}
	return r
}

func (d *decoder) terminal() *harness.Terminal {
	t := &harness.Terminal{}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "command":
			d.seen(&mask, 1)
			t.Command = d.str()
		case "cwd":
			d.seen(&mask, 2)
			t.Cwd = d.str()
		case "output":
			d.seen(&mask, 4)
			t.Output = d.str()
		case "exit_code":
			d.seen(&mask, 8)
			if !d.null() {
				n := d.intField()
				t.ExitCode = &n
			}
		case "status":
			d.seen(&mask, 16)
			t.Status = d.str()
		default:
			d.fail()
		}
	}
	return t
}

func (d *decoder) diff() *harness.Diff {
	df := &harness.Diff{}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "path":
			d.seen(&mask, 1)
			df.Path = d.str()
		case "old_text":
			d.seen(&mask, 2)
			if !d.null() {
				s := d.str()
				df.OldText = &s
			}
		case "new_text":
			d.seen(&mask, 4)
			df.NewText = d.str()
		case "hunks":
			d.seen(&mask, 8)
			if d.null() {
				break
			}
			df.Hunks = []harness.Hunk{}
			for first := true; d.elems(&first); {
				df.Hunks = append(df.Hunks, d.hunk())
			}
		case "added":
			d.seen(&mask, 16)
			df.Added = d.intField()
		case "removed":
			d.seen(&mask, 32)
			df.Removed = d.intField()
		case "truncated":
			d.seen(&mask, 64)
			df.Truncated = d.bool()
		default:
			d.fail()
		}
	}
	return df
}

func (d *decoder) hunk() harness.Hunk {
	var h harness.Hunk
	if d.null() {
		return h
	}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "old_start":
			d.seen(&mask, 1)
			h.OldStart = d.intField()
		case "old_lines":
			d.seen(&mask, 2)
			h.OldLines = d.intField()
		case "new_start":
			d.seen(&mask, 4)
			h.NewStart = d.intField()
		case "new_lines":
			d.seen(&mask, 8)
			h.NewLines = d.intField()
		case "lines":
			d.seen(&mask, 16)
			if d.null() {
				break
			}
			h.Lines = []string{}
			for first := true; d.elems(&first); {
				if d.peek() == 'n' {
					d.fail() // null in a []string keeps "" only by accident of encoding/json
					break
				}
				h.Lines = append(h.Lines, d.str())
			}
		default:
			d.fail()
		}
	}
	return h
}

func (d *decoder) location() harness.Location {
	var l harness.Location
	if d.null() {
		return l
	}
	var mask uint32
	for first := true; ; {
		k, ok := d.fields(&first)
		if !ok {
			break
		}
		switch string(k) {
		case "path":
			d.seen(&mask, 1)
			l.Path = d.str()
		case "start_line":
			d.seen(&mask, 2)
			l.StartLine = d.intField()
		case "end_line":
			d.seen(&mask, 4)
			l.EndLine = d.intField()
		default:
			d.fail()
		}
	}
	return l
}
