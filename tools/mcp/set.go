package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/tools"
)

// Set is a group of connected MCP servers and the tools they offer: a
// tools.Source for agent.WithToolSource, which the host closes when the
// loop closes. It is safe for concurrent use.
type Set interface {
	// Tools returns the tools of the connected servers: every server
	// tool as mcp__<server>__<tool>, in the order they were first listed
	// (a refreshed list keeps the places of the tools it kept and adds
	// new tools at the end), then mcp_list_resources and
	// mcp_read_resource when a connected server offers resources.
	// Generation changes whenever Tools would return a different list.
	tools.Source

	// Status describes every configured server, in name order.
	Status() []Status

	// Prompts lists the prompt templates the named server offers, for
	// the host to show (the model is not told about prompts): none when
	// the server is not connected or offers no prompts. A name that is
	// no configured server's is an error with code "unknown_server".
	Prompts(ctx context.Context, server string) ([]*sdk.Prompt, error)

	// Close disconnects every server, stopping the stdio ones with
	// every process they started (a server that does not exit when its
	// input closes, and whatever it left running, is sent SIGTERM and
	// then SIGKILL after the terminate duration; Close returns once all
	// have ended), and waits for the set's goroutines. Tools of a closed
	// set fail with harness.CodeClosed. It returns an error matching
	// harness.CodeNotStopped, naming them, if processes of a server
	// outlived it (or an earlier stop of the server); otherwise nil.
	io.Closer
}

// serverSet implements Set.
type serverSet struct {
	opts    options
	servers []*server

	mu     sync.Mutex
	names  *namer
	order  []nameKey // every tool ever listed, in first-seen order
	gen    uint64
	closed bool
	// resTools are the resource tools, made once.
	resTools []tools.Tool

	// probe finds, once, how stdio servers' processes are contained.
	probe sync.Once
	cont  *proctree.Containment
}

// containment returns how stdio servers' processes are contained,
// probing the first time (a few milliseconds).
func (s *serverSet) containment() *proctree.Containment {
	s.probe.Do(func() { s.cont = proctree.Probe(s.opts.containment) })
	return s.cont
}

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	// EventConnected: a server connected (again, after a restart).
	EventConnected EventKind = "connected"
	// EventConnectFailed: starting or reaching a server failed.
	EventConnectFailed EventKind = "connect_failed"
	// EventStopped: a connected server stopped or its connection broke;
	// it is started again on the next call of one of its tools, up to
	// the restart limit.
	EventStopped EventKind = "stopped"
	// EventToolsChanged: a server's tool list changed; Set.Tools returns
	// the new list.
	EventToolsChanged EventKind = "tools_changed"
	// EventToolSkipped: a server offered a tool the model is not shown:
	// its input schema is too large or not a JSON Schema of an object,
	// or it was listed past Config.MaxTools.
	EventToolSkipped EventKind = "tool_skipped"
)

// Event is something that happened to a server, for the host.
type Event struct {
	Kind   EventKind
	Server string
	// Tool is the model-facing tool name (skipped tools). A call's
	// progress is not an Event: it is the call's own report
	// (tools.Call.OnProgress), which the dispatcher shows the host.
	Tool string
	// Message is a description.
	Message string
	// Err is the failure behind connect_failed, stopped and
	// tool_skipped events.
	Err error
}

// Status describes one configured server.
type Status struct {
	Name string
	// Transport is "stdio", "http" or "custom".
	Transport string
	// Connected reports that the server is connected now.
	Connected bool
	// Tools is the number of tools the model is offered from it.
	Tools int
	// Resources reports that the server offers resources.
	Resources bool
	// ServerName and Version are what the server calls itself.
	ServerName, Version string
	// Instructions is what the server says about using it.
	Instructions string
	// Restarts counts how often the server was started again.
	Restarts int
	// Containment says how a stdio server's processes are held
	// together so that a stop reaches all of them ("pid namespace", or
	// "process tree (no pid namespace: ...)"); empty for other servers
	// and before the first start.
	Containment string
	// Err is the last connection failure, when not connected.
	Err error
}

// Connect starts or reaches every server of cfg at once, each within the
// connect timeout, and lists their tools. A nil cfg has no servers.
//
// A server that cannot be connected does not stop the others: Connect
// returns the set of the servers that connected together with an error
// that joins one *harness.Error (code "server_unavailable", naming the
// server) per failure; Status reports each server. Invalid settings or
// servers (harness.CodeInvalidOption, "invalid_config") return a nil
// set.
func Connect(ctx context.Context, cfg *Config) (Set, error) {
	return connect(ctx, cfg, func(*options) {})
}

