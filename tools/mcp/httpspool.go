package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-harness/harness/internal/units"
)

// An HTTP server's answers reach the SDK through these readers, which
// bound what is held in memory the way a stdio connection does: a
// message over the frame limit is spooled to a temporary file as it
// arrives, and the SDK gets a small stand-in in its place (see
// bigRules.standIn). A JSON answer is one message; an event stream
// carries one message per event.

// postedRequest is what the transport knows of the request a response
// answers: its id as compact JSON, and whether it is a tool call.
type postedRequest struct {
	key  string
	call bool
}

// requestOf reads the method and id of a posted JSON-RPC message.
func requestOf(body []byte) postedRequest {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || m.ID == nil {
		return postedRequest{}
	}
	key, ok := compactID(m.ID)
	if !ok {
		return postedRequest{}
	}
	return postedRequest{key: key, call: m.Method == "tools/call"}
}

func (p postedRequest) isCall(key string) bool { return p.call && key == p.key }

// jsonAnswer is the body of an application/json answer: read whole in
// memory up to the frame limit, spooled past it.
type jsonAnswer struct {
	body  io.ReadCloser
	rules bigRules
	req   postedRequest
	out   io.Reader // what the SDK reads, once the answer is in
	err   error
}

func (a *jsonAnswer) Read(p []byte) (int, error) {
	if a.out == nil && a.err == nil {
		a.out, a.err = a.take()
	}
	if a.err != nil {
		return 0, a.err
	}
	return a.out.Read(p)
}

func (a *jsonAnswer) Close() error { return a.body.Close() }

// take reads the answer: whole when it fits; past the frame limit, a
// tool call's answer into a spool up to the result bound (the rest is
// not read), and any other answer not at all.
func (a *jsonAnswer) take() (io.Reader, error) {
	buf, err := io.ReadAll(io.LimitReader(a.body, int64(a.rules.frame)+1))
	if err != nil {
		return nil, err
	}
	if len(buf) <= a.rules.frame {
		return bytes.NewReader(buf), nil
	}
	if !a.req.call {
		a.rules.logger.Warn("mcp: an answer from the server too large to read in memory was refused", "server", a.rules.server, "bytes", len(buf))
		if a.req.key == "" {
			return nil, fmt.Errorf("mcp: the server's HTTP answer is larger than the %s read of one answer", units.Bytes(int64(a.rules.frame)))
		}
		return bytes.NewReader(stand(a.req.key, fmt.Sprintf(`{"error":{"code":-32603,"message":%q}}`,
			fmt.Sprintf("the server's answer was more than the %s this client reads for anything but a tool result", units.Bytes(int64(a.rules.frame)))))), nil
	}
	f := newBigFrame(buf)
	f.write(buf, a.rules.maxResult)
	chunk := make([]byte, 64<<10)
	for !f.cut {
		n, rerr := a.body.Read(chunk)
		f.write(chunk[:n], a.rules.maxResult)
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && f.spoolErr == nil {
				f.spoolErr = rerr
			}
			break
		}
	}
	text := a.rules.standIn(f, a.req.isCall)
	if text == nil {
		return nil, fmt.Errorf("mcp: the server's HTTP answer to a tool call was larger than the %s read of one answer, and not an answer", units.Bytes(int64(a.rules.frame)))
	}
	return bytes.NewReader(text), nil
}

// sseAnswer is the body of a text/event-stream answer. Events pass
// through as they arrive; an event whose size passes the frame limit
// has its data spooled, and the SDK gets one event in its place that
// carries the stand-in message (and keeps the event's id, for
// resumption).
type sseAnswer struct {
	body  io.ReadCloser
	br    *bufio.Reader
	rules bigRules
	req   postedRequest
	// limit is the size of an event, counted as the SDK counts it, past
	// which its data is spooled: under the SDK's own bound and the
	// connection's frame limit.
	limit int

	out   bytes.Buffer // what the SDK reads next
	event []byte       // the lines of the event so far, while it is small
	done  bool
	err   error

	// The large event whose data is being spooled.
	big    *bigFrame
	inLine bool      // the last piece read did not end its line
	kind   fieldKind // the field of the line in progress
	datas  int       // data lines so far
	id     []byte    // the event's id
	name   []byte    // the event's type
}

type fieldKind int

const (
	fieldOther fieldKind = iota
	fieldData
	fieldID
	fieldEvent
)

// sdkMaxEvent is the SDK's bound on one server-sent event; sseSlack is
// the room left under the limits for the lines around a spooled event's
// data; maxField bounds a big event's id and type.
const (
	sdkMaxEvent = 16 << 20
	sseSlack    = 4 << 10
	maxField    = 1 << 10
)

