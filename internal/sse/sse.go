// Package sse splits a server-sent event stream into events, as model
// providers send them, for the provider adapters.
//
// It imports nothing of the module.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Event is one server-sent event.
type Event struct {
	// Name is the event field ("" for the default message event).
	Name string
	// Data is the event's data, its lines joined by "\n". It is valid
	// until the next call of [Reader.Next].
	Data []byte
	// Done marks the "[DONE]" sentinel that ends an OpenAI-format
	// stream.
	Done bool
}

// Reader reads events. It follows the SSE format as providers use it and
// tolerates what some of them send: CRLF line ends, "data:" with or
// without the space, comments and blank keep-alive lines, a last event
// without its blank line, lines of any length (a whole tool call's
// arguments may come in one), and bare JSON lines without a "data:"
// field, each taken as one event.
type Reader struct {
	r    *bufio.Reader
	line []byte
	data []byte
	name string
	has  bool
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 8<<10)}
}

// readLine returns the next line without its end, or io.EOF after the
// last one. The slice is valid until the next call.
func (s *Reader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.line = append(s.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			s.line = append(s.line, line...)
		}
		line = s.line
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

// Next returns the next event, or io.EOF when the stream ends without
// another (whether the stream was complete is for the caller to tell),
// or the error reading failed with.
func (s *Reader) Next() (Event, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && s.has {
				return s.dispatch(), nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if s.has {
				return s.dispatch(), nil
			}
			s.name = ""
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alive
		}
		if (line[0] == '{' || line[0] == '[') && !s.has {
			// A bare JSON line: one event by itself.
			s.data = append(s.data[:0], line...)
			s.has = true
			return s.dispatch(), nil
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if s.has {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			s.has = true
		case "event":
			s.name = string(value)
		}
	}
}

func (s *Reader) dispatch() Event {
	ev := Event{Name: s.name, Data: s.data}
	s.data, s.name, s.has = s.data[:0], "", false
	if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
		ev.Done = true
	}
	return ev
}