// connect is Connect with settings tests change (the containment probe,
// the frame limit).
func connect(ctx context.Context, cfg *Config, adjust func(*options)) (Set, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	o, err := optionsOf(cfg)
	if err != nil {
		return nil, err
	}
	adjust(&o)
	if err := validateConfig(cfg); err != nil {
		return nil, err
	}
	s := &serverSet{opts: o, names: newNamer(listResourcesName, readResourceName)}
	for _, sc := range cfg.Servers {
		s.servers = append(s.servers, &server{set: s, cfg: sc})
	}
	errs := make([]error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			errs[i] = srv.connectLocked(ctx)
		})
	}
	wg.Wait()
	// Names are handed out in server order, whatever order the
	// connections finished in, so they are the same on every run.
	s.mu.Lock()
	for _, srv := range s.servers {
		srv.mu.Lock()
		for _, d := range srv.remote {
			s.noteLocked(srv.cfg.Name, d.remote)
		}
		srv.mu.Unlock()
	}
	s.mu.Unlock()
	return s, errors.Join(errs...)
}

func validateConfig(cfg *Config) error {
	seen := map[string]bool{}
	forms := map[string]string{} // tool-name form -> server name
	for i, sc := range cfg.Servers {
		field := fmt.Sprintf("Servers[%d]", i)
		switch {
		case sc.Name == "":
			return configError("%s: the server has no name", field)
		case seen[sc.Name]:
			return configError("%s: two servers are named %q", field, sc.Name)
		}
		seen[sc.Name] = true
		if err := checkServerName(sc.Name); err != nil {
			return configError("%s: %v", field, err)
		}
		if other, dup := forms[sanitize(sc.Name)]; dup {
			return configError("%s: the servers %q and %q have the same name in tool names (mcp__%s__...), so a permission rule could not tell them apart; rename one", field, other, sc.Name, sanitize(sc.Name))
		}
		forms[sanitize(sc.Name)] = sc.Name
		n := 0
		for _, set := range []bool{sc.Command != "", sc.URL != "", sc.Transport != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return configError("server %q: set exactly one of Command (stdio), URL (streamable HTTP) and Transport", sc.Name)
		}
	}
	return nil
}

// noteLocked gives a newly listed tool its name and its place at the end
// of the order.
func (s *serverSet) noteLocked(server, tool string) string {
	k := nameKey{server, tool}
	if _, ok := s.names.byKey[k]; !ok {
		s.order = append(s.order, k)
	}
	return s.names.name(server, tool)
}

// Tools implements tools.Source (see Set).
func (s *serverSet) Tools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	current := map[nameKey]*remoteTool{}
	resources := false
	for _, srv := range s.servers {
		srv.mu.Lock()
		for _, d := range srv.remote {
			k := nameKey{srv.cfg.Name, d.remote}
			current[k] = &remoteTool{srv: srv, def: d, name: s.noteLocked(k.server, k.tool)}
		}
		resources = resources || srv.resourcesLocked()
		srv.mu.Unlock()
	}
	var out []tools.Tool
	for _, k := range s.order {
		if t, ok := current[k]; ok {
			out = append(out, t)
		}
	}
	if resources {
		if s.resTools == nil {
			s.resTools = s.resourceTools()
		}
		out = append(out, s.resTools...)
	}
	return out
}

// Generation counts the changes of the tool list: it is different after
// every change Tools would show.
func (s *serverSet) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// Status implements Set.
func (s *serverSet) Status() []Status {
	out := make([]Status, 0, len(s.servers))
	for _, srv := range s.servers {
		out = append(out, srv.status())
	}
	return out
}

// Prompts implements Set.
func (s *serverSet) Prompts(ctx context.Context, name string) ([]*sdk.Prompt, error) {
	srv, err := s.server(name)
	if err != nil {
		return nil, err
	}
	return srv.prompts(ctx)
}

// Close implements Set.
func (s *serverSet) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	errs := make([]error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = srv.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// changed records a change of the tool list.
func (s *serverSet) changed(srv *server) {
	s.mu.Lock()
	srv.mu.Lock()
	names := make([]string, 0, len(srv.remote))
	for _, d := range srv.remote {
		names = append(names, d.remote)
	}
	srv.mu.Unlock()
	for _, n := range names {
		s.noteLocked(srv.cfg.Name, n)
	}
	s.gen++
	s.mu.Unlock()
}

func (s *serverSet) emit(e Event) {
	if s.opts.events != nil {
		s.opts.events(e)
	}
}

// server finds a connected or configured server by name.
func (s *serverSet) server(name string) (*server, error) {
	for _, srv := range s.servers {
		if srv.cfg.Name == name {
			return srv, nil
		}
	}
	names := make([]string, 0, len(s.servers))
	for _, srv := range s.servers {
		names = append(names, srv.cfg.Name)
	}
	slices.Sort(names)
	return nil, &harness.Error{Code: codeUnknownServer,
		Message: fmt.Sprintf("There is no MCP server named %q. Servers: %s.", name, joinOr(names, "none"))}
}

func joinOr(ss []string, none string) string {
	if len(ss) == 0 {
		return none
	}
	out := ss[0]
	for _, x := range ss[1:] {
		out += ", " + x
	}
	return out
}
