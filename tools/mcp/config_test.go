package mcp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestParseConfig(t *testing.T) {
	vars := lookupFrom(map[string]string{"TOKEN": "t0k", "HOME": "/home/u", "EMPTY": ""})
	cases := []struct {
		name string
		in   string
		want []Server
		err  string
	}{
		{name: "stdio and http", in: `{"mcpServers": {
			"web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
			"files": {"command": "npx", "args": ["-y", "srv", "${HOME}/work"], "env": {"KEY": "${MISSING:-dflt}", "E": "${EMPTY:-x}"}, "cwd": "/tmp"}
		}}`, want: []Server{
			{Name: "files", Command: "npx", Args: []string{"-y", "srv", "/home/u/work"}, Env: map[string]string{"KEY": "dflt", "E": "x"}, Dir: "/tmp"},
			{Name: "web", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"}},
		}},
		{name: "type stdio, unknown keys ignored, disabled skipped", in: `{"mcpServers": {"a": {"type": "stdio", "command": "srv", "alwaysAllow": []},
			"b": {"command": "x", "disabled": true}}, "other": 1}`, want: []Server{{Name: "a", Command: "srv"}}},
		{name: "streamable-http alias", in: `{"mcpServers": {"w": {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}}}`,
			want: []Server{{Name: "w", URL: "http://127.0.0.1:1/mcp"}}},
		{name: "empty", in: `{"mcpServers": {}}`, want: nil},
		{name: "truncated", in: `{"mcpServers": `, err: "mcp: the configuration is not valid JSON: incomplete JSON at byte 15"},
		{name: "not an object", in: `["mcpServers"]`, err: "mcp: the configuration is an array, not a JSON object"},
		{name: "syntax error line", in: "{\n\"mcpServers\": {,}}", err: "line 2"},
		{name: "no mcpServers", in: `{"servers": {}}`, err: `no "mcpServers" object`},
		{name: "mcpServers null", in: `{"mcpServers": null}`, err: "mcpServers must be an object mapping server names to their settings, not null"},
		{name: "mcpServers array", in: `{"mcpServers": []}`, err: "not an array"},
		{name: "server not object", in: `{"mcpServers": {"a": "npx"}}`, err: `mcpServers.a must be an object with "command" or "url", not a string`},
		{name: "args not array", in: `{"mcpServers": {"a": {"command": "x", "args": "-y"}}}`, err: "mcpServers.a.args must be an array of strings, not a string"},
		{name: "args numbers", in: `{"mcpServers": {"a": {"command": "x", "args": [1]}}}`, err: "mcpServers.a.args must be an array of strings, not an array"},
		{name: "env not strings", in: `{"mcpServers": {"a": {"command": "x", "env": {"A": 1}}}}`, err: "mcpServers.a.env must be an object of strings"},
		{name: "command missing", in: `{"mcpServers": {"a": {"args": []}}}`, err: "mcpServers.a.command is missing or empty"},
		{name: "url without type", in: `{"mcpServers": {"a": {"url": "https://x"}}}`, err: `mcpServers.a: a server with a "url" needs "type": "http"`},
		{name: "http without url", in: `{"mcpServers": {"a": {"type": "http"}}}`, err: "mcpServers.a.url is missing or empty"},
		{name: "http bad scheme", in: `{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}`, err: `mcpServers.a.url "ftp://x" must start with http:// or https://`},
		{name: "http with command", in: `{"mcpServers": {"a": {"type": "http", "url": "http://x", "command": "y"}}}`, err: "mcpServers.a.command: an HTTP server has"},
		{name: "stdio with headers", in: `{"mcpServers": {"a": {"command": "y", "headers": {}}}}`, err: "mcpServers.a.headers: headers are for HTTP servers"},
		{name: "sse", in: `{"mcpServers": {"a": {"type": "sse", "url": "http://x"}}}`, err: `mcpServers.a.type "sse": the old HTTP+SSE transport is not supported`},
		{name: "bad type", in: `{"mcpServers": {"a": {"type": "ws", "url": "http://x"}}}`, err: `mcpServers.a.type "ws" is not a transport`},
		{name: "type number", in: `{"mcpServers": {"a": {"type": 1}}}`, err: "mcpServers.a.type must be a string, not a number"},
		{name: "unset variable", in: `{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}`, err: "mcpServers.a.env.K: the environment variable NOPE is not set; set it or write ${NOPE:-default}"},
		{name: "unclosed variable", in: `{"mcpServers": {"a": {"command": "x", "args": ["${HOME"]}}}`, err: "mcpServers.a.args[0]: \"${HOME\" has a ${ without its closing }"},
		{name: "bad variable name", in: `{"mcpServers": {"a": {"command": "${1X}"}}}`, err: "mcpServers.a.command: ${1X} does not name an environment variable"},
		{name: "empty name", in: `{"mcpServers": {"": {"command": "x"}}}`, err: "a server name is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseConfig([]byte(c.in), vars)
			if c.err != "" {
				require.Error(t, err)
				assert.Nil(t, cfg)
				assert.Equal(t, codeInvalidConfig, harness.CodeOf(err))
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, cfg.Servers)
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, ".mcp.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o644))
	cfg, err := LoadConfig(good)
	require.NoError(t, err)
	assert.Equal(t, []Server{{Name: "a", Command: "x"}}, cfg.Servers)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"a": {"args": "x"}}}`), 0o644))
	_, err = LoadConfig(bad)
	assert.Equal(t, codeInvalidConfig, harness.CodeOf(err))
	assert.ErrorContains(t, err, "mcp: "+bad+": mcpServers.a.args must be")

	_, err = LoadConfig(filepath.Join(dir, "none.json"))
	assert.Equal(t, harness.CodeNotFound, harness.CodeOf(err))
	assert.ErrorContains(t, err, "reading the MCP configuration")
}

func TestExpandVars(t *testing.T) {
	vars := lookupFrom(map[string]string{"A": "1", "B_2": "two", "E": ""})
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}", "1", ""},
		{"x${A}y${B_2}z", "x1ytwoz", ""},
		{"${E}", "", ""},
		{"${E:-d}", "d", ""},
		{"${U:-}", "", ""},
		{"${U:-a:-b}", "a:-b", ""},
		{"$A ${A}", "$A 1", ""},
		{"${U}", "", "not set"},
		{"${}", "", "does not name"},
		{"${A", "", "without its closing"},
	}
	for _, c := range cases {
		got, err := expandVars(c.in, vars)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["${A:-1}"], "env": {"K": "v"}}}}`))
	f.Add([]byte(`{"mcpServers": {"w": {"type": "http", "url": "https://h/${A}", "headers": {"H": "v"}}}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"type": "sse"}}}`))
	f.Add([]byte(`[]`))
	vars := lookupFrom(map[string]string{"A": "a"})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseConfig(data, vars)
		if err != nil {
			require.Nil(t, cfg)
			require.Equal(t, codeInvalidConfig, harness.CodeOf(err), "every refusal is invalid_config: %v", err)
			return
		}
		seen := map[string]bool{}
		for _, s := range cfg.Servers {
			require.NotEmpty(t, s.Name)
			require.False(t, seen[s.Name])
			seen[s.Name] = true
			require.True(t, (s.Command != "") != (s.URL != ""), "exactly one transport: %+v", s)
		}
		require.NoError(t, validateConfig(cfg), "what parses, Connect accepts")
	})
}

func FuzzExpandVars(f *testing.F) {
	for _, s := range []string{"", "${A}", "x${A:-d}y", "${", "${A", "$${A}}", "${:-x}"} {
		f.Add(s)
	}
	vars := lookupFrom(map[string]string{"A": "a"})
	f.Fuzz(func(t *testing.T, s string) {
		out, err := expandVars(s, vars)
		if err != nil {
			return
		}
		if !containsVar(s) {
			require.Equal(t, s, out, "text without ${ is left alone")
		}
	})
}

func containsVar(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '$' && s[i+1] == '{' {
			return true
		}
	}
	return false
}
