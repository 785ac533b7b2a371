package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/configfile"
)

// Config is what Connect connects: the MCP servers, in name order, and
// how the set treats them. LoadConfig and ParseConfig fill in Servers;
// the other fields are the host's, and each zero value is the default.
type Config struct {
	Servers []Server

	// ConnectTimeout bounds starting a server, the protocol handshake
	// and the first tool listing, and each refresh of a changed tool
	// list. Zero means 30 s; negative is an error.
	ConnectTimeout time.Duration
	// TerminateDuration is how long closing a stdio server waits for it
	// to exit after its input is closed, and again after SIGTERM, before
	// it is killed. Zero means 1 s; negative is an error.
	TerminateDuration time.Duration
	// MaxSchemaBytes bounds the input schema of one server tool, as
	// compact JSON: the schema is sent with every model request, so a
	// tool with a larger one is not offered (an EventToolSkipped says
	// so) and the server's other tools still are. Zero means 32 KiB;
	// negative is an error.
	MaxSchemaBytes int
	// MaxTools bounds how many tools one server may offer: every offered
	// tool's schema is sent with every model request, and a server that
	// lists without end would otherwise hold the connection until
	// ConnectTimeout. Listing stops at the bound; the tools past it are
	// not offered and one EventToolSkipped says so. Zero means 128;
	// negative is an error.
	MaxTools int
	// MaxResultBytes bounds the answer to a tool call read from a
	// server, over stdio or HTTP. An answer over 16 MiB (the most a message is decoded in
	// memory) is written to a temporary file as it arrives and its text
	// read from there in pieces, and saved whole to the session's
	// output store, so the model gets a preview and where the rest is;
	// past MaxResultBytes the answer is cut, and the result says so.
	// Zero means 256 MiB; negative is an error; less than 16 MiB counts
	// as 16 MiB.
	MaxResultBytes int64
	// MaxRestarts bounds how many times a server that stopped is
	// started again, each on the next call of one of its tools. Zero
	// means 3; a negative number means never.
	MaxRestarts int
	// Logger receives connection diagnostics; nil discards them.
	Logger *slog.Logger
	// Events, when set, hears what happens to the servers: connections,
	// failures, stops, changed tool lists and skipped tools (see Event).
	// It is called from the servers' goroutines, one event at a time per
	// server; it must return quickly.
	Events func(Event)
}

// Server configures one MCP server: a command run over stdio, a
// streamable HTTP endpoint, or a transport the program builds itself.
type Server struct {
	// Name is the server's name in tool names (mcp__<name>__<tool>) and
	// in permission rules.
	Name string

	// Command, Args, Env and Dir start a server that speaks over its
	// standard input and output. Env adds to (and overrides) the
	// environment of this process; Dir empty means this process's
	// working directory.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string

	// URL and Headers reach a server over streamable HTTP. Headers are
	// sent with every request (an Authorization header, say).
	URL     string
	Headers map[string]string

	// Transport, when set, builds the transport to connect with instead
	// of Command or URL: an in-process server over
	// sdk.NewInMemoryTransports, or any other transport of the SDK. It
	// is called again for every reconnection.
	Transport func(ctx context.Context) (sdk.Transport, error)
}

// kind says how a server is reached.
func (s Server) kind() string {
	switch {
	case s.Transport != nil:
		return "custom"
	case s.URL != "":
		return "http"
	}
	return "stdio"
}

// LoadConfig reads and parses a configuration file in the .mcp.json
// format (see ParseConfig). The path must name a regular file (a
// symbolic link to one is fine) of at most 1 MiB: a directory, a named
// pipe or a device is an error with code harness.CodeNotRegular, a
// larger file one with harness.CodeTooLarge, and neither is read.
func LoadConfig(path string) (*Config, error) {
	data, err := configfile.Read(path)
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeOf(err), Err: err,
			Message: fmt.Sprintf("mcp: reading the MCP configuration: %v", err)}
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		if he, ok := err.(*harness.Error); ok {
			he.Message = strings.Replace(he.Message, "mcp: ", "mcp: "+path+": ", 1)
		}
		return nil, err
	}
	return cfg, nil
}

// ParseConfig parses the configuration format of .mcp.json files:
//
//	{"mcpServers": {
//	    "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"KEY": "${KEY}"}},
//	    "web":   {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
//	}}
//
// A server with a "command" runs over stdio ("type" absent or "stdio");
// one with "type" "http" (or "streamable-http") and a "url" is reached
// over streamable HTTP. "cwd" sets a stdio server's working directory
// and "disabled": true skips a server. In command, args, env, cwd, url
// and headers, ${VAR} is replaced by the environment variable VAR and
// ${VAR:-default} by VAR or, when it is unset or empty, default. Other
// keys are ignored, so files written for other programs load too.
//
// A malformed file is a *harness.Error with code
// codeInvalidConfig whose message names the bad field.
func ParseConfig(data []byte) (*Config, error) {
	return parseConfig(data, os.LookupEnv)
}

type rawServer struct {
	Type     *string            `json:"type"`
	Command  *string            `json:"command"`
	Args     *[]string          `json:"args"`
	Env      *map[string]string `json:"env"`
	Cwd      *string            `json:"cwd"`
	URL      *string            `json:"url"`
	Headers  *map[string]string `json:"headers"`
	Disabled *bool              `json:"disabled"`
}

func configError(format string, args ...any) error {
	return &harness.Error{Code: codeInvalidConfig, Message: "mcp: " + fmt.Sprintf(format, args...)}
}

