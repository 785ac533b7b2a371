package lsp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/tools"
)

// maxDocument is the largest file sent to a server; larger files get no
// diagnostics.
const maxDocument = 4 << 20

// NotePrefix starts the text block the middleware appends to a result:
// "Diagnostics (gopls): ...". Hosts find the block with [Note].
const NotePrefix = "Diagnostics ("

// Note returns the diagnostics block the middleware appended to a
// result, for a host to show in its card of the change, or "" when
// there is none. It is a pure function of the result, so a replayed
// session shows what the live one showed.
func Note(res *harness.ToolResult) string {
	if res == nil {
		return ""
	}
	for i := len(res.Content) - 1; i > 0; i-- {
		b := res.Content[i]
		if b.Type == harness.BlockText && strings.HasPrefix(b.Text, NotePrefix) {
			return b.Text
		}
	}
	return ""
}

// target is the file a call changes, as the session and the OS name it.
type target struct {
	ns, os   string // namespace and OS paths
	nsRoot   string
	osRoot   string
	srv      *Server
	lang     string
	fsys     fs.FileSystem
	cwd      string
	readOnly bool
}

// Middleware returns the dispatch middleware that adds diagnostics to
// the results of the tools in Config.Tools (write and edit). Before the
// call it brings the server up to date with the file and notes its
// diagnostics (those of the file, and those the server published for
// other files); after a successful call it sends the new content, waits
// for the diagnostics to settle (at most Wait in all), and appends to
// the result one text block listing the diagnostics the change
// introduced: those that were not there before, matched by file,
// severity, source, code and message (not by position, which an edit
// above moves). A file no configured server covers, a file system
// without OS paths, and a server that is not installed pass through
// untouched; a server that fails or does not answer in time adds a note
// and never fails the call. Results of other tools that show a covered
// file (read) start its server and open the file in the background, so
// the first edit finds it ready.
//
// Put it inside the spill middleware and outside the deadline
// middleware: Tools: []tools.Middleware{spilling, diagnostics, deadlines}.
func (m *Manager) Middleware() tools.Middleware {
	return func(next tools.Handler) tools.Handler {
		return func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			if !m.o.tools[call.Name] {
				res := next(ctx, call)
				m.warm(call, res)
				return res
			}
			t := m.targetOf(call)
			if t == nil {
				return next(ctx, call)
			}
			e := m.entryFor(t.srv, t.osRoot)
			if e == nil {
				return next(ctx, call)
			}
			lctx, cancel := context.WithTimeout(ctx, m.o.wait+m.o.startWait)
			ok := e.lock(lctx)
			cancel()
			if !ok {
				res := next(ctx, call)
				if ctx.Err() == nil && !res.IsError && changed(res, t.ns) {
					appendNote(res, fmt.Sprintf("%s%s): the server was busy with another change; this change was not checked.", NotePrefix, t.srv.Name))
				}
				return res
			}
			defer e.unlock()
			return m.around(ctx, call, e, t, next)
		}
	}
}

// around runs a call between the two checks. The entry's lock is held.
func (m *Manager) around(ctx context.Context, call *tools.Call, e *entry, t *target, next tools.Handler) *harness.ToolResult {
	c, err := m.clientLocked(ctx, e)
	if err != nil {
		res := next(ctx, call)
		if !e.missing && !e.told && !res.IsError && changed(res, t.ns) {
			e.told = e.failed != nil
			appendNote(res, fmt.Sprintf("%s%s): unavailable: %v. This change was not checked.", NotePrefix, t.srv.Name, err))
		}
		return res
	}
	if !c.loaded() {
		// A server that has not settled since it started is loading its
		// workspace: that may take up to StartWait, on top of Wait.
		sctx, cancel := context.WithTimeout(ctx, m.o.startWait)
		if c.settle(sctx, m.o.quiet, 500*time.Millisecond) {
			c.markLoaded()
		}
		cancel()
	}
	budget := m.o.wait
	cctx, cancel := context.WithDeadline(ctx, time.Now().Add(budget))
	defer cancel()

	before, berr := m.check(cctx, c, t, nil)
	res := next(ctx, call)
	if res == nil || res.IsError || !changed(res, t.ns) {
		return res
	}
	if berr != nil {
		appendNote(res, m.failure(t, cctx, berr, budget))
		return res
	}
	after, aerr := m.check(cctx, c, t, before)
	if aerr != nil {
		appendNote(res, m.failure(t, cctx, aerr, budget))
		return res
	}
	appendNote(res, m.report(t, before, after))
	return res
}

