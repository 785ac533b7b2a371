package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// clientName is how the harness introduces itself to servers.
const clientName = "go-harness"

// server is one configured server and its connection, if any.
type server struct {
	set *serverSet
	cfg Server

	mu       sync.Mutex
	cs       *sdk.ClientSession
	proc     *process // the stdio server's process, nil otherwise
	schemas  *schemas
	remote   []*toolDef // the listed tools, in the server's order
	init     *sdk.InitializeResult
	err      error // why the server is not connected
	restarts int
	closed   bool
	// containment describes how the stdio server's processes are
	// contained, once one has started.
	containment string
	// stopErr reports processes of a stopped server that outlived it.
	stopErr error
	// spools are the results too large for memory that wait for their
	// tools.
	spools spools

	bgMu     sync.Mutex
	bgClosed bool
	wg       sync.WaitGroup // watchers and refreshes
	tokens   sync.Map       // progress token -> *tools.Call
	tokenSeq atomic.Uint64
}

// toolDef is a listed tool and the spec it is offered to the model with
// (everything but the name, which the set hands out).
type toolDef struct {
	remote string
	title  string
	spec   tools.Spec
}

func (s *server) unavailable(format string, args ...any) error {
	return &harness.Error{Code: codeServerUnavailable, Message: fmt.Sprintf(format, args...)}
}

// connectLocked starts or reaches the server, shakes hands and lists its
// tools, all within the connect timeout.
func (s *server) connectLocked(ctx context.Context) (err error) {
	o := s.set.opts
	ctx, cancel := context.WithTimeout(ctx, o.connectTimeout)
	defer cancel()
	defer func() {
		if err != nil {
			s.err = err
			o.logger.Warn("mcp: connecting failed", "server", s.cfg.Name, "error", err)
			s.set.emit(Event{Kind: EventConnectFailed, Server: s.cfg.Name, Err: err, Message: err.Error()})
		}
	}()
	s.schemas = &schemas{}
	tr, proc, err := s.transport(ctx)
	if err != nil {
		return s.unavailable("mcp: server %q could not be started: %v", s.cfg.Name, err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: clientName, Version: "1"}, &sdk.ClientOptions{
		Capabilities:                &sdk.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { s.toolsChanged() },
		ProgressNotificationHandler: s.progress,
	})
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		proc.stop()
		s.noteStopLocked(proc)
		return s.unavailable("mcp: server %q did not complete the MCP handshake%s: %v%s", s.cfg.Name, within(ctx), err, proc.stderrTail())
	}
	defs, err := s.list(ctx, cs)
	if err != nil {
		_ = cs.Close()
		proc.stop()
		s.noteStopLocked(proc)
		return s.unavailable("mcp: server %q connected but listing its tools failed%s: %v%s", s.cfg.Name, within(ctx), err, proc.stderrTail())
	}
	s.cs, s.proc, s.init, s.err = cs, proc, cs.InitializeResult(), nil
	s.remote = defs
	s.background(func() { s.watch(cs) })
	msg := fmt.Sprintf("%d tools", len(defs))
	if how := proc.how(); how != "" {
		s.containment = how
		msg += "; containment: " + how
		o.logger.Info("mcp: connected", "server", s.cfg.Name, "tools", len(defs), "containment", how)
	} else {
		o.logger.Info("mcp: connected", "server", s.cfg.Name, "tools", len(defs))
	}
	s.set.emit(Event{Kind: EventConnected, Server: s.cfg.Name, Message: msg})
	return nil
}

func within(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return " within the connect timeout"
	}
	return ""
}

// transport builds the transport of one connection.
func (s *server) transport(ctx context.Context) (sdk.Transport, *process, error) {
	switch {
	case s.cfg.Transport != nil:
		tr, err := s.cfg.Transport(ctx)
		if err != nil {
			return nil, nil, err
		}
		if tr == nil {
			return nil, nil, errors.New("the Transport function returned no transport")
		}
		return &captureTransport{Transport: tr, schemas: s.schemas}, nil, nil
	case s.cfg.URL != "":
		base := http.DefaultTransport
		o := s.set.opts
		rules := bigRules{frame: o.frame, maxResult: o.maxResult, logger: o.logger, server: s.cfg.Name, spools: &s.spools}
		hc := &http.Client{Transport: &httpTransport{base: base, headers: s.cfg.Headers, schemas: s.schemas, rules: rules}}
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: 2}, nil, nil
	}
	path, err := exec.LookPath(s.cfg.Command)
	if err != nil {
		return nil, nil, err
	}
	env := os.Environ()
	for _, k := range sortedKeys(s.cfg.Env) {
		env = append(env, k+"="+s.cfg.Env[k])
	}
	x := proctree.Command{Argv: append([]string{path}, s.cfg.Args...), Dir: s.cfg.Dir, Env: env}
	proc := newProcess(x, s.set.containment(), s)
	return &captureTransport{Transport: proc, schemas: s.schemas}, proc, nil
}

