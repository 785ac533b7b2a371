package web

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/toolstest"
)

// loopback allows the loopback range, which is where httptest servers
// listen: the tests' stand-in for the public internet.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// counted is an httptest server that counts the requests it got.
type counted struct {
	*httptest.Server
	hits atomic.Int64
}

func serve(t *testing.T, h http.HandlerFunc) *counted {
	t.Helper()
	c := &counted{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// serveOn starts a counted server listening on addr ("127.0.0.2:0").
func serveOn(t *testing.T, addr string, h http.HandlerFunc) *counted {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	c := &counted{}
	c.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	})}}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func htmlPage(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}
}

func fetchTool(t *testing.T, cfg FetchConfig) tools.Tool {
	t.Helper()
	tool, err := Fetch(cfg)
	require.NoError(t, err)
	return tool
}

func policy(t *testing.T, allow ...string) *permission.Policy {
	t.Helper()
	p, err := permission.New(permission.Rules{Allow: allow, Home: t.TempDir()})
	require.NoError(t, err)
	return p
}

// call runs a tool once in a fresh environment.
func call(t *testing.T, tool tools.Tool, args any) *harness.ToolResult {
	t.Helper()
	env := toolstest.NewEnv()
	defer env.Close()
	res, err := env.Call(context.Background(), tool, args)
	require.NoError(t, err)
	return res
}

func fetchURL(t *testing.T, tool tools.Tool, u string) *harness.ToolResult {
	t.Helper()
	return call(t, tool, map[string]any{"url": u})
}

// resolver answers lookups from a script, one answer per call, and
// counts the calls.
type resolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func (r *resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := min(r.calls, len(r.answers)-1)
	r.calls++
	return r.answers[i], nil
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func serveTLS(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func permPolicy(t *testing.T, allow, deny []string) (*permission.Policy, error) {
	return permission.New(permission.Rules{Allow: allow, Deny: deny, Home: t.TempDir()})
}
