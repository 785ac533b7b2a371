package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// loadToolsName is the model-facing name of the tool that loads deferred
// tools; loadedRecord names its record in the log.
const (
	loadToolsName = "load_tools"
	loadedRecord  = "loaded"
)

// maxSummary bounds the line a deferred tool is listed with, in bytes;
// a clause ended by a colon or semicolon is that line when it has at
// least minClause bytes.
const (
	maxSummary = 100
	minClause  = 12
)

// WithDeferredTools marks tools as rarely used. A deferred tool is not
// sent with its schema: the model sees it listed by name and one line
// (the first sentence of its description) in the description of a
// load_tools tool, and calls load_tools {"names": [...]} to load it.
// From the model's next step on, a loaded tool is sent with its full
// schema, for the rest of the session. Requests stay cacheable: the
// tools that are not deferred come first, in their order, then
// load_tools, then the loaded tools in the order they were loaded.
//
// A name is a tool's name, or a prefix followed by "*" for every tool
// whose name starts with it (mcp__github__* defers a server's tools,
// whenever it offers them). A plain name that names none of the loop's
// tools is an error of New, so a misspelt name is not silently sent in
// full; a pattern may match none.
//
// What was loaded is logged (a session.ToolRecord of load_tools), so a
// resumed session, a rewind's fork and a strict replay send the tools
// the recording sent; compaction does not unload anything. A call of a
// deferred tool that is not loaded yet does not run: its result
// (code [CodeNotLoaded]) tells the model to load it first. A sub-agent's
// loop defers the same tools, except those its parent's session had
// loaded when it started, which it gets whole.
func WithDeferredTools(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			base, _ := strings.CutSuffix(n, "*")
			switch {
			case base == "":
				c.fail("WithDeferredTools: the name %q names no tool; give a tool's name, or a prefix and *", n)
				return
			case strings.Contains(base, "*"):
				c.fail("WithDeferredTools: %q has a * that is not at its end; only a trailing * (a prefix) is supported", n)
				return
			case n == loadToolsName:
				c.fail("WithDeferredTools: %s cannot be deferred: it is what loads deferred tools", loadToolsName)
				return
			}
		}
		if c.deferred == nil {
			c.deferred = &deferral{}
		}
		c.deferred.names = append(c.deferred.names, names...)
		c.deferred.strict = true
	}
}

// deferral is what WithDeferredTools configures.
type deferral struct {
	names []string // tool names and prefixes ending in *
	// strict makes New refuse a plain name that names no tool; a child's
	// loop has a subset of the tools and is not strict.
	strict bool
	// whole are names not deferred after all: the tools a sub-agent's
	// parent had loaded.
	whole map[string]bool
}

// defers reports whether the tool named name is deferred.
func (d *deferral) defers(name string) bool {
	if d == nil || d.whole[name] || name == loadToolsName {
		return false
	}
	for _, n := range d.names {
		if base, ok := strings.CutSuffix(n, "*"); ok {
			if strings.HasPrefix(name, base) {
				return true
			}
		} else if n == name {
			return true
		}
	}
	return false
}

// addLoader returns all with the load_tools tool added when any of its
// tools is deferred, and which are.
func (l *Loop) addLoader(all []tools.Tool) ([]tools.Tool, map[string]bool) {
	d := l.cfg.deferred
	if d == nil {
		return all, nil
	}
	deferred := map[string]bool{}
	var listed []tools.Spec
	for _, t := range all {
		if t == nil {
			continue // the registry refuses it
		}
		if sp := t.Spec(); d.defers(sp.Name) {
			deferred[sp.Name] = true
			listed = append(listed, sp)
		}
	}
	if len(listed) == 0 {
		return all, nil
	}
	return append(all, loadTool(listed)), deferred
}

