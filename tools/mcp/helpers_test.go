package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
	"github.com/go-harness/harness/tools/mcp/internal/testserver"
)

// inProcess is the test server over the SDK's in-memory transport; every
// connection (a restart too) gets a fresh server session.
type inProcess struct {
	stats testserver.Stats
	mu    sync.Mutex
	live  *sdk.ServerSession
	srv   *sdk.Server
	conns int
}

func newInProcess(t testing.TB) *inProcess {
	p := &inProcess{}
	p.srv = testserver.New(&p.stats, func() {
		p.mu.Lock()
		ss := p.live
		p.mu.Unlock()
		if ss != nil {
			go ss.Close()
		}
	})
	t.Cleanup(func() {
		p.mu.Lock()
		ss := p.live
		p.mu.Unlock()
		if ss != nil {
			_ = ss.Close()
		}
	})
	return p
}

func (p *inProcess) server(name string) mcp.Server {
	return mcp.Server{Name: name, Transport: func(ctx context.Context) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := p.srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.live = ss
		p.conns++
		p.mu.Unlock()
		return ct, nil
	}}
}

// connect connects servers with the settings of with (the defaults when
// it is not given).
func connect(t *testing.T, servers []mcp.Server, with ...mcp.Config) mcp.Set {
	t.Helper()
	var cfg mcp.Config
	if len(with) > 0 {
		cfg = with[0]
	}
	cfg.Servers = servers
	set, err := mcp.Connect(context.Background(), &cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = set.Close() })
	return set
}

func byName(ts []tools.Tool) map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, t := range ts {
		m[t.Spec().Name] = t
	}
	return m
}

func names(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

func env(images bool) *tools.Env {
	e := &tools.Env{SessionID: "s", Cwd: "/", Logger: slog.New(slog.DiscardHandler), Attachments: attachments.NewMemory()}
	if images {
		e.ModelInput = []harness.Modality{harness.ModalityText, harness.ModalityImage}
	}
	return e
}

// call runs a tool as the dispatcher would: a returned error becomes an
// error result.
func call(t *testing.T, ctx context.Context, tool tools.Tool, e *tools.Env, args any) *harness.ToolResult {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	c := &tools.Call{ID: "call-1", Name: tool.Spec().Name, Arguments: string(raw), Env: e}
	if res := reg.Check(c); res != nil {
		return res
	}
	res, err := tool.Execute(ctx, c)
	if err != nil {
		return &harness.ToolResult{IsError: true, Code: harness.CodeOf(err), Content: []harness.Block{harness.TextBlock(err.Error())}}
	}
	return res
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// serverBinary builds testdata/server once per test binary.
func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-test-server-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", buildPath, "./testdata/server").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("building the test server: %v", buildErr)
	}
	return buildPath
}

var (
	hostileOnce sync.Once
	hostilePath string
	hostileErr  error
)

// hostileBinary builds testdata/hostile once per test binary.
func hostileBinary(t testing.TB) string {
	t.Helper()
	hostileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-hostile-")
		if err != nil {
			hostileErr = err
			return
		}
		hostilePath = filepath.Join(dir, "hostile")
		out, err := exec.Command("go", "build", "-o", hostilePath, "./testdata/hostile").CombinedOutput()
		if err != nil {
			hostileErr = &buildError{out: string(out), err: err}
		}
	})
	if hostileErr != nil {
		t.Fatalf("building the hostile server: %v", hostileErr)
	}
	return hostilePath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range []string{buildPath, hostilePath} {
		if p != "" {
			_ = os.RemoveAll(filepath.Dir(p))
		}
	}
	os.Exit(code)
}
