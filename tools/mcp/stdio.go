package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/go-harness/harness/internal/units"
)

// maxFrame is the largest message from a stdio server decoded in memory
// (the frame limit of a connection, which tests lower), the SDK's own
// limit. A tool result that is larger is spooled to a
// temporary file as it arrives and read from there in pieces; anything
// else that is larger is answered with an error (a response) or dropped
// (a request or notification), and the connection goes on.
const maxFrame = 16 << 20

// frameHead is how much of a spooled message is kept in memory too, to
// find its id should the spool fail.
const frameHead = 64 << 10

// spoolKey is the _meta key of the stand-in result that tells the tool
// a result was spooled, and under which name.
const spoolKey = "go-harness/spooled"

// stdioConn is the connection to a stdio server: newline-delimited
// JSON-RPC messages over the server's standard output and input, as the
// SDK's IOTransport speaks them, with what that transport cannot do: a
// tool result of any size up to Config.MaxResultBytes, lines that are
// not JSON-RPC skipped (and logged) instead of ending the connection.
type stdioConn struct {
	w         io.WriteCloser
	writeMu   sync.Mutex
	spools    *spools
	maxFrame  int
	maxResult int64
	logger    *slog.Logger
	server    string

	mu    sync.Mutex
	calls map[string]bool // the ids of tools/call requests awaiting an answer
	queue []jsonrpc.Message

	incoming  chan frameOrErr
	closed    chan struct{}
	closeOnce sync.Once
}

type frameOrErr struct {
	msgs []jsonrpc.Message
	err  error
}

func newStdioConn(r io.Reader, w io.WriteCloser, sp *spools, frame int, maxResult int64, logger *slog.Logger, server string) *stdioConn {
	c := &stdioConn{w: w, spools: sp, maxFrame: frame, maxResult: maxResult, logger: logger, server: server,
		calls: map[string]bool{}, incoming: make(chan frameOrErr), closed: make(chan struct{})}
	go c.readLoop(r)
	return c
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message from the server.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		c.mu.Unlock()
		return m, nil
	}
	c.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case f := <-c.incoming:
		if f.err != nil {
			return nil, f.err
		}
		c.mu.Lock()
		c.queue = append(c.queue, f.msgs[1:]...)
		c.mu.Unlock()
		return f.msgs[0], nil
	}
}

// Write sends a message to the server.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.ID.IsValid() {
		if key, ok := idKeyOf(data); ok {
			c.mu.Lock()
			c.calls[key] = true
			c.mu.Unlock()
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// Close closes the connection: the server's input, which shuts it down,
// and what was spooled for calls that will not take it.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.w.Close()
		c.spools.dropOf(c)
	})
	return err
}

// idKeyOf returns the id of an encoded message as compact JSON, the
// form that matches the id of its answer.
func idKeyOf(data []byte) (string, bool) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || m.ID == nil {
		return "", false
	}
	return compactID(m.ID)
}

func compactID(raw json.RawMessage) (string, bool) {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil || b.Len() == 0 || b.String() == "null" {
		return "", false
	}
	return b.String(), true
}

// answered notes that the call with this id has its answer.
func (c *stdioConn) answered(key string) (wasCall bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wasCall = c.calls[key]
	delete(c.calls, key)
	return wasCall
}

func (c *stdioConn) deliver(f frameOrErr) bool {
	select {
	case c.incoming <- f:
		return true
	case <-c.closed:
		return false
	}
}

// readLoop reads the server's messages until its output ends or the
// connection closes.
func (c *stdioConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	skipped := 0
	for {
		line, big, err := c.readFrame(br)
		if err != nil {
			c.deliver(frameOrErr{err: err})
			return
		}
		var msgs []jsonrpc.Message
		switch {
		case big != nil:
			msgs = c.oversized(big)
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			var derr error
			msgs, derr = decodeFrame(line)
			if derr != nil {
				// Not JSON-RPC: a server that writes its logs to
				// standard output, say. Skipped, and said.
				skipped++
				if skipped <= 10 {
					c.logger.Warn("mcp: a line from the server is not a JSON-RPC message; skipped", "server", c.server,
						"line", quoteHead(line, 200), "error", derr)
				}
				continue
			}
		}
		for _, m := range msgs {
			if resp, ok := m.(*jsonrpc.Response); ok {
				if key, ok := compactID(rawID(resp.ID)); ok {
					c.answered(key)
				}
			}
		}
		if len(msgs) > 0 && !c.deliver(frameOrErr{msgs: msgs}) {
			return
		}
	}
}