// check refuses a plain name of WithDeferredTools that names
// none of ts's tools.
func (d *deferral) check(ts *toolset) error {
	if d == nil || !d.strict || ts.reg == nil {
		return nil
	}
	var missing []string
	for _, n := range d.names {
		if strings.HasSuffix(n, "*") {
			continue
		}
		if _, ok := ts.deferred[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var names []string
	for _, sp := range ts.reg.Specs() {
		names = append(names, sp.Name)
	}
	return optionError("WithDeferredTools: %s names no tool of the loop (its tools: %s); fix the name, or use a prefix and * for tools that may come later",
		strings.Join(missing, ", "), strings.Join(names, ", "))
}

// forChild is the deferral of a sub-agent's loop started by a session
// that has loaded the tools named loaded: the same tools, less those.
func (d *deferral) forChild(loaded []string) *deferral {
	if d == nil {
		return nil
	}
	c := &deferral{names: d.names, whole: map[string]bool{}}
	for n := range d.whole {
		c.whole[n] = true
	}
	for _, n := range loaded {
		c.whole[n] = true
	}
	return c
}

// loadArgs are the load_tools tool's arguments.
type loadArgs struct {
	Names []string `json:"names"`
}

// loadSchema is the schema of loadArgs: an array, never null, of at
// least one name.
const loadSchema = `{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},"minItems":1,` +
	`"description":"Names of deferred tools to load."}},"required":["names"],"additionalProperties":false}`

// loadTool builds the load_tools tool over the deferred tools listed.
func loadTool(listed []tools.Spec) tools.Tool {
	var desc strings.Builder
	desc.WriteString("Load deferred tools: tools listed below by name only, whose schemas are not in your tool list yet. " +
		"Calling one before it is loaded fails. A loaded tool is in your tool list from your next step, for the rest of the session. " +
		"Load all you need in one call.\n\nDeferred tools:")
	for _, sp := range listed {
		fmt.Fprintf(&desc, "\n- %s", sp.Name)
		if line := summaryLine(sp.Description); line != "" {
			fmt.Fprintf(&desc, ": %s", line)
		}
	}
	spec := tools.Spec{
		Name:            loadToolsName,
		Description:     desc.String(),
		InputSchema:     json.RawMessage(loadSchema),
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
	}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in loadArgs) (*harness.ToolResult, error) {
		t, _ := ctx.Value(turnKey{}).(*turn)
		if t == nil {
			return nil, &harness.Error{Code: CodeInternal, Message: "load_tools runs only inside a turn of its loop"}
		}
		return t.s.loadTools(ctx, call, t.stepTools(), in.Names)
	})
}

