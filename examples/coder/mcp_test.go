package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// mcpTestServer builds the MCP test server of package tools/mcp.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-o", bin, "../../tools/mcp/testdata/server").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v: %s", err, out)
	}
	return bin
}

func TestMCP(t *testing.T) {
	bin := mcpTestServer(t)
	t.Run("workspace", func(t *testing.T) { testMCPFromWorkspace(t, bin) })
	t.Run("flag", func(t *testing.T) { testMCPFlag(t, bin) })
	t.Run("events", func(t *testing.T) { testMCPEvents(t, bin) })
}

// testMCPFromWorkspace: the workspace's .mcp.json is read, the servers and
// their tool counts are listed at start, and an MCP call is shown as a
// generic card.
func testMCPFromWorkspace(t *testing.T, bin string) {
	leakcheck.Check(t)
	p := newProvider(t,
		call(toolCall(0, "c1", "mcp__local__echo", map[string]any{"text": "hello from mcp"})),
		say("echoed"),
	)
	ws := workspace(t, map[string]string{
		".mcp.json": `{"mcpServers": {"local": {"command": ` + strconv.Quote(bin) + `}, "gone": {"command": "no-such-mcp-server-command"}}}`,
	})
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "echo something")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "mcp local (stdio): 12 tools, resources")
	assert.Contains(t, r.stdout, `mcp gone: server "gone" could not be started`)
	assert.Contains(t, r.stdout, "● local: Echo\n  hello from mcp\n")
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, string(reqs[0].Body), `"name":"mcp__local__echo"`)
	assert.Contains(t, string(reqs[0].Body), `{"type":"object","properties":{"text":{"type":"string","description":"what to say back"},"count":{"type":"integer"}},"required":["text"],"additionalProperties":false}`,
		"the provider gets the server's schema bytes")
	assert.Contains(t, reqs[1].Text(t), "hello from mcp")
}

func testMCPFlag(t *testing.T, bin string) {
	leakcheck.Check(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers": {"other": {"command": `+strconv.Quote(bin)+`}}}`), 0o644))
	p := newProvider(t, say("hi"))
	ws := workspace(t, map[string]string{".mcp.json": `{"mcpServers": {"ignored": {"command": "x"}}}`})
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-mcp", cfg, "hi")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "mcp other (stdio): 12 tools")
	assert.NotContains(t, r.stdout, "ignored", "-mcp replaces the workspace's file")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"a": {"args": "x"}}}`), 0o644))
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-mcp", bad, "hi")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "mcpServers.a.args must be an array of strings")

	broken := workspace(t, map[string]string{".mcp.json": `{"mcpServers": `})
	p.add(say("still works"))
	r = runCLI(t, p.env(), "", "-C", broken, "-sessions", t.TempDir(), "hi")
	assert.Equal(t, exitOK, r.code, "a broken workspace file does not stop the coder")
	assert.Contains(t, r.stdout, "the configuration is not valid JSON: incomplete JSON at byte 15")
	assert.Contains(t, r.stdout, "(MCP servers skipped)")
}

// testMCPEvents: what happens to a server while the coder runs is shown
// as status lines: a crashed server stops, and the next call of its tools
// connects it again.
func testMCPEvents(t *testing.T, bin string) {
	leakcheck.Check(t)
	p := newProvider(t,
		call(toolCall(0, "c1", "mcp__local__crash", map[string]any{"text": "x"})),
		call(toolCall(0, "c2", "mcp__local__echo", map[string]any{"text": "back again"})),
		say("echoed"),
	)
	ws := workspace(t, map[string]string{".mcp.json": `{"mcpServers": {"local": {"command": ` + strconv.Quote(bin) + `}}}`})
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-permission-mode", "bypass", "crash it")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "mcp local (stdio): 12 tools", "the start-up line")
	assert.Equal(t, 1, strings.Count(r.stdout, "mcp local: connected (12 tools; containment: "), "the reconnection, once, with its containment; not the first connection:\n%s", r.stdout)
	assert.Contains(t, r.stdout, "back again")
}