// rawID encodes an id for comparison with the ids of written calls.
func rawID(id jsonrpc.ID) json.RawMessage {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return nil
	}
	return b
}

// decodeFrame decodes one line: a message, or a batch of them.
func decodeFrame(line []byte) ([]jsonrpc.Message, error) {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(t, &batch); err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			return nil, errors.New("an empty batch")
		}
		var out []jsonrpc.Message
		for _, raw := range batch {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	m, err := jsonrpc.DecodeMessage(t)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{m}, nil
}

func quoteHead(b []byte, n int) string {
	if len(b) > n {
		return fmt.Sprintf("%q…", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// bigFrame is a message larger than maxFrame: its first bytes, and the
// file it was spooled to (nil when spooling failed, with why).
type bigFrame struct {
	head     []byte
	file     *os.File
	size     int64 // bytes received
	cut      bool  // more than maxResult came; the rest was discarded
	spoolErr error
}

// readFrame reads one line: in memory up to maxFrame bytes, spooled to
// a temporary file past that (and discarded past maxResult).
func (c *stdioConn) readFrame(br *bufio.Reader) ([]byte, *bigFrame, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > c.maxFrame {
			return nil, c.spoolFrame(br, append(buf, chunk...), err), nil
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf, nil, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil, nil
		default:
			return nil, nil, err
		}
	}
}

// spoolFrame writes the rest of a large line to a temporary file; first
// holds what was read of it, and err the read's error, if any.
func (c *stdioConn) spoolFrame(br *bufio.Reader, first []byte, err error) *bigFrame {
	f := newBigFrame(first)
	f.write(bytes.TrimRight(first, "\n"), c.maxResult)
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		f.write(bytes.TrimRight(chunk, "\n"), c.maxResult)
	}
	return f
}

// newBigFrame starts the spool of a message too large for memory; first
// is what was read of it so far, whose start is kept in memory too. The
// caller writes first (or what of it is the message) with write.
func newBigFrame(first []byte) *bigFrame {
	f := &bigFrame{head: bytes.Clone(first[:min(len(first), frameHead)])}
	file, ferr := os.CreateTemp("", "harness-mcp-result-*")
	if ferr != nil {
		f.spoolErr = ferr
	} else {
		f.file = file
	}
	return f
}

// write adds p to the spool, discarding what comes past maxResult.
func (f *bigFrame) write(p []byte, maxResult int64) {
	if f.size+int64(len(p)) > maxResult {
		p = p[:max(maxResult-f.size, 0)]
		f.cut = true
	}
	f.size += int64(len(p))
	if f.file != nil && f.spoolErr == nil && len(p) > 0 {
		if _, werr := f.file.Write(p); werr != nil {
			f.spoolErr = werr
		}
	}
}

// oversized turns a message larger than maxFrame into what the SDK can
// take (see bigRules.standIn).
func (c *stdioConn) oversized(f *bigFrame) []jsonrpc.Message {
	rules := bigRules{frame: c.maxFrame, maxResult: c.maxResult, logger: c.logger, server: c.server, spools: c.spools, owner: c}
	text := rules.standIn(f, c.answered)
	if text == nil {
		return nil
	}
	m, err := jsonrpc.DecodeMessage(text)
	if err != nil {
		return nil
	}
	return []jsonrpc.Message{m}
}

// bigRules are a connection's bounds and where its spooled answers wait.
type bigRules struct {
	frame     int
	maxResult int64
	logger    *slog.Logger
	server    string
	spools    *spools
	owner     any // the connection, whose close drops what no tool took
}

// standIn turns a message larger than the frame limit into what the SDK
// can take, as encoded JSON-RPC: for the answer to a tool call (isCall
// says which ids those are), a stand-in result naming the spooled file,
// which the tool reads in pieces (or, when it could not be kept, an
// error result that says so); for any other answer, an error response;
// nil for a request or a notification, which are dropped.
func (r bigRules) standIn(f *bigFrame, isCall func(key string) bool) []byte {
	var sv surveyed
	var serr error
	if f.file != nil && f.spoolErr == nil {
		if _, err := f.file.Seek(0, io.SeekStart); err != nil {
			f.spoolErr = err
		} else {
			sv, serr = survey(f.file)
		}
	}
	if f.file == nil || f.spoolErr != nil || (serr != nil && sv.id == nil) {
		// Find the id in what was kept of the beginning.
		sv, _ = survey(bytes.NewReader(f.head))
	}
	key, haveID := compactID(sv.id)
	size := units.Bytes(f.size)
	if f.cut {
		size = "more than " + units.Bytes(r.maxResult)
	}
	drop := func() {
		if f.file != nil {
			f.file.Close()
			os.Remove(f.file.Name())
		}
	}
	if !haveID || sv.method {
		drop()
		r.logger.Warn("mcp: a message from the server too large to read in memory was dropped", "server", r.server, "bytes", f.size, "request", sv.method)
		return nil
	}
	if !isCall(key) {
		drop()
		r.logger.Warn("mcp: an answer from the server too large to read in memory was refused", "server", r.server, "bytes", f.size)
		return stand(key, fmt.Sprintf(`{"error":{"code":-32603,"message":%q}}`,
			fmt.Sprintf("the server's answer was %s, more than the %s this client reads for anything but a tool result", size, units.Bytes(int64(r.frame)))))
	}
	var problem string
	switch {
	case f.file == nil || f.spoolErr != nil:
		why := f.spoolErr
		problem = fmt.Sprintf("The tool ran, but its result (%s) could not be kept for reading: %v. Check what the tool did before running it again.", size, why)
	case serr != nil && !f.cut:
		problem = fmt.Sprintf("The tool ran, but its result (%s) is not valid JSON (%v), so it cannot be read. Check what the tool did before running it again.", size, serr)
	}
	if problem != "" {
		drop()
		r.logger.Warn("mcp: a large tool result could not be read", "server", r.server, "bytes", f.size, "problem", problem)
		return stand(key, fmt.Sprintf(`{"result":{"isError":true,"content":[{"type":"text","text":%q}]}}`, problem))
	}
	name := r.spools.put(r.owner, &spooled{path: f.file.Name(), size: f.size, cut: f.cut, survey: sv, frame: r.frame})
	f.file.Close()
	return stand(key, fmt.Sprintf(`{"result":{"content":[],"_meta":{%q:%q}}}`, spoolKey, name))
}

// stand builds the text of a response: body is the JSON object text of
// a response without its id, which is added.
func stand(key, body string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + key + `,` + body[1:])
}

// spooled is a tool result waiting in a temporary file for its tool.
type spooled struct {
	path   string
	size   int64
	frame  int // the connection's frame limit, which it was over
	cut    bool
	survey surveyed
	owner  any
}

// spools are the spooled results of a server not yet taken by their
// tools, under random names a server cannot guess.
type spools struct {
	mu sync.Mutex
	m  map[string]*spooled
}

func (s *spools) put(owner any, sp *spooled) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	name := hex.EncodeToString(b[:])
	sp.owner = owner
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*spooled{}
	}
	s.m[name] = sp
	return name
}

// take returns the result spooled under name and forgets it; the caller
// removes its file.
func (s *spools) take(name string) *spooled {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.m[name]
	delete(s.m, name)
	return sp
}

// dropOf removes the results of a closed connection that no tool took;
// a nil owner removes every connection's.
func (s *spools) dropOf(owner any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, sp := range s.m {
		if owner == nil || sp.owner == owner {
			os.Remove(sp.path)
			delete(s.m, name)
		}
	}
}
