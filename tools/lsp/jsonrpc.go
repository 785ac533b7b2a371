package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The base protocol of LSP: JSON-RPC 2.0 messages, each preceded by
// headers ("Content-Length: N\r\n\r\n").

// maxHeader bounds the header block of one message.
const maxHeader = 4 << 10

// message is any JSON-RPC message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// JSON-RPC error codes used here.
const (
	codeMethodNotFound   = -32601
	codeRequestCancelled = -32800
)

// errFraming is the error of a malformed stream; the connection cannot
// go on after it.
var errFraming = errors.New("lsp: malformed message framing")

// readMessage reads one message's body from r: headers up to a blank
// line, of which Content-Length is required and must be at most max.
func readMessage(r *bufio.Reader, max int) ([]byte, error) {
	length := -1
	seen := 0
	for {
		line, err := r.ReadSlice('\n')
		seen += len(line)
		if err == bufio.ErrBufferFull || seen > maxHeader {
			return nil, fmt.Errorf("%w: a header block longer than %d bytes", errFraming, maxHeader)
		}
		if err != nil {
			if err == io.EOF && seen == 0 {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, fmt.Errorf("%w: the stream ended inside a header", errFraming)
			}
			return nil, err
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			if length < 0 {
				return nil, fmt.Errorf("%w: a message without Content-Length", errFraming)
			}
			break
		}
		name, value, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("%w: the header line %q has no colon", errFraming, truncate(s, 80))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: Content-Length %q is not a length", errFraming, truncate(value, 40))
			}
			if n > max {
				return nil, fmt.Errorf("%w: a message of %d bytes, more than the %d allowed", errFraming, n, max)
			}
			length = n
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, fmt.Errorf("%w: the stream ended inside a message", errFraming)
		}
		return nil, err
	}
	return body, nil
}

// writeMessage writes one message with its header.
func writeMessage(w io.Writer, body []byte) error {
	var b bytes.Buffer
	b.Grow(len(body) + 32)
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	_, err := w.Write(b.Bytes())
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// handlers answer what the server sends: requests (their result or an
// error) and notifications.
type handlers struct {
	request func(method string, params json.RawMessage) (any, *rpcError)
	notify  func(method string, params json.RawMessage)
}

// conn is a JSON-RPC connection over a server's standard input and
// output. Its reader runs until the stream ends or breaks; then every
// pending call fails and done is closed.
type conn struct {
	w       io.Writer
	writeMu sync.Mutex
	nextID  atomic.Int64

	mu      sync.Mutex
	pending map[string]chan *message
	err     error // why the connection ended, once it has

	done chan struct{}
	h    handlers
}

func newConn(r io.Reader, w io.Writer, max int, h handlers) *conn {
	c := &conn{w: w, pending: map[string]chan *message{}, done: make(chan struct{}), h: h}
	go c.read(bufio.NewReaderSize(r, maxHeader), max)
	return c
}

// read reads messages until the stream ends.
func (c *conn) read(r *bufio.Reader, max int) {
	var err error
	defer func() { c.close(err) }()
	for {
		var body []byte
		body, err = readMessage(r, max)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(body, &m) != nil {
			continue // not JSON-RPC: skipped, the framing still holds
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			c.answer(m)
		case m.Method != "":
			if c.h.notify != nil {
				c.h.notify(m.Method, m.Params)
			}
		case len(m.ID) > 0:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- &m
			}
		}
	}
}

// answer replies to a request of the server.
func (c *conn) answer(m message) {
	var result any
	var rerr *rpcError
	if c.h.request != nil {
		result, rerr = c.h.request(m.Method, m.Params)
	} else {
		rerr = &rpcError{Code: codeMethodNotFound, Message: "method not supported: " + m.Method}
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		reply["error"] = rerr
	} else {
		reply["result"] = result
	}
	_ = c.send(reply)
}

func (c *conn) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return c.closedErr()
	default:
	}
	if err := writeMessage(c.w, body); err != nil {
		// A message written in part leaves the stream unusable.
		c.close(fmt.Errorf("writing to the server failed: %w", err))
		return err
	}
	return nil
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request and waits for its response, ctx or the end of
// the connection. When ctx ends first the request is cancelled
// ($/cancelRequest) and ctx's error returned.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.closedErr()
	}
	c.pending[key] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		c.forget(key)
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if result != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		c.forget(key)
		_ = c.notify("$/cancelRequest", map[string]any{"id": id})
		return ctx.Err()
	case <-c.done:
		return c.closedErr()
	}
}

func (c *conn) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}

// close ends the connection with err (nil for a clean end of stream).
func (c *conn) close(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.EOF
	}
	c.err = err
	close(c.done)
}

// closedErr says why the connection ended.
func (c *conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil || errors.Is(c.err, io.EOF) {
		return errors.New("the server closed its output (it exited or crashed)")
	}
	return c.err
}