func parseConfig(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	if err := configfile.CheckJSON(data); err != nil {
		return nil, configError("the configuration is not valid JSON: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, configError("the configuration is %s, not a JSON object; write {\"mcpServers\": {\"name\": {\"command\": ...}}}", kindOf(data))
	}
	rawServers, ok := top["mcpServers"]
	if !ok {
		return nil, configError("the configuration has no \"mcpServers\" object; write {\"mcpServers\": {\"name\": {\"command\": ...}}}")
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(rawServers, &servers); err != nil || servers == nil {
		return nil, configError("mcpServers must be an object mapping server names to their settings, not %s", kindOf(rawServers))
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	cfg := &Config{}
	for _, name := range names {
		field := "mcpServers." + name
		if strings.TrimSpace(name) == "" {
			return nil, configError("%s: a server name is empty; give each server a name", field)
		}
		var rs rawServer
		if err := strictFields(servers[name], &rs); err != nil {
			return nil, configError("%s%s", field, err)
		}
		if rs.Disabled != nil && *rs.Disabled {
			continue
		}
		if err := checkServerName(name); err != nil {
			return nil, configError("%s: %v", field, err)
		}

		s, err := rs.server(name, field, lookup)
		if err != nil {
			return nil, err
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	return cfg, nil
}

// strictFields decodes raw into rs, naming the field whose value has the
// wrong type.
func strictFields(raw json.RawMessage, rs *rawServer) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fmt.Errorf(" must be an object with \"command\" or \"url\", not %s", kindOf(raw))
	}
	want := map[string]struct {
		dst  any
		kind string
	}{
		"type": {&rs.Type, "a string"}, "command": {&rs.Command, "a string"}, "args": {&rs.Args, "an array of strings"},
		"env": {&rs.Env, "an object of strings"}, "cwd": {&rs.Cwd, "a string"}, "url": {&rs.URL, "a string"},
		"headers": {&rs.Headers, "an object of strings"}, "disabled": {&rs.Disabled, "true or false"},
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, ok := want[k]
		if !ok {
			continue
		}
		if bytes.Equal(bytes.TrimSpace(fields[k]), []byte("null")) {
			continue
		}
		if err := json.Unmarshal(fields[k], w.dst); err != nil {
			return fmt.Errorf(".%s must be %s, not %s", k, w.kind, kindOf(fields[k]))
		}
	}
	return nil
}

func (rs rawServer) server(name, field string, lookup func(string) (string, bool)) (Server, error) {
	s := Server{Name: name}
	typ := ""
	if rs.Type != nil {
		typ = *rs.Type
	}
	var err error
	expand := func(f, v string) string {
		if err != nil {
			return ""
		}
		var out string
		out, err = expandVars(v, lookup)
		if err != nil {
			err = configError("%s.%s: %v", field, f, err)
		}
		return out
	}
	switch typ {
	case "", "stdio":
		if rs.URL != nil && rs.Command == nil {
			if typ == "stdio" {
				return s, configError("%s: a stdio server needs \"command\"; a \"url\" needs \"type\": \"http\"", field)
			}
			return s, configError("%s: a server with a \"url\" needs \"type\": \"http\" (streamable HTTP)", field)
		}
		if rs.Command == nil || strings.TrimSpace(*rs.Command) == "" {
			return s, configError("%s.command is missing or empty: a stdio server needs the program to run", field)
		}
		s.Command = expand("command", *rs.Command)
		if rs.Args != nil {
			for i, a := range *rs.Args {
				s.Args = append(s.Args, expand(fmt.Sprintf("args[%d]", i), a))
			}
		}
		if rs.Env != nil {
			s.Env = map[string]string{}
			for _, k := range sortedKeys(*rs.Env) {
				s.Env[k] = expand("env."+k, (*rs.Env)[k])
			}
		}
		if rs.Cwd != nil {
			s.Dir = expand("cwd", *rs.Cwd)
		}
		if rs.Headers != nil {
			return s, configError("%s.headers: headers are for HTTP servers; a stdio server takes \"env\"", field)
		}
	case "http", "streamable-http", "streamableHttp":
		if rs.URL == nil || strings.TrimSpace(*rs.URL) == "" {
			return s, configError("%s.url is missing or empty: an HTTP server needs the endpoint's URL", field)
		}
		s.URL = expand("url", *rs.URL)
		if err == nil && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return s, configError("%s.url %q must start with http:// or https://", field, s.URL)
		}
		if rs.Headers != nil {
			s.Headers = map[string]string{}
			for _, k := range sortedKeys(*rs.Headers) {
				s.Headers[k] = expand("headers."+k, (*rs.Headers)[k])
			}
		}
		if rs.Command != nil {
			return s, configError("%s.command: an HTTP server has a \"url\", not a \"command\"; remove one of them", field)
		}
	case "sse":
		return s, configError("%s.type \"sse\": the old HTTP+SSE transport is not supported; use the server's streamable HTTP endpoint with \"type\": \"http\"", field)
	default:
		return s, configError("%s.type %q is not a transport: use \"stdio\" (with \"command\") or \"http\" (with \"url\")", field, typ)
	}
	return s, err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// expandVars replaces ${VAR} and ${VAR:-default} in s.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q has a ${ without its closing }", s)
		}
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("${%s} does not name an environment variable (letters, digits and _)", expr)
		}
		v, ok := lookup(name)
		switch {
		case ok && v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		case ok:
		default:
			return "", fmt.Errorf("the environment variable %s is not set; set it or write ${%s:-default}", name, name)
		}
		s = s[i+end+1:]
	}
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func kindOf(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "invalid JSON"
	}
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return "an object"
}
