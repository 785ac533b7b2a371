package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness/internal/proctree"
)

// client is one running language server for one workspace.
type client struct {
	srv     *Server
	root    string // the workspace's OS path
	o       *options
	proc    *proctree.Proc
	conn    *conn
	stdin   *os.File
	stdout  *os.File
	errTail *tailBuffer

	// pull reports that the server answers textDocument/diagnostic;
	// utf8 that positions count bytes.
	pull, utf8 bool
	// save reports that the server wants didSave notifications.
	save bool

	mu sync.Mutex
	// published holds the last diagnostics the server pushed, by OS path,
	// with the document version they are for (0 when unknown) and the
	// sequence number of the notification.
	published map[string]pushed
	seq       uint64
	// activity is closed and replaced whenever something arrives that
	// may change the diagnostics (a publish, progress); last is when.
	activity chan struct{}
	last     time.Time
	// progress holds the tokens of work the server reported begun and
	// not yet ended.
	progress map[string]bool
	// docs are the open documents, by OS path.
	docs map[string]*doc
	// timeouts counts consecutive requests the server did not answer in
	// time.
	timeouts int
	// settledOnce reports that the first settle after the start is done.
	settledOnce bool
}

type pushed struct {
	diags   []Diagnostic
	version int
	seq     uint64
}

type doc struct {
	version int
	text    string
	lang    string
	used    time.Time
}

// maxPublished bounds the files whose published diagnostics are kept.
const maxPublished = 20_000

// maxOpenDocs bounds the documents kept open in one server; the least
// recently used are closed beyond it.
const maxOpenDocs = 200

// start starts a server for a workspace and initializes it; ctx bounds
// the initialization.
func start(ctx context.Context, o *options, cont *proctree.Containment, srv *Server, argv []string, env []string, root string) (*client, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	proc, err := proctree.Start(cont, proctree.Command{Argv: argv, Dir: root, Env: env, Stdin: inR, Stdout: outW, Stderr: errW})
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	c := &client{srv: srv, root: root, o: o, proc: proc, stdin: inW, stdout: outR, errTail: &tailBuffer{max: 2048},
		published: map[string]pushed{}, activity: make(chan struct{}), progress: map[string]bool{}, docs: map[string]*doc{}, last: time.Now()}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := errR.Read(buf)
			c.errTail.Write(buf[:n])
			if err != nil {
				errR.Close()
				return
			}
		}
	}()
	c.conn = newConn(outR, deadlineWriter{inW, o.wait}, o.maxFrame, handlers{request: c.onRequest, notify: c.onNotify})
	if err := c.initialize(ctx); err != nil {
		c.kill()
		return nil, fmt.Errorf("%s did not initialize: %w%s", srv.Name, err, c.stderrNote())
	}
	return c, nil
}

// initialize runs the LSP handshake.
func (c *client) initialize(ctx context.Context) error {
	uri := fileURI(c.root)
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "harness"},
		"rootUri":          uri,
		"rootPath":         c.root,
		"workspaceFolders": []map[string]any{{"uri": uri, "name": filepath.Base(c.root)}},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}},
			"workspace": map[string]any{
				"configuration":    true,
				"workspaceFolders": true,
			},
			"window": map[string]any{"workDoneProgress": true},
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"didSave": true, "dynamicRegistration": false},
				"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": false},
				"diagnostic":         map[string]any{"dynamicRegistration": false},
			},
		},
	}
	if c.srv.InitializationOptions != nil {
		params["initializationOptions"] = c.srv.InitializationOptions
	}
	var result struct {
		Capabilities struct {
			PositionEncoding   string          `json:"positionEncoding"`
			DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
			TextDocumentSync   json.RawMessage `json:"textDocumentSync"`
		} `json:"capabilities"`
	}
	if err := c.conn.call(ctx, "initialize", params, &result); err != nil {
		return err
	}
	caps := result.Capabilities
	c.utf8 = caps.PositionEncoding == "utf-8"
	c.pull = len(caps.DiagnosticProvider) > 0 && string(caps.DiagnosticProvider) != "null" && string(caps.DiagnosticProvider) != "false"
	var sync struct {
		Save json.RawMessage `json:"save"`
	}
	if json.Unmarshal(caps.TextDocumentSync, &sync) == nil && len(sync.Save) > 0 && string(sync.Save) != "false" && string(sync.Save) != "null" {
		c.save = true
	}
	return c.conn.notify("initialized", map[string]any{})
}