// failure is the note for a check that did not finish.
func (m *Manager) failure(t *target, ctx context.Context, err error, budget time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Sprintf("%s%s): the server did not report within %v; this change was not checked. Build or test to check it.", NotePrefix, t.srv.Name, budget.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s%s): unavailable: %v. This change was not checked.", NotePrefix, t.srv.Name, err)
}

// state is what a server reported at one point: the changed file's
// diagnostics, those it published for other files, and whether it had
// settled.
type state struct {
	file []Diagnostic
	// pulled are the diagnostics of the file's siblings, asked of a
	// server that answers pull requests; others those the server pushed
	// for any other file.
	pulled  map[string][]Diagnostic
	others  map[string][]Diagnostic
	seq     uint64
	settled bool
	utf8    bool
}

// check brings the server up to date with the file and returns its
// diagnostics. prev is the state before the change (nil for the check
// before it).
func (m *Manager) check(ctx context.Context, c *client, t *target, prev *state) (*state, error) {
	text, exists, err := readDoc(ctx, t)
	if err != nil {
		return nil, err
	}
	_, seq0 := c.snapshot(t.os)
	version, sent := 0, false
	if exists {
		if version, sent, err = c.sync(t.os, t.lang, text); err != nil {
			return nil, err
		}
	}
	st := &state{utf8: c.utf8}
	if prev == nil {
		// Before the change: the server's view of the workspace must be
		// settled, or diagnostics it publishes later for other files
		// would count as introduced by the change.
		st.settled = c.settle(ctx, m.o.quiet, 0)
	}
	pushed := func() ([]Diagnostic, bool) {
		if !sent {
			return c.current(t.os), true // nothing new to wait for
		}
		return c.pushedFor(ctx, t.os, version, seq0)
	}
	if exists {
		switch {
		case c.pull:
			st.file, err = c.pulled(ctx, t.os)
			if err != nil && ctx.Err() == nil {
				// The server may refuse a file it does not place in a
				// package; what it pushes is the answer then.
				st.file, st.settled = pushed()
				err = nil
			}
		default:
			st.file, st.settled = pushed()
		}
		if err != nil {
			return nil, err
		}
	}
	if c.pull && err == nil {
		st.pulled = m.siblings(ctx, c, t, prev)
	}
	if prev != nil || !exists {
		// After the change, other files' diagnostics come as pushes.
		st.settled = c.settle(ctx, m.o.quiet, 0) && (st.settled || c.pull)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !c.alive() {
		return nil, errors.New(c.srv.Name + " exited" + c.stderrNote())
	}
	st.others, st.seq = c.snapshot(t.os)
	return st, nil
}

// maxSiblings bounds the files next to the changed one whose
// diagnostics are asked for by pull requests.
const maxSiblings = 64

// siblings asks the server for the diagnostics of the files in the
// changed file's directory that the same server covers (for Go, its
// package), so that what the change breaks next to it is known without
// waiting for pushes. After the change, the files asked before are
// asked again. Files the server refuses are left to its pushes.
func (m *Manager) siblings(ctx context.Context, c *client, t *target, prev *state) map[string][]Diagnostic {
	var paths []string
	if prev != nil {
		for p := range prev.pulled {
			paths = append(paths, p)
		}
	} else {
		dir := path.Dir(t.ns)
		entries, err := t.fsys.ReadDir(ctx, dir)
		if err != nil {
			return nil
		}
		for _, fi := range entries {
			if !fi.Mode.IsRegular() || len(paths) == maxSiblings {
				continue
			}
			ns := fi.Path
			if _, ok := t.srv.Languages[path.Ext(ns)]; !ok || ns == t.ns {
				continue
			}
			if lp, ok := t.fsys.(fs.LocalPather); ok {
				if osPath, err := lp.LocalPath(ns); err == nil {
					paths = append(paths, filepath.Clean(osPath))
				}
			}
		}
	}
	out := map[string][]Diagnostic{}
	for _, p := range paths {
		ds, err := c.pulled(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			continue
		}
		out[p] = ds
	}
	return out
}

// readDoc reads the file through the session's file system.
func readDoc(ctx context.Context, t *target) (string, bool, error) {
	b, _, err := t.fsys.ReadBytes(ctx, t.ns, maxDocument)
	switch {
	case errors.Is(err, harness.CodeNotFound):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return string(b), true, nil
}

// changed reports whether a result records a change of the file.
func changed(res *harness.ToolResult, ns string) bool {
	for _, f := range res.Files {
		if f.Op == harness.FileWrite && f.Path == ns {
			return true
		}
	}
	return false
}

func appendNote(res *harness.ToolResult, note string) {
	res.Content = append(res.Content, harness.TextBlock(note))
}

// targetOf returns the file a call names, when a configured server
// covers it and the file system maps it to the OS; nil otherwise.
func (m *Manager) targetOf(call *tools.Call) *target {
	if call.Env == nil || call.Env.FS == nil {
		return nil
	}
	filePath, _ := call.Args()["file_path"].(string)
	if filePath == "" || strings.HasPrefix(filePath, tools.OutputScheme) {
		return nil
	}
	return m.targetFor(call.Env, call.Env.Resolve(filePath))
}

func (m *Manager) targetFor(env *tools.Env, ns string) *target {
	srv, lang := m.o.serverFor(ns)
	if srv == nil {
		return nil
	}
	lp, ok := env.FS.(fs.LocalPather)
	if !ok {
		return nil
	}
	nsRoot := "/"
	if r, ok := env.FS.(fs.Rooter); ok && r.Root() != "" {
		nsRoot = r.Root()
	}
	osPath, err := lp.LocalPath(ns)
	if err != nil {
		return nil
	}
	osRoot, err := lp.LocalPath(nsRoot)
	if err != nil {
		return nil
	}
	return &target{ns: ns, os: filepath.Clean(osPath), nsRoot: nsRoot, osRoot: filepath.Clean(osRoot), srv: srv, lang: lang, fsys: env.FS, cwd: env.Cwd}
}

// warm starts the server of a file a result shows and opens the file,
// in the background, so that a later edit finds both ready.
func (m *Manager) warm(call *tools.Call, res *harness.ToolResult) {
	if res == nil || res.IsError || call.Env == nil || call.Env.FS == nil {
		return
	}
	for _, f := range res.Files {
		if f.Op != harness.FileRead {
			continue
		}
		t := m.targetFor(call.Env, f.Path)
		if t == nil {
			continue
		}
		e := m.entryFor(t.srv, t.osRoot)
		if e == nil {
			return
		}
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return
		}
		m.wg.Add(1)
		m.mu.Unlock()
		go func() {
			defer m.wg.Done()
			if !e.tryLock() {
				return // a call is using the server: it is warm
			}
			defer e.unlock()
			ctx, cancel := context.WithTimeout(m.ctx, m.o.startWait)
			defer cancel()
			c, err := m.clientLocked(ctx, e)
			if err != nil {
				return
			}
			if text, ok, err := readDoc(ctx, t); err == nil && ok {
				_, _, _ = c.sync(t.os, t.lang, text)
			}
		}()
		return
	}
}

// report is the note listing what the change introduced.
func (m *Manager) report(t *target, before, after *state) string {
	var added []Diagnostic
	gone := 0
	add := func(old, cur []Diagnostic) {
		a, g := delta(m.keep(old), m.keep(cur))
		added = append(added, a...)
		gone += g
	}
	add(before.file, after.file)
	paths := map[string]bool{}
	for p := range before.others {
		paths[p] = true
	}
	for p := range after.others {
		paths[p] = true
	}
	for p, ds := range after.pulled {
		if old, ok := before.pulled[p]; ok {
			add(old, ds)
			delete(paths, p)
		}
	}
	for p := range paths {
		if !within(p, t.osRoot) {
			continue // outside the workspace: not the model's to fix
		}
		add(before.others[p], after.others[p])
	}
	sort.SliceStable(added, func(i, j int) bool {
		a, b := added[i], added[j]
		if (a.Path == t.os) != (b.Path == t.os) {
			return a.Path == t.os
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s): ", NotePrefix, t.srv.Name)
	switch len(added) {
	case 0:
		b.WriteString("no new problems after this change.")
	case 1:
		b.WriteString("1 new problem after this change:")
	default:
		fmt.Fprintf(&b, "%d new problems after this change:", len(added))
	}
	if gone > 0 {
		if gone == 1 {
			b.WriteString(" (1 earlier problem is gone.)")
		} else {
			fmt.Fprintf(&b, " (%d earlier problems are gone.)", gone)
		}
	}
	for i, d := range added {
		if i == m.o.maxDiags {
			fmt.Fprintf(&b, "\n… and %d more.", len(added)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s:%d:%d: %s: %s", oneLine(m.display(t, d.Path), 1024), d.Line, d.Column, d.Severity, oneLine(d.Message, m.o.maxMessage))
		var tags []string
		if d.Source != "" {
			tags = append(tags, oneLine(d.Source, 60))
		}
		if d.Code != "" {
			tags = append(tags, oneLine(d.Code, 60))
		}
		if len(tags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(tags, " "))
		}
	}
	if !before.settled || !after.settled {
		fmt.Fprintf(&b, "\n(The server was still busy; diagnostics in other files may be incomplete.)")
	}
	return b.String()
}

// keep filters diagnostics by severity.
func (m *Manager) keep(ds []Diagnostic) []Diagnostic {
	var out []Diagnostic
	for _, d := range ds {
		if d.Severity <= m.o.minSeverity {
			out = append(out, d)
		}
	}
	return out
}

// delta returns the diagnostics of cur that old does not have (each
// counted: two equal ones where old had one is one new), and how many of
// old are gone.
func delta(old, cur []Diagnostic) ([]Diagnostic, int) {
	count := map[string]int{}
	for _, d := range old {
		count[d.key()]++
	}
	var added []Diagnostic
	for _, d := range cur {
		k := d.key()
		if count[k] > 0 {
			count[k]--
			continue
		}
		added = append(added, d)
	}
	gone := 0
	for _, n := range count {
		gone += n
	}
	return added, gone
}

// display names a file for the model: relative to the session's working
// directory when inside it, else its path in the session's namespace.
func (m *Manager) display(t *target, osPath string) string {
	rel, err := filepath.Rel(t.osRoot, osPath)
	if err != nil || !within(osPath, t.osRoot) {
		return osPath
	}
	ns := path.Join(t.nsRoot, filepath.ToSlash(rel))
	if t.cwd != "" {
		if r, ok := strings.CutPrefix(ns, strings.TrimSuffix(t.cwd, "/")+"/"); ok {
			return r
		}
	}
	return ns
}

// oneLine collapses whitespace, drops control characters (a server's
// text reaches terminals) and cuts s to n bytes at a rune boundary.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
