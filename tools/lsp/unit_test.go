package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
)

func TestReadMessage(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}content-length:3\n\n[1]"))
	b, err := readMessage(r, 100)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(b))
	b, err = readMessage(r, 100)
	require.NoError(t, err, "header names are case-insensitive and a bare LF ends a line")
	assert.Equal(t, "[1]", string(b))
	_, err = readMessage(r, 100)
	assert.Equal(t, io.EOF, err)

	for name, in := range map[string]string{
		"no length":       "Content-Type: x\r\n\r\n{}",
		"bad length":      "Content-Length: -1\r\n\r\n",
		"too long":        "Content-Length: 101\r\n\r\n",
		"no colon":        "garbage\r\n\r\n",
		"huge header":     "X: " + strings.Repeat("a", 5000) + "\r\n",
		"cut body":        "Content-Length: 10\r\n\r\n{}",
		"cut header":      "Content-Len",
		"length overflow": "Content-Length: 99999999999999999999\r\n\r\n",
	} {
		_, err := readMessage(bufio.NewReaderSize(strings.NewReader(in), maxHeader), 100)
		assert.ErrorIs(t, err, errFraming, name)
	}
}

// FuzzReadMessage checks that any byte stream either frames into
// messages no longer than the limit or fails with a framing error, and
// that what writeMessage writes reads back.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), []byte(`{"a":1}`))
	f.Add([]byte("Content-Length: 5\n\nhello"), []byte(""))
	f.Add([]byte("X: y\r\nContent-Length: 0\r\n\r\n"), []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, stream, body []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(stream), maxHeader)
		for i := 0; i < 100; i++ {
			b, err := readMessage(r, 64)
			if err != nil {
				break
			}
			if len(b) > 64 {
				t.Fatalf("a message of %d bytes passed a limit of 64", len(b))
			}
		}
		var w bytes.Buffer
		require.NoError(t, writeMessage(&w, body))
		got, err := readMessage(bufio.NewReader(&w), len(body))
		require.NoError(t, err)
		require.Equal(t, body, got)
	})
}

