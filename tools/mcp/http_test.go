package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/spill"
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

// httpModes are the two ways a streamable HTTP server answers: each
// answer an event stream, or a JSON body.
var httpModes = []struct {
	name string
	opts *sdk.StreamableHTTPOptions
}{
	{"event stream", nil},
	{"json responses", &sdk.StreamableHTTPOptions{JSONResponse: true}},
}

func TestStreamableHTTP(t *testing.T) {
	for _, c := range httpModes {
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

// TestHTTPEndlessAnswer: a server whose JSON answer to anything but a
// tool call never ends gets an error answer once 16 MiB have been read,
// instead of growing the host's memory without end.
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
	assert.ErrorContains(t, err, `calling "initialize": the server's answer was more than the 16.0 MiB this client reads for anything but a tool result`)
	assert.Less(t, sent.Load(), int64(256<<20), "the client stopped reading")
}

// TestHTTPLargeResult: over streamable HTTP too, a tool result larger
// than a message is read in memory (1 MiB here, 16 MiB by default) is
// spooled as it arrives and saved whole to the output store, the model
// gets a preview, a result past MaxResultBytes is cut and says so, and
// the connection goes on; before, the SDK failed the connection.
func TestHTTPLargeResult(t *testing.T) {
	for _, c := range httpModes {
		t.Run(c.name, func(t *testing.T) {
			leakcheck.Check(t)
			url, _ := httpServer(t, c.opts)
			before := spoolFiles(t)
			const frame = 1 << 20
			set, err := mcp.ConnectWithFrameLimit(context.Background(), &mcp.Config{
				Servers:        []mcp.Server{{Name: "web", URL: url, Headers: map[string]string{"Authorization": "Bearer t0k"}}},
				MaxResultBytes: 3 << 20,
			}, frame)
			require.NoError(t, err)
			defer set.Close()
			store, err := spill.NewMemory(spill.StoreConfig{})
			require.NoError(t, err)
			e := env(false)
			e.Output = store
			ctx := context.Background()
			tt := byName(set.Tools())

			res := call(t, ctx, tt["mcp__web__big"], e, map[string]any{"n": 2 << 20})
			require.False(t, res.IsError, "%.300s", res.Text())
			text := res.Text()
			assert.Less(t, len(text), 20_000, "the model sees a preview")
			assert.True(t, strings.HasPrefix(text, "0123456789abcdef\n0123456789abcdef\n"), "%.100q", text)
			assert.Contains(t, text, "over the 1.0 MiB a message is read in memory: its text (2.0 MiB) was read from a temporary file, and saved whole to spill://")
			locator := regexp.MustCompile(`spill://[^ \]\n"]+\.txt`).FindString(text)
			require.NotEmpty(t, locator, "%.300q", text)
			whole := readAll(t, store, locator)
			assert.True(t, string(whole) == sixteens(2<<20), "the store holds the result exactly (%d bytes)", len(whole))

			res = call(t, ctx, tt["mcp__web__echo"], e, map[string]any{"text": "still connected"})
			assert.Equal(t, "still connected", res.Text())

			res = call(t, ctx, tt["mcp__web__big"], e, map[string]any{"n": 4 << 20})
			assert.False(t, res.IsError, "%.300s", res.Text())
			assert.Contains(t, res.Text(), "[the answer was cut at 3.0 MiB (Config.MaxResultBytes)")
			assert.True(t, strings.HasPrefix(res.Text(), "0123456789abcdef\n"), "%.100q", res.Text())

			res = call(t, ctx, tt["mcp__web__echo"], e, map[string]any{"text": "and still"})
			assert.Equal(t, "and still", res.Text())
			assert.Equal(t, 0, set.Status()[0].Restarts)
			require.NoError(t, set.Close())
			assert.Equal(t, before, spoolFiles(t), "no spool file is left")
		})
	}
}

// sixteens is the text the test server's big tool returns.
func sixteens(n int) string {
	return strings.Repeat("0123456789abcdef\n", n/17+1)[:n]
}

// spoolFiles lists the temporary files large answers are spooled to.
func spoolFiles(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "harness-mcp-result-*"))
	require.NoError(t, err)
	return m
}

// TestHTTPResultOverSDKLimit: with the default bounds, a 17 MiB tool
// result over HTTP, over the 16 MiB the SDK reads of one message, reaches
// the output store whole; the SDK alone fails the connection on it.
func TestHTTPResultOverSDKLimit(t *testing.T) {
	for _, c := range httpModes {
		t.Run(c.name, func(t *testing.T) {
			leakcheck.Check(t)
			url, _ := httpServer(t, c.opts)
			set := connect(t, []mcp.Server{{Name: "web", URL: url, Headers: map[string]string{"Authorization": "Bearer t0k"}}})
			store, err := spill.NewMemory(spill.StoreConfig{})
			require.NoError(t, err)
			e := env(false)
			e.Output = store
			tt := byName(set.Tools())
			const size = 17 << 20
			res := call(t, context.Background(), tt["mcp__web__big"], e, map[string]any{"n": size})
			require.False(t, res.IsError, "%.300s", res.Text())
			assert.Less(t, len(res.Text()), 20_000, "the model sees a preview")
			assert.True(t, strings.Contains(res.Text(), "over the 16.0 MiB a message is read in memory: its text (17.0 MiB) was read from a temporary file, and saved whole to spill://"), "%.300q", res.Text())
			locator := regexp.MustCompile(`spill://[^ \]\n"]+\.txt`).FindString(res.Text())
			require.NotEmpty(t, locator)
			assert.Equal(t, size, len(readAll(t, store, locator)))
			res = call(t, context.Background(), tt["mcp__web__echo"], e, map[string]any{"text": "after"})
			assert.Equal(t, "after", res.Text())
		})
	}
}