// onRequest answers the requests a server sends a client.
func (c *client) onRequest(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			out[i] = c.srv.Settings[it.Section]
		}
		return out, nil
	case "workspace/workspaceFolders":
		return []map[string]any{{"uri": fileURI(c.root), "name": filepath.Base(c.root)}}, nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "window/showDocument", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh", "workspace/inlineValue/refresh", "workspace/foldingRange/refresh":
		return nil, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "this client applies no edits"}, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not supported: " + method}
}

// onNotify takes what a server reports.
func (c *client) onNotify(method string, params json.RawMessage) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p struct {
			URI         string           `json:"uri"`
			Version     *int             `json:"version"`
			Diagnostics []wireDiagnostic `json:"diagnostics"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		path := uriPath(p.URI)
		if path == "" {
			return
		}
		ds := c.convert(path, p.Diagnostics)
		c.mu.Lock()
		if _, known := c.published[path]; !known && len(c.published) >= maxPublished {
			c.mu.Unlock()
			return // a server flooding files: the rest is not kept
		}
		c.seq++
		v := 0
		if p.Version != nil {
			v = *p.Version
		}
		c.published[path] = pushed{diags: ds, version: v, seq: c.seq}
		c.touchLocked()
		c.mu.Unlock()
	case "$/progress":
		var p struct {
			Token any `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		tok := fmt.Sprint(p.Token)
		c.mu.Lock()
		switch p.Value.Kind {
		case "begin":
			c.progress[tok] = true
		case "end":
			delete(c.progress, tok)
		}
		c.touchLocked()
		c.mu.Unlock()
	}
}

// touchLocked records activity and wakes waiters.
func (c *client) touchLocked() {
	c.last = time.Now()
	close(c.activity)
	c.activity = make(chan struct{})
}

// convert turns a server's diagnostics into the package's form, capped
// in number (a server may send thousands).
func (c *client) convert(path string, ws []wireDiagnostic) []Diagnostic {
	const maxPerFile = 1000
	if len(ws) > maxPerFile {
		ws = ws[:maxPerFile]
	}
	out := make([]Diagnostic, 0, len(ws))
	for _, w := range ws {
		sev := w.Severity
		if sev < SeverityError || sev > SeverityHint {
			sev = SeverityError
		}
		msg := w.Message
		if len(msg) > 4096 {
			msg = msg[:4096]
		}
		out = append(out, Diagnostic{Path: path, Line: w.Range.Start.Line + 1, Column: w.Range.Start.Character + 1, Severity: sev,
			Source: truncate(w.Source, 100), Code: truncate(codeString(w.Code), 100), Message: msg})
	}
	return out
}

// sync makes the server see text as the content of the document at
// path: opened when it is not, changed when it differs. It returns the
// document's version and whether anything was sent.
func (c *client) sync(path, lang, text string) (int, bool, error) {
	c.mu.Lock()
	d := c.docs[path]
	if d != nil && d.text == text {
		d.used = time.Now()
		v := d.version
		c.mu.Unlock()
		return v, false, nil
	}
	var closeOld []string
	if d == nil {
		d = &doc{version: 1, text: text, lang: lang, used: time.Now()}
		c.docs[path] = d
		closeOld = c.evictLocked()
	} else {
		d.version++
		d.text, d.used = text, time.Now()
	}
	v, opened := d.version, d.version == 1
	c.mu.Unlock()
	for _, p := range closeOld {
		_ = c.conn.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": fileURI(p)}})
	}
	uri := fileURI(path)
	var err error
	if opened {
		err = c.conn.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": lang, "version": v, "text": text}})
	} else {
		err = c.conn.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": v},
			"contentChanges": []map[string]any{{"text": text}}})
	}
	if err == nil && c.save && !opened {
		err = c.conn.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
	}
	c.mu.Lock()
	c.touchLocked() // quiet spells count from the change
	c.mu.Unlock()
	return v, true, err
}

// evictLocked closes the least recently used documents beyond
// maxOpenDocs and returns their paths.
func (c *client) evictLocked() []string {
	if len(c.docs) <= maxOpenDocs {
		return nil
	}
	type pd struct {
		p    string
		used time.Time
	}
	var all []pd
	for p, d := range c.docs {
		all = append(all, pd{p, d.used})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	var out []string
	for _, x := range all[:len(all)-maxOpenDocs] {
		delete(c.docs, x.p)
		out = append(out, x.p)
	}
	return out
}

// settle waits until the server has published nothing and reported no
// work in progress for quiet, and at least min has passed, or ctx ends.
// It reports whether the server settled.
func (c *client) settle(ctx context.Context, quiet, min time.Duration) bool {
	start := time.Now()
	for {
		c.mu.Lock()
		busy := len(c.progress) > 0
		last, ch := c.last, c.activity
		c.mu.Unlock()
		now := time.Now()
		wait := time.Duration(0)
		if d := quiet - now.Sub(last); d > wait {
			wait = d
		}
		if d := min - now.Sub(start); d > wait {
			wait = d
		}
		if !busy && wait <= 0 {
			return true
		}
		if busy && wait <= 0 {
			wait = quiet
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-c.conn.done:
			t.Stop()
			return false
		case <-ch:
			t.Stop()
		case <-t.C:
		}
	}
}

// pulled asks the server for the diagnostics of a document.
func (c *client) pulled(ctx context.Context, path string) ([]Diagnostic, error) {
	var report struct {
		Kind  string           `json:"kind"`
		Items []wireDiagnostic `json:"items"`
	}
	err := c.conn.call(ctx, "textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": fileURI(path)}}, &report)
	c.noteAnswer(err)
	if err != nil {
		return nil, err
	}
	return c.convert(path, report.Items), nil
}