func newSSEAnswer(body io.ReadCloser, rules bigRules, req postedRequest) *sseAnswer {
	limit := min(rules.frame, sdkMaxEvent) - sseSlack
	return &sseAnswer{body: body, br: bufio.NewReaderSize(body, 64<<10), rules: rules, req: req, limit: max(limit, 1)}
}

func (a *sseAnswer) Close() error {
	if f := a.big; f != nil {
		a.big = nil
		if f.file != nil {
			f.file.Close()
			os.Remove(f.file.Name())
		}
	}
	return a.body.Close()
}

func (a *sseAnswer) Read(p []byte) (int, error) {
	for a.out.Len() == 0 {
		if a.done {
			return 0, a.err
		}
		a.step()
	}
	return a.out.Read(p)
}

// step reads one line of the stream, or one piece of a long one.
func (a *sseAnswer) step() {
	frag, err := a.br.ReadSlice('\n')
	if a.big != nil {
		a.piece(frag)
		switch {
		case a.big != nil && a.big.cut:
			// Past the result bound: the rest is not read, and the
			// stream ends with the stand-in.
			a.endBig()
			a.finish(io.EOF)
		case err != nil && !errors.Is(err, bufio.ErrBufferFull):
			if a.big != nil {
				a.endBig()
			}
			a.finish(err)
		}
		return
	}
	a.event = append(a.event, frag...)
	switch {
	case len(a.event) > a.limit:
		ev := a.event
		a.event = nil
		a.big = newBigFrame(ev)
		for len(ev) > 0 && a.big != nil {
			n := bytes.IndexByte(ev, '\n') + 1
			if n == 0 {
				n = len(ev)
			}
			a.piece(ev[:n])
			ev = ev[n:]
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if a.big != nil {
				a.endBig()
			}
			a.finish(err)
		}
	case errors.Is(err, bufio.ErrBufferFull):
		// The line goes on.
	case err != nil:
		a.out.Write(a.event)
		a.event = a.event[:0]
		a.finish(err)
	case len(bytes.TrimRight(frag, "\r\n")) == 0 && (len(a.event) == len(frag) || a.event[len(a.event)-len(frag)-1] == '\n'):
		// A blank line ends the event.
		a.out.Write(a.event)
		a.event = a.event[:0]
	}
}

// piece takes a piece of a line of a large event: the whole line, or
// part of it when the line is longer than the read buffer.
func (a *sseAnswer) piece(frag []byte) {
	end := len(frag) > 0 && frag[len(frag)-1] == '\n'
	body := frag
	if end {
		body = bytes.TrimRight(frag, "\r\n")
	}
	if !a.inLine {
		if end && len(body) == 0 {
			a.endBig() // a blank line ends the event
			return
		}
		name, value, found := bytes.Cut(body, []byte(":"))
		a.kind = fieldOther
		switch {
		case !found:
		case string(name) == "data":
			a.kind = fieldData
			if a.datas > 0 {
				a.big.write([]byte("\n"), a.rules.maxResult)
			}
			a.datas++
		case string(name) == "id":
			a.kind, a.id = fieldID, a.id[:0]
		case string(name) == "event":
			a.kind, a.name = fieldEvent, a.name[:0]
		}
		body, _ = bytes.CutPrefix(value, []byte(" ")) // one space after the colon is not the value's
	}
	switch a.kind {
	case fieldData:
		a.big.write(body, a.rules.maxResult)
	case fieldID:
		a.id = append(a.id, body[:min(len(body), maxField-len(a.id))]...)
	case fieldEvent:
		a.name = append(a.name, body[:min(len(body), maxField-len(a.name))]...)
	}
	a.inLine = !end
}

// endBig ends a large event: the SDK reads the stand-in message in its
// place, under the event's id.
func (a *sseAnswer) endBig() {
	f := a.big
	a.big, a.inLine, a.datas = nil, false, 0
	name := string(bytes.TrimSpace(a.name))
	var text []byte
	if name == "" || name == "message" {
		text = a.rules.standIn(f, a.req.isCall)
	} else if f.file != nil {
		// An event of a type the SDK ignores: so is its stand-in.
		f.file.Close()
		os.Remove(f.file.Name())
	}
	if text != nil {
		if id := bytes.TrimSpace(a.id); len(id) > 0 {
			a.out.WriteString("id: ")
			a.out.Write(id)
			a.out.WriteByte('\n')
		}
		a.out.WriteString("event: message\ndata: ")
		a.out.Write(text)
		a.out.WriteString("\n\n")
	}
	a.id, a.name = a.id[:0], a.name[:0]
}

func (a *sseAnswer) finish(err error) {
	a.done, a.err = true, err
}
