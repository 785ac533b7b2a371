package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
	"github.com/go-harness/harness/tools/mcp/internal/testserver"
)

// httpServer serves the test server over streamable HTTP on 127.0.0.1,
// refusing requests without the expected Authorization header.
func httpServer(t *testing.T, opts *sdk.StreamableHTTPOptions) (url string, unauthorized *atomic.Int64) {
	var stats testserver.Stats
	srv := testserver.New(&stats, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, opts)
	unauthorized = &atomic.Int64{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", unauthorized
}

func TestStreamableHTTP(t *testing.T) {
	for _, c := range []struct {
		name string
		opts *sdk.StreamableHTTPOptions
	}{
		{"event stream", nil},
		{"json responses", &sdk.StreamableHTTPOptions{JSONResponse: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			leakcheck.Check(t)
			url, unauthorized := httpServer(t, c.opts)
			ev := newEvents()
			set := connect(t, []mcp.Server{{Name: "web", URL: url, Headers: map[string]string{"Authorization": "Bearer t0k"}}}, mcp.Config{Events: ev.add})
			st := set.Status()[0]
			assert.True(t, st.Connected)
			assert.Equal(t, "http", st.Transport)
			tt := byName(set.Tools())
			echo := tt["mcp__web__echo"]
			require.NotNil(t, echo)
			assert.Equal(t, testserver.EchoSchema, string(echo.Spec().InputSchema), "the server's bytes over HTTP too")
			assert.Equal(t, tools.FamilyNetwork, echo.Spec().Family, "an HTTP server's tools wait on the network")
			res := call(t, context.Background(), echo, env(false), map[string]any{"text": "over http"})
			assert.Equal(t, "over http", res.Text())

			// list_changed arrives on the standalone stream.
			res = call(t, context.Background(), tt["mcp__web__add_tool"], env(false), map[string]any{"name": "late"})
			require.False(t, res.IsError, res.Text())
			ev.wait(t, mcp.EventToolsChanged)
			assert.Contains(t, names(set.Tools()), "mcp__web__late")
			assert.Zero(t, unauthorized.Load(), "every request carried the header")
			require.NoError(t, set.Close())
		})
	}
}

func TestStreamableHTTPWithoutHeader(t *testing.T) {
	leakcheck.Check(t)
	url, unauthorized := httpServer(t, nil)
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{{Name: "web", URL: url}}})
	require.NotNil(t, set)
	defer set.Close()
	assert.Equal(t, harness.Code("server_unavailable"), harness.CodeOf(err))
	assert.ErrorContains(t, err, `mcp: server "web" did not complete the MCP handshake`)
	assert.Positive(t, unauthorized.Load())
}

// TestHTTPEndlessAnswer: a server whose JSON answer never ends fails the
// connection once 16 MiB have been read, instead of growing the host's
// memory without end.
func TestHTTPEndlessAnswer(t *testing.T) {
	leakcheck.Check(t)
	var sent atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"padding":"`))
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = 'a'
		}
		for r.Context().Err() == nil && sent.Load() < 1<<30 {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer hs.Close()
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{{Name: "endless", URL: hs.URL}}})
	require.NotNil(t, set)
	defer set.Close()
	require.Error(t, err)
	assert.Equal(t, harness.Code("server_unavailable"), harness.CodeOf(err))
	assert.ErrorContains(t, err, "larger than the 16777216 bytes read of one answer")
	assert.Less(t, sent.Load(), int64(256<<20), "the client stopped reading")
}
