package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemas keeps each tool's input schema as the server wrote it. The SDK
// decodes schemas into maps, whose encoding sorts the keys; the model is
// sent the server's own bytes instead (compacted), so the request prefix
// stays what the server meant and stays cacheable.
type schemas struct {
	mu  sync.Mutex
	raw map[string]json.RawMessage
}

func (s *schemas) get(tool string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.raw[tool]
	return r, ok
}

// observe records the input schemas of a tools/list result.
func (s *schemas) observe(result json.RawMessage) {
	if !bytes.Contains(result, []byte(`"inputSchema"`)) {
		return
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &list) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raw == nil {
		s.raw = map[string]json.RawMessage{}
	}
	for _, t := range list.Tools {
		var b bytes.Buffer
		if t.Name == "" || json.Compact(&b, t.InputSchema) != nil {
			continue
		}
		s.raw[t.Name] = b.Bytes()
	}
}

// captureTransport wraps a message transport (stdio, in-memory) so that
// tools/list results are seen before the SDK decodes them.
type captureTransport struct {
	sdk.Transport
	schemas *schemas
}

func (t *captureTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: c, schemas: t.schemas}, nil
}

type captureConn struct {
	sdk.Connection
	schemas *schemas
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil && r.Error == nil {
		c.schemas.observe(r.Result)
	}
	return m, err
}

// httpTransport adds the configured headers to every request of a
// streamable HTTP connection and sees tools/list results on their way
// to the SDK. (A streamable connection cannot be wrapped like a message
// transport: the SDK tells it about the session through an unexported
// method.)
type httpTransport struct {
	base    http.RoundTripper
	headers map[string]string
	schemas *schemas
	// rules bound what of an answer is held in memory: a larger message
	// is spooled (a tool result) or refused.
	rules bigRules
}

// maxListBody bounds the tools/list response read whole to find the
// schemas in it.
const maxListBody = 32 << 20

func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var posted postedRequest
	listing := false
	if req.Method == http.MethodPost && req.Body != nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(body, 1<<20))
			body.Close()
			listing = bytes.Contains(b, []byte(`"tools/list"`))
			posted = requestOf(b)
		}
	}
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	rules := t.rules
	rules.owner = t
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt {
	case "application/json":
		// The SDK reads a JSON answer whole, without a bound.
		resp.Body = &jsonAnswer{body: resp.Body, rules: rules, req: posted}
	case "text/event-stream":
		// The SDK bounds an event at 16 MiB and ends the stream past it.
		resp.Body = newSSEAnswer(resp.Body, rules, posted)
	}
	if !listing || resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxListBody+1))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if len(data) > maxListBody {
		// Too long to hold for a look at the schemas: the SDK gets the
		// body as it is, and the schemas are encoded from what it decodes.
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
		return resp, nil
	}
	resp.Body.Close()
	t.observe(data)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// observe finds JSON-RPC responses in a body that is either one JSON
// message or a stream of server-sent events.
func (t *httpTransport) observe(data []byte) {
	try := func(b []byte) {
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(b, &r) == nil && r.Result != nil {
			t.schemas.observe(r.Result)
		}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		try(trimmed)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxListBody)
	var event bytes.Buffer
	flush := func() {
		if event.Len() > 0 {
			try(event.Bytes())
			event.Reset()
		}
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			flush()
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if event.Len() > 0 {
				event.WriteByte('\n')
			}
			event.Write(bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	flush()
}
