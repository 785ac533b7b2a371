package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools/mcp"
)

// children lists the processes whose parent is this test process.
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc: cannot check for leaked processes")
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == me {
			out = append(out, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return out
}

// noLeakedProcesses fails the test if processes it started outlive it.
func noLeakedProcesses(t *testing.T) {
	t.Helper()
	if runtimeNoProc() {
		return
	}
	before := len(children(t))
	t.Cleanup(func() {
		var left []string
		// A loaded machine may take seconds to reap a stopped server.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			left = children(t)
			if len(left) <= before {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("processes left running: %v", left)
	})
}

func runtimeNoProc() bool {
	_, err := os.Stat("/proc/self/stat")
	return err != nil
}

func TestStdioServer(t *testing.T) {
	bin := serverBinary(t)
	leakcheck.Check(t)
	noLeakedProcesses(t)
	ev := newEvents()
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{
		{Name: "sub", Command: bin, Env: map[string]string{"MCP_TEST_VALUE": "from the config"}, Dir: t.TempDir()},
	}, Events: ev.add})
	require.NoError(t, err)
	defer set.Close()
	assert.Equal(t, "stdio", set.Status()[0].Transport)
	tt := byName(set.Tools())
	e := env(false)
	assert.Equal(t, "from the config", call(t, context.Background(), tt["mcp__sub__env"], e, map[string]any{}).Text())

	res := call(t, context.Background(), tt["mcp__sub__crash"], e, map[string]any{})
	assert.Equal(t, harness.Code("server_unavailable"), res.Code, res.Text())
	stopped := ev.wait(t, mcp.EventStopped)
	assert.Contains(t, stopped.Message, `mcp: server "sub" stopped`)

	res = call(t, context.Background(), tt["mcp__sub__echo"], e, map[string]any{"text": "again"})
	assert.Equal(t, "again", res.Text(), "a new process serves the next call")
	assert.Equal(t, 1, set.Status()[0].Restarts)
	require.NoError(t, set.Close())
	assert.Empty(t, children(t), "Close stops the server")
}

// TestCloseStopsStubbornServer: a server that ignores the end of its
// input and SIGTERM is killed after the terminate duration.
func TestCloseStopsStubbornServer(t *testing.T) {
	bin := serverBinary(t)
	leakcheck.Check(t)
	noLeakedProcesses(t)
	set := connect(t, []mcp.Server{{Name: "stubborn", Command: bin, Args: []string{"-ignore-eof", "-ignore-term"}}},
		mcp.Config{TerminateDuration: 100 * time.Millisecond})
	require.Len(t, set.Tools(), 14)
	start := time.Now()
	require.NoError(t, set.Close())
	t.Logf("Close took %v", time.Since(start))
	assert.Empty(t, children(t))
}

func TestConnectTimeoutAndMissingCommand(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	leakcheck.Check(t)
	noLeakedProcesses(t)
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{
		{Name: "mute", Command: sleep, Args: []string{"60"}},
		{Name: "missing", Command: "no-such-mcp-server-command"},
	}, ConnectTimeout: 300 * time.Millisecond, TerminateDuration: 100 * time.Millisecond})
	require.NotNil(t, set)
	defer set.Close()
	require.Error(t, err)
	assert.Equal(t, harness.Code("server_unavailable"), harness.CodeOf(err))
	assert.Contains(t, err.Error(), `mcp: server "mute" did not complete the MCP handshake within the connect timeout`)
	assert.Contains(t, err.Error(), `mcp: server "missing" could not be started: exec: "no-such-mcp-server-command": executable file not found`)
	assert.Empty(t, set.Tools())
	assert.Empty(t, children(t), "the mute server was stopped")
}

func TestConfigFileToCall(t *testing.T) {
	bin := serverBinary(t)
	leakcheck.Check(t)
	noLeakedProcesses(t)
	dir := t.TempDir()
	t.Setenv("MCP_TEST_SECRET", "s3cret")
	path := filepath.Join(dir, ".mcp.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"local": {"command": `+strconv.Quote(bin)+`, "env": {"MCP_TEST_VALUE": "${MCP_TEST_SECRET}"}}}}`), 0o644))
	cfg, err := mcp.LoadConfig(path)
	require.NoError(t, err)
	set := connect(t, cfg.Servers)
	got := call(t, context.Background(), byName(set.Tools())["mcp__local__env"], env(false), map[string]any{})
	assert.Equal(t, "s3cret", got.Text())
}