// list fetches every page of the server's tools and builds their specs.
func (s *server) list(ctx context.Context, cs *sdk.ClientSession) ([]*toolDef, error) {
	var defs []*toolDef
	network := s.cfg.URL != ""
	listed := 0
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if listed++; listed > s.set.opts.maxTools {
			err := fmt.Errorf("the server offers more than %d tools (Config.MaxTools); %q and the tools listed after it are not offered", s.set.opts.maxTools, t.Name)
			s.set.opts.logger.Warn("mcp: tools skipped", "server", s.cfg.Name, "from", t.Name, "error", err)
			s.set.emit(Event{Kind: EventToolSkipped, Server: s.cfg.Name, Tool: t.Name, Err: err, Message: err.Error()})
			break
		}
		d, err := s.define(t, network)
		if err != nil {
			s.set.opts.logger.Warn("mcp: tool skipped", "server", s.cfg.Name, "tool", t.Name, "error", err)
			s.set.emit(Event{Kind: EventToolSkipped, Server: s.cfg.Name, Tool: t.Name, Err: err, Message: err.Error()})
			continue
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// define maps a listed tool to a spec: the server's schema bytes, its
// description, and the declarations its annotations imply.
func (s *server) define(t *sdk.Tool, network bool) (*toolDef, error) {
	raw, ok := s.schemas.get(t.Name)
	if !ok {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("its input schema does not encode: %v", err)
		}
		raw = b
	}
	if max := s.set.opts.maxSchema; len(raw) > max {
		return nil, fmt.Errorf("its input schema is %s, more than the %s a tool may have (Config.MaxSchemaBytes): it would be sent with every request to the model", units.Bytes(int64(len(raw))), units.Bytes(int64(max)))
	}
	if err := checkSchema(t.Name, raw); err != nil {
		return nil, err
	}
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	desc := t.Description
	if strings.TrimSpace(desc) == "" {
		desc = title
	}
	if strings.TrimSpace(desc) == "" {
		desc = fmt.Sprintf("The %s tool of the MCP server %s.", t.Name, s.cfg.Name)
	}
	if len(desc) > maxDescription {
		// Sent with every request too; the start says what the tool is.
		s.set.opts.logger.Warn("mcp: tool description cut", "server", s.cfg.Name, "tool", t.Name, "bytes", len(desc))
		desc = textcut.Prefix(desc, maxDescription) + fmt.Sprintf(" … [description cut: %s in all]", units.Bytes(int64(len(desc))))
	}
	spec := tools.Spec{Description: desc, InputSchema: raw, Render: harness.RenderGeneric, Family: tools.FamilyProcess}
	a := t.Annotations
	switch {
	case a != nil && a.ReadOnlyHint:
		spec.ConcurrencySafe, spec.SideEffects = true, false
	default:
		// Destructive, open-world or unannotated: assume the worst.
		spec.ConcurrencySafe, spec.SideEffects = false, true
	}
	if network || (a != nil && a.OpenWorldHint != nil && *a.OpenWorldHint) {
		spec.Family = tools.FamilyNetwork
	}
	return &toolDef{remote: t.Name, title: title, spec: spec}, nil
}

// maxDescription bounds the description of a tool offered to the model;
// a longer one is cut.
const maxDescription = 16 << 10

// checkSchema refuses a schema the registry would, at once rather than
// at the tool's first call: one that is not a JSON Schema of an object,
// or that cannot be checked safely (a reference cycle, say). The error
// is the registry's *tools.SchemaError, naming the server's tool.
func checkSchema(tool string, raw json.RawMessage) error {
	probe := &probeTool{spec: tools.Spec{Name: "probe", Description: "probe", InputSchema: raw}}
	_, err := tools.NewRegistry(probe)
	if err == nil {
		err = tools.CheckSchema("probe", raw)
	}
	var se *tools.SchemaError
	if errors.As(err, &se) {
		se.Tool = tool
		return se
	}
	if err != nil {
		return fmt.Errorf("its input schema is not usable: %v", strings.TrimPrefix(err.Error(), "tools: probe: "))
	}
	return nil
}

type probeTool struct{ spec tools.Spec }

func (p *probeTool) Spec() tools.Spec { return p.spec }
func (p *probeTool) Execute(context.Context, *tools.Call) (*harness.ToolResult, error) {
	return nil, nil
}

// watch waits for the connection to end; an end nobody asked for makes
// the server stopped, to be restarted on its next call.
func (s *server) watch(cs *sdk.ClientSession) {
	err := cs.Wait()
	s.lost(cs, err)
}

// lost records that cs no longer works.
func (s *server) lost(cs *sdk.ClientSession, cause error) {
	s.mu.Lock()
	if s.cs != cs || s.closed {
		s.mu.Unlock()
		return
	}
	proc := s.proc
	s.cs, s.proc = nil, nil
	tail := proc.stderrTail()
	if cause == nil {
		cause = errors.New("the connection closed")
	}
	s.err = s.unavailable("mcp: server %q stopped: %v%s", s.cfg.Name, cause, tail)
	err := s.err
	s.mu.Unlock()
	_ = cs.Close()
	proc.stop()
	s.mu.Lock()
	s.noteStopLocked(proc)
	s.mu.Unlock()
	s.set.opts.logger.Warn("mcp: server stopped", "server", s.cfg.Name, "error", err)
	s.set.emit(Event{Kind: EventStopped, Server: s.cfg.Name, Err: err, Message: err.Error()})
}

// session returns the live session, restarting a stopped server within
// the restart limit.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &harness.Error{Code: harness.CodeClosed, Message: fmt.Sprintf("The MCP server %s is closed: the session is shutting down.", s.cfg.Name)}
	}
	if s.cs != nil {
		return s.cs, nil
	}
	max := s.set.opts.maxRestarts
	if s.restarts >= max {
		return nil, s.unavailable("The MCP server %s stopped and is not restarted again (%d restarts allowed, %d used). Do not call its tools again in this session; the user can restart the program.",
			s.cfg.Name, max, s.restarts)
	}
	s.restarts++
	if err := s.connectLocked(ctx); err != nil {
		return nil, s.unavailable("The MCP server %s stopped, and starting it again failed (attempt %d of %d): %v", s.cfg.Name, s.restarts, max, err)
	}
	// The new process may offer other tools; the loop takes them at its
	// next step.
	s.background(func() { s.set.changed(s) })
	return s.cs, nil
}