// noteAnswer counts requests that timed out in a row.
func (c *client) noteAnswer(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) {
		c.timeouts++
	} else {
		c.timeouts = 0
	}
}

// pushedFor waits until the server has published diagnostics for path
// after seq (for at least version, when the server says which version
// they are for) and then settled, and returns them. Servers publish
// nothing when a file's diagnostics did not change, so a quiet spell of
// a second (or Quiet, when longer) after the change answers too, with
// what was published before. It reports whether the answer came before
// ctx ended.
func (c *client) pushedFor(ctx context.Context, path string, version int, seq uint64) ([]Diagnostic, bool) {
	spell := max(c.o.quiet, time.Second)
	for {
		c.mu.Lock()
		p, ok := c.published[path]
		ch, last, busy := c.activity, c.last, len(c.progress) > 0
		c.mu.Unlock()
		if ok && p.seq > seq && (p.version == 0 || p.version >= version) {
			settled := c.settle(ctx, c.o.quiet, 0)
			c.mu.Lock()
			p = c.published[path]
			c.mu.Unlock()
			return p.diags, settled
		}
		idle := time.Since(last)
		if !busy && idle >= spell {
			return p.diags, true
		}
		wait := spell - idle
		if wait <= 0 {
			wait = spell
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return p.diags, false
		case <-c.conn.done:
			t.Stop()
			return nil, false
		case <-ch:
			t.Stop()
		case <-t.C:
		}
	}
}

// current returns what the server last published for path.
func (c *client) current(path string) []Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.published[path].diags
}

// snapshot returns the pushed diagnostics of every file but skip, and
// the current sequence number.
func (c *client) snapshot(skip string) (map[string][]Diagnostic, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]Diagnostic, len(c.published))
	for p, d := range c.published {
		if p != skip && len(d.diags) > 0 {
			out[p] = d.diags
		}
	}
	return out, c.seq
}

// loaded reports that the server has settled once since it started:
// its workspace is loaded.
func (c *client) loaded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settledOnce
}

func (c *client) markLoaded() {
	c.mu.Lock()
	c.settledOnce = true
	c.mu.Unlock()
}

// alive reports whether the server's connection is up.
func (c *client) alive() bool {
	select {
	case <-c.conn.done:
		return false
	default:
		return true
	}
}

// hung reports that the server failed to answer several requests in a
// row.
func (c *client) hung() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeouts >= 3
}

// shutdown asks the server to exit (shutdown, then exit), and stops
// whatever of it is left after a grace period.
func (c *client) shutdown() {
	if c.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if c.conn.call(ctx, "shutdown", nil, nil) == nil {
			_ = c.conn.notify("exit", nil)
		}
		cancel()
		_ = c.stdin.Close()
		t := time.NewTimer(2 * time.Second)
		select {
		case <-c.proc.MainDone():
		case <-t.C:
		}
		t.Stop()
	}
	c.kill()
}

// kill stops every process of the server and releases the pipes.
func (c *client) kill() {
	out := c.proc.Stop(time.Second)
	if err := out.SurvivorsError(c.srv.Name); err != nil {
		c.o.logger.Warn("language server processes survived", "server", c.srv.Name, "error", err)
	}
	_ = c.stdin.Close()
	_ = c.stdout.Close()
	<-c.conn.done
}

// stderrNote is the end of the server's standard error, for an error
// message, or "".
func (c *client) stderrNote() string {
	s := strings.TrimSpace(c.errTail.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return fmt.Sprintf(" (its standard error ends: %q)", strings.Join(lines, "\n"))
}

// deadlineWriter bounds each write to a server's input: a server that
// stops reading it must not block a call once the pipe is full.
type deadlineWriter struct {
	f *os.File
	d time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	_ = w.f.SetWriteDeadline(time.Now().Add(w.d))
	return w.f.Write(p)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