// summaryLine is the line a deferred tool is listed with: the first
// sentence of its description (or clause, before a colon or semicolon),
// on one line, at most maxSummary bytes.
func summaryLine(desc string) string {
	desc = strings.TrimSpace(desc)
	if i := strings.IndexAny(desc, "\r\n"); i >= 0 {
		desc = desc[:i]
	}
	// The first sentence, or its first clause when a colon or semicolon
	// ends one that says enough.
	for i := 0; i < len(desc); i++ {
		end := i+1 == len(desc) || desc[i+1] == ' ' || desc[i+1] == '\t'
		if !end {
			continue
		}
		if desc[i] == '.' {
			desc = desc[:i+1]
			break
		}
		if (desc[i] == ':' || desc[i] == ';') && i >= minClause {
			desc = desc[:i]
			break
		}
	}
	// One line of plain spaces.
	desc = strings.Join(strings.FieldsFunc(desc, unicode.IsSpace), " ")
	desc = strings.ToValidUTF8(desc, "\uFFFD")
	if len(desc) <= maxSummary {
		return desc
	}
	const ellipsis = "…"
	cut := maxSummary - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(desc[cut]) {
		cut--
	}
	// At a word's end when one is near.
	if sp := strings.LastIndexByte(desc[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return strings.TrimRight(desc[:cut], " ") + ellipsis
}

// loadedKey keys a session's loadedTools in its tool state.
type loadedKey struct{}

// loadedTools is what a session has loaded of its deferred tools, and
// the tool list of its last request.
type loadedTools struct {
	mu    sync.Mutex
	names []string // in the order they were loaded
	// The list last built: for ts with n names loaded.
	ts   *toolset
	n    int
	list []model.Tool
}

// loaded returns the session's loaded tools, or nil once it is closing.
func (s *Session) loaded() *loadedTools {
	lt, err := tools.LoadState(s.state, loadedKey{}, func() *loadedTools { return &loadedTools{} })
	if err != nil {
		return nil
	}
	return lt
}

// LoadedTools returns the names of the deferred tools (WithDeferredTools)
// the model has loaded in this session, in the order it loaded them.
func (s *Session) LoadedTools() []string {
	lt := s.loaded()
	if lt == nil {
		return nil
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return slices.Clone(lt.names)
}

// requestTools returns the tools a request of s sends with ts: those not
// deferred and load_tools, then the loaded ones in the order they were
// loaded. The same list is returned while nothing changes, so the
// request's fingerprint is computed once.
func (s *Session) requestTools(ts *toolset) []model.Tool {
	if len(ts.deferred) == 0 {
		return ts.model
	}
	lt := s.loaded()
	if lt == nil {
		return ts.model
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.ts == ts && lt.n == len(lt.names) {
		return lt.list
	}
	list := ts.model
	for _, n := range lt.names {
		if mt, ok := ts.deferred[n]; ok {
			if len(list) == len(ts.model) {
				list = slices.Clip(slices.Clone(ts.model))
			}
			list = append(list, mt)
		}
	}
	lt.ts, lt.n, lt.list = ts, len(lt.names), list
	return list
}

// checkLoaded refuses a call of a deferred tool that s has not loaded:
// the model has not seen its schema.
func (s *Session) checkLoaded(ts *toolset, call *tools.Call) *harness.ToolResult {
	if _, deferred := ts.deferred[call.Name]; !deferred {
		return nil
	}
	if lt := s.loaded(); lt != nil {
		lt.mu.Lock()
		loaded := slices.Contains(lt.names, call.Name)
		lt.mu.Unlock()
		if loaded {
			return nil
		}
	}
	return harness.ErrorResult(CodeNotLoaded,
		"%s is a deferred tool and is not loaded, so this call did not run. Load it first with load_tools {\"names\": [%q]}; "+
			"from your next step its schema is in your tool list, and you can call it.", call.Name, call.Name)
}

// loadRecord is the data of a load_tools record: the names it loaded.
type loadRecord struct {
	Names []string `json:"names"`
}

// loadTools loads the deferred tools of ts named names, and logs them.
func (s *Session) loadTools(ctx context.Context, call *tools.Call, ts *toolset, names []string) (*harness.ToolResult, error) {
	if len(names) == 0 {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "names is empty: name the deferred tools to load, from the list in load_tools' description"}
	}
	var unknown, whole []string
	for _, n := range names {
		if _, ok := ts.deferred[n]; ok {
			continue
		}
		if hasTool(ts, n) {
			whole = append(whole, n)
		} else {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 || len(whole) > 0 {
		var b strings.Builder
		b.WriteString("Nothing was loaded.")
		if len(unknown) > 0 {
			fmt.Fprintf(&b, " There is no deferred tool named %s.", quoteList(unknown))
		}
		if len(whole) > 0 {
			verb := "is"
			if len(whole) > 1 {
				verb = "are"
			}
			fmt.Fprintf(&b, " %s %s not deferred: already in your tool list, call it directly.", strings.ReplaceAll(quoteList(whole), " or ", " and "), verb)
		}
		fmt.Fprintf(&b, " The deferred tools are: %s.", strings.Join(deferredNames(ts), ", "))
		return nil, &harness.Error{Code: harness.CodeUnknownTool, Message: b.String()}
	}
	lt := s.loaded()
	if lt == nil {
		return nil, errClosed()
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	var fresh, already []string
	for _, n := range names {
		switch {
		case slices.Contains(lt.names, n), slices.Contains(fresh, n):
			if !slices.Contains(already, n) {
				already = append(already, n)
			}
		default:
			fresh = append(fresh, n)
		}
	}
	if len(fresh) > 0 {
		// Logged first: what the log does not hold is not loaded, so a
		// resumed session sends what this one will.
		if err := s.record(ctx, call, loadedRecord, loadRecord{Names: fresh}); err != nil {
			return nil, fmt.Errorf("logging the loaded tools failed, so none was loaded: %w", err)
		}
		lt.names = append(lt.names, fresh...)
	}
	var b strings.Builder
	if len(fresh) > 0 {
		fmt.Fprintf(&b, "Loaded %s: from your next step their schemas are in your tool list.", strings.Join(fresh, ", "))
	}
	if len(already) > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "Already loaded: %s.", strings.Join(already, ", "))
	}
	return &harness.ToolResult{Content: []harness.Block{harness.TextBlock(b.String())}}, nil
}

// deferredNames lists ts's deferred tools in their order.
func deferredNames(ts *toolset) []string {
	var names []string
	for _, sp := range ts.reg.Specs() {
		if _, ok := ts.deferred[sp.Name]; ok {
			names = append(names, sp.Name)
		}
	}
	return names
}

// hasTool reports whether ts has a tool named name.
func hasTool(ts *toolset, name string) bool {
	for _, sp := range ts.reg.Specs() {
		if sp.Name == name {
			return true
		}
	}
	return false
}

// quoteList quotes names: "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// restoreLoaded takes the loaded tools of a resumed session from its
// log, in the order they were loaded.
func (s *Session) restoreLoaded(events []session.Event) {
	var names []string
	for _, e := range events {
		r, ok := e.Data.(*session.ToolRecord)
		if !ok || r.Tool != loadToolsName || r.Name != loadedRecord {
			continue
		}
		var rec loadRecord
		if json.Unmarshal(r.Data, &rec) != nil {
			s.logger.Warn("a load_tools record of the log is not valid; its tools are not loaded", "call", r.CallID)
			continue
		}
		for _, n := range rec.Names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	if lt := s.loaded(); lt != nil {
		lt.mu.Lock()
		lt.names = names
		lt.mu.Unlock()
	}
}