// toolsChanged refreshes the tool list after the server said it changed.
// It runs apart from the notification, which must not wait on a request.
func (s *server) toolsChanged() {
	s.background(s.refresh)
}

// background runs f on a goroutine Close waits for, unless the server is
// closing.
func (s *server) background(f func()) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if !s.bgClosed {
		s.wg.Go(f)
	}
}

func (s *server) refresh() {
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.set.opts.connectTimeout)
	defer cancel()
	defs, err := s.list(ctx, cs)
	if err != nil {
		s.set.opts.logger.Warn("mcp: refreshing the tool list failed", "server", s.cfg.Name, "error", err)
		return
	}
	s.mu.Lock()
	if s.cs != cs {
		s.mu.Unlock()
		return
	}
	s.remote = defs
	s.mu.Unlock()
	s.set.changed(s)
	s.set.emit(Event{Kind: EventToolsChanged, Server: s.cfg.Name, Message: fmt.Sprintf("%d tools", len(defs))})
}

func (s *server) progress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	tok, _ := p.ProgressToken.(string)
	v, ok := s.tokens.Load(tok)
	if !ok {
		return
	}
	// The call's own progress report: the dispatcher shows it to the
	// host as the call's ToolCallProgress.
	if report := v.(*tools.Call).OnProgress; report != nil {
		report(tools.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

func (s *server) resourcesLocked() bool {
	return s.init != nil && s.init.Capabilities != nil && s.init.Capabilities.Resources != nil && (s.cs != nil || len(s.remote) > 0)
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Transport: s.cfg.kind(), Connected: s.cs != nil, Tools: len(s.remote),
		Resources: s.resourcesLocked(), Restarts: s.restarts, Err: s.err, Containment: s.containment}
	if s.init != nil {
		st.Instructions = s.init.Instructions
		if s.init.ServerInfo != nil {
			st.ServerName, st.Version = s.init.ServerInfo.Name, s.init.ServerInfo.Version
		}
	}
	return st
}

func (s *server) prompts(ctx context.Context) ([]*sdk.Prompt, error) {
	s.mu.Lock()
	cs, init := s.cs, s.init
	s.mu.Unlock()
	if cs == nil || init == nil || init.Capabilities == nil || init.Capabilities.Prompts == nil {
		return nil, nil
	}
	var out []*sdk.Prompt
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			return out, fmt.Errorf("mcp: listing the prompts of %s: %w", s.cfg.Name, err)
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// close disconnects the server, stops its processes and waits for its
// goroutines. It reports processes of the server that outlived any of
// its stops.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	cs, proc := s.cs, s.proc
	s.cs, s.proc = nil, nil
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	proc.stop()
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	s.wg.Wait()
	s.spools.dropOf(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteStopLocked(proc)
	return s.stopErr
}

// noteStopLocked records processes of a stopped server that outlived
// the stop, and logs them.
func (s *server) noteStopLocked(proc *process) {
	if err := proc.survivors(s.cfg.Name); err != nil {
		s.set.opts.logger.Error("mcp: processes of a stopped server still run", "server", s.cfg.Name, "containment", proc.how(), "error", err)
		s.stopErr = errors.Join(s.stopErr, err)
	}
}

// isWireError reports whether err is the server's answer (a JSON-RPC
// error), as opposed to a broken connection.
func isWireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}