// TestConnAnswersAndCancels: the connection answers the server's
// requests, hands responses to their calls, and cancels a call whose
// context ends.
func TestConnAnswersAndCancels(t *testing.T) {
	leakcheck.Check(t)
	toClient, fromServer := io.Pipe()
	fromClient, toServer := io.Pipe()
	c := newConn(toClient, toServer, 1<<20, handlers{request: func(method string, _ json.RawMessage) (any, *rpcError) {
		if method == "ping" {
			return "pong", nil
		}
		return nil, &rpcError{Code: codeMethodNotFound, Message: "no"}
	}})
	server := bufio.NewReader(fromClient)
	send := func(s string) {
		require.NoError(t, writeMessage(fromServer, []byte(s)))
	}
	recv := func() map[string]any {
		b, err := readMessage(server, 1<<20)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}

	send(`{"jsonrpc":"2.0","id":"s1","method":"ping"}`)
	assert.Equal(t, map[string]any{"jsonrpc": "2.0", "id": "s1", "result": "pong"}, recv())
	send(`{"jsonrpc":"2.0","id":7,"method":"other"}`)
	assert.Equal(t, float64(codeMethodNotFound), recv()["error"].(map[string]any)["code"])

	done := make(chan error, 1)
	var result string
	go func() { done <- c.call(context.Background(), "hello", nil, &result) }()
	req := recv()
	assert.Equal(t, "hello", req["method"])
	send(`{"jsonrpc":"2.0","id":` + jsonNumber(req["id"]) + `,"result":"world"}`)
	require.NoError(t, <-done)
	assert.Equal(t, "world", result)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	go func() { done <- c.call(ctx, "slow", nil, nil) }()
	req = recv()
	cancelMsg := recv() // the cancellation is written before the call returns
	assert.ErrorIs(t, <-done, context.DeadlineExceeded)
	assert.Equal(t, "$/cancelRequest", cancelMsg["method"])
	assert.Equal(t, req["id"], cancelMsg["params"].(map[string]any)["id"])

	// The server's output ends: pending and later calls fail.
	go func() { done <- c.call(context.Background(), "never", nil, nil) }()
	recv()
	fromServer.Close()
	assert.ErrorContains(t, <-done, "closed its output")
	assert.ErrorContains(t, c.call(context.Background(), "after", nil, nil), "closed its output")
	fromClient.Close()
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestDelta(t *testing.T) {
	d := func(path, msg string, line int) Diagnostic {
		return Diagnostic{Path: path, Line: line, Column: 1, Severity: SeverityError, Source: "compiler", Message: msg}
	}
	old := []Diagnostic{d("a", "x", 1), d("a", "y", 2), d("a", "y", 3)}
	cur := []Diagnostic{d("a", "x", 10), d("a", "y", 11), d("a", "y", 12), d("a", "y", 13), d("a", "z", 14)}
	added, gone := delta(old, cur)
	assert.Equal(t, []Diagnostic{d("a", "y", 13), d("a", "z", 14)}, added, "moved diagnostics are not new; a third equal one is")
	assert.Zero(t, gone)
	added, gone = delta(cur, old)
	assert.Empty(t, added)
	assert.Equal(t, 2, gone)
}

func TestReportBounds(t *testing.T) {
	m, err := New(Config{MaxDiagnostics: 2, MaxMessage: 20})
	require.NoError(t, err)
	defer m.Close()
	tg := &target{os: "/ws/a.go", osRoot: "/ws", nsRoot: "/ws", cwd: "/ws", srv: &Server{Name: "s"}}
	var after []Diagnostic
	for i := 1; i <= 5; i++ {
		after = append(after, Diagnostic{Path: "/ws/a.go", Line: i, Column: 2, Severity: SeverityError, Message: "a long\nmulti-line message that goes on and on", Code: "C"})
	}
	after = append(after, Diagnostic{Path: "/ws/a.go", Line: 9, Severity: SeverityHint, Message: "hint"})
	note := m.report(tg, &state{settled: true}, &state{file: after, settled: true,
		others: map[string][]Diagnostic{"/elsewhere/x.go": {{Path: "/elsewhere/x.go", Severity: SeverityError, Message: "outside"}}}})
	assert.Equal(t, "Diagnostics (s): 5 new problems after this change:\n"+
		"a.go:1:2: error: a long multi-line me… (C)\n"+
		"a.go:2:2: error: a long multi-line me… (C)\n"+
		"… and 3 more.", note)
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Wait: -1}, {Quiet: -1}, {MaxDiagnostics: -1}, {MinSeverity: 9}, {Env: []string{"NOEQUALS"}},
		{Servers: []Server{{Name: "", Command: []string{"x"}, Languages: map[string]string{".x": "x"}}}},
		{Servers: []Server{{Name: "a", Languages: map[string]string{".x": "x"}}}},
		{Servers: []Server{{Name: "a", Command: []string{"x"}, Languages: map[string]string{"x": "x"}}}},
		{Servers: []Server{{Name: "a", Command: []string{"x"}}}},
	} {
		_, err := New(cfg)
		assert.ErrorIs(t, err, harness.CodeInvalidOption, "%+v", cfg)
	}
}

func TestURIs(t *testing.T) {
	for _, p := range []string{"/ws/a.go", "/ws/with space/é.go", "/ws/100%/#x?.go"} {
		assert.Equal(t, p, uriPath(fileURI(p)), p)
	}
	assert.Equal(t, "file:///ws/with%20space/a.go", fileURI("/ws/with space/a.go"))
	assert.Equal(t, "", uriPath("untitled:1"))
}

// FuzzOneLine checks that a server's text comes out as one line of
// printable, valid UTF-8 within the bound.
func FuzzOneLine(f *testing.F) {
	f.Add("undefined: x\n\tmore", 20)
	f.Add("\x1b[31mred\x07\u0085é", 5)
	f.Add("\xff\xfe broken", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 1 || n > 1000 {
			return
		}
		out := oneLine(s, n)
		if !utf8.ValidString(out) {
			t.Fatalf("oneLine(%q) is not valid UTF-8", s)
		}
		if len(out) > n+len("…") {
			t.Fatalf("oneLine(%q, %d) is %d bytes", s, n, len(out))
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("oneLine(%q) kept %q", s, r)
			}
		}
	})
}
