package search

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/session"
)

// Options say what Search looks for and where.
type Options struct {
	// Query is literal text, or a regular expression (RE2 syntax, as
	// package regexp) when Regex is set. It is matched against text as the
	// model saw it: message text, reasoning, tool call arguments (as sent
	// and with their string values decoded), tool results and reminders.
	// A match lies within one piece of text.
	Query string
	Regex bool
	// Workspace keeps sessions whose cwd is this directory or a directory
	// below it ("/a/bc" is not below "/a/b"). It is required unless
	// AllWorkspaces is set.
	Workspace string
	// AllWorkspaces searches the sessions of every workspace; Workspace is
	// then ignored. Sessions of other workspaces can hold other projects'
	// code and secrets: enable this only when the user asked for it.
	AllWorkspaces bool
	// Exclude lists session ids not to search, such as the current one.
	Exclude []string
	// Types lists the event types searched; nil means the model-visible
	// conversation: TypeUser, TypeAssistant, TypeToolResult, TypeReminder.
	// TypeSystem adds system prompts; an unknown type searches every
	// string of its events.
	Types []string
	// Limit caps the number of matches; zero means 100.
	Limit int
	// PerSession, when positive, caps the matches of one session, so one
	// long session does not crowd out the others.
	PerSession int
	// Context is the number of bytes of text kept on each side of a match
	// in its snippet; zero means 80.
	Context int
	// Parallel bounds how many logs are scanned at once; zero means
	// GOMAXPROCS.
	Parallel int
}

// defaultLimit is the number of matches Search returns when
// Options.Limit is zero.
const defaultLimit = 100

// Match is an event that matched a search. A search reports one match per
// event, the first in the event's text.
type Match struct {
	// Session describes the session, title included.
	Session session.Info `json:"session"`
	// Seq, Type and Time identify the event.
	Seq  int64     `json:"seq"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Role is who the matching text is from: RoleUser, RoleAssistant or
	// RoleTool; "system" for a system prompt; empty for other events.
	Role harness.Role `json:"role,omitempty"`
	// Tool names the tool of a matching tool call or result.
	Tool string `json:"tool,omitempty"`
	// Snippet is the text around the match, decoded as the model saw it,
	// with "…" where it was cut.
	Snippet string `json:"snippet"`
	// MatchStart and MatchEnd are the byte offsets of the match in
	// Snippet.
	MatchStart int `json:"match_start"`
	MatchEnd   int `json:"match_end"`
}

// Searcher is implemented by stores that search their sessions
// themselves, such as a database with an index. Search uses it when a
// store has it; it scans the files of a session.NewJSONL store itself, and
// otherwise loads each session of the workspace.
type Searcher interface {
	Search(ctx context.Context, opts Options) ([]Match, error)
}

// A search query that is empty, a regular expression that does not
// compile or matches empty text, or one without a workspace fails with
// an error matching harness.CodeInvalidQuery.

// Search finds the events of a store's sessions whose text matches
// opts.Query, newest sessions first and, within a session, in log order,
// up to opts.Limit matches.
func Search(ctx context.Context, store session.Store, opts Options) ([]Match, error) {
	if s, ok := store.(Searcher); ok {
		return s.Search(ctx, opts)
	}
	m, err := compile(opts)
	if err != nil {
		return nil, err
	}
	if j, ok := store.(jsonlStore); ok {
		return searchJSONL(ctx, j, m)
	}
	ws := opts.Workspace
	if opts.AllWorkspaces {
		ws = ""
	}
	infos, err := store.List(ctx, session.ListOptions{Workspace: ws})
	if err != nil {
		return nil, err
	}
	infos = slices.DeleteFunc(infos, func(in session.Info) bool { return m.excluded(in.Header) })
	return m.run(ctx, len(infos), func(ctx context.Context, i int, ms *matchSink) error {
		tr, err := store.Load(ctx, infos[i].Header.ID)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil // gone or unreadable: nothing to find
		}
		for _, e := range tr.Events {
			if !m.types.has(e.Type()) {
				continue
			}
			if mt, ok := m.matchEvent(e); ok && ms.add(mt) {
				break
			}
		}
		for j := range ms.matches {
			ms.matches[j].Session = infos[i]
		}
		return nil
	})
}

// searcher is a compiled search.
type searcher struct {
	opts    Options
	literal string
	re      *regexp.Regexp
	pre     prefilter
	// also are prefilters every match passes too, checked on the
	// candidate lines of pre.
	also []prefilter
	// rawForm is the literal as Event.MarshalJSON encodes it, when the
	// fast path may look for it in raw string bytes.
	rawForm []byte
	// anchorOff is the offset in rawForm of the anchor of the literal's
	// prefilter.
	anchorOff int
	types     typeSet
	exclude   map[string]bool
	limit     int
	// maxLine, when positive, is the store's maximum line size: longer
	// lines are never matched, as loading skips them.
	maxLine int
	// mapMin, when positive, is the size from which a log is mapped into
	// memory rather than read.
	mapMin  int
	context int
}

// errInvalidQuery is the error of a query Search cannot run.
func errInvalidQuery() error {
	return &harness.Error{Code: harness.CodeInvalidQuery, Message: "search: invalid search query"}
}

func compile(opts Options) (*searcher, error) {
	if opts.Query == "" {
		return nil, fmt.Errorf("%w: the query is empty", errInvalidQuery())
	}
	if !utf8.ValidString(opts.Query) {
		return nil, fmt.Errorf("%w: the query is not valid UTF-8 text", errInvalidQuery())
	}
	if !opts.AllWorkspaces && opts.Workspace == "" {
		return nil, fmt.Errorf("%w: no workspace given (set Workspace, or AllWorkspaces to search every workspace)", errInvalidQuery())
	}
	s := &searcher{opts: opts, limit: opts.Limit, context: opts.Context, exclude: map[string]bool{}}
	if s.limit <= 0 {
		s.limit = defaultLimit
	}
	if s.context <= 0 {
		s.context = 80
	}
	for _, id := range opts.Exclude {
		s.exclude[id] = true
	}
	s.types = newTypeSet(opts.Types)
	if opts.Regex {
		re, err := regexp.Compile(opts.Query)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errInvalidQuery(), err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("%w: the pattern %q matches empty text, so it would match every event; make it match at least one character", errInvalidQuery(), opts.Query)
		}
		s.re = re
		s.pre, s.also = regexPrefilters(opts.Query)
	} else {
		s.literal = opts.Query
		s.pre = literalPrefilter(opts.Query)
		if len(s.literal) <= maxSnippetMatch && !strings.ContainsAny(s.literal, "\u2028\u2029") {
			s.rawForm = []byte(encodeString(s.literal))
			if a := anchorOf(s.literal); a != "" {
				s.anchorOff = len(encodeString(s.literal[:strings.Index(s.literal, a)]))
			}
		}
	}
	return s, nil
}

func (s *searcher) excluded(h session.Header) bool {
	if s.exclude[h.ID] {
		return true
	}
	return !s.opts.AllWorkspaces && !session.Below(h.Cwd, s.opts.Workspace)
}

// perSession is the most matches one session can contribute.
func (s *searcher) perSession() int {
	if s.opts.PerSession > 0 && s.opts.PerSession < s.limit {
		return s.opts.PerSession
	}
	return s.limit
}

// matchSink collects the matches of one session up to its cap.
type matchSink struct {
	matches []Match
	max     int
	// pieces is scratch space for the fast path.
	pieces []piece
}

// add keeps m and reports whether the session's cap is reached.
func (ms *matchSink) add(m Match) bool {
	ms.matches = append(ms.matches, m)
	return len(ms.matches) >= ms.max
}

// run scans n sessions, in order of preference, with bounded
// parallelism, and returns their matches in that order up to the limit.
// Once the sessions scanned so far in order hold enough matches, the
// scans still running are cancelled.
func (s *searcher) run(parent context.Context, n int, scan func(ctx context.Context, i int, ms *matchSink) error) ([]Match, error) {
	if err := parent.Err(); err != nil {
		return nil, err
	}
	par := s.opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	par = max(1, min(par, n))
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	type done struct {
		i       int
		matches []Match
		err     error
	}
	jobs := make(chan int)
	results := make(chan done, par)
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for i := range jobs {
				ms := &matchSink{max: s.perSession()}
				err := scan(ctx, i, ms)
				results <- done{i: i, matches: ms.matches, err: err}
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := range n {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()

	var out []Match
	pending := map[int][]Match{}
	next := 0
	var firstErr error
	for r := range results {
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
			}
			cancel()
			continue
		}
		pending[r.i] = r.matches
		for len(out) < s.limit {
			ms, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			out = append(out, ms[:min(len(ms), s.limit-len(out))]...)
			if len(out) >= s.limit {
				cancel() // later sessions cannot make it into the result
			}
		}
	}
	switch {
	case len(out) >= s.limit:
		return out, nil
	case parent.Err() != nil:
		return out, parent.Err()
	case firstErr != nil:
		return out, firstErr
	}
	return out, nil
}

// scanLines finds the candidate lines of buf, a run of complete log lines
// (the last may lack its newline), decodes them, and adds their matches
// to ms. It reports whether ms is full.
func (s *searcher) scanLines(buf []byte, ms *matchSink) bool {
	if f := s.pre.single(); f != nil && f.finder != nil {
		// Find the anchor, then look at the line around it.
		for pos := 0; pos < len(buf); {
			i := f.finder.Index(buf[pos:])
			if i < 0 {
				return false
			}
			at := pos + i
			start := lineStart(buf, pos, at)
			end := indexByteFrom(buf, at, '\n')
			line := buf[start:end]
			if s.types.lineMayHave(line) && s.alsoMayMatch(line) && s.matchCandidate(line, at-start, f, ms) {
				return true
			}
			pos = end + 1
		}
		return false
	}
	for pos := 0; pos < len(buf); {
		end := indexByteFrom(buf, pos, '\n')
		line := buf[pos:end]
		pos = end + 1
		if len(line) == 0 || !s.types.lineMayHave(line) || !s.pre.lineMayMatch(line) || !s.alsoMayMatch(line) {
			continue
		}
		if s.matchLine(line, ms) {
			return true
		}
	}
	return false
}

// matchCandidate matches a line whose first anchor of f is at anchorAt.
// The fast path checks the line exactly; other lines are decoded only
// when they hold an encoded form of the literal, or escapes that could
// hide one.
func (s *searcher) matchCandidate(line []byte, anchorAt int, f *litFilter, ms *matchSink) bool {
	if s.tooLong(line) {
		return false
	}
	if m, found, handled := s.fastMatchAt(line, anchorAt, &ms.pieces); handled {
		return found && ms.add(m)
	}
	return f.formsOrEscapes(line) && s.matchLine(line, ms)
}

// matchLine decodes one candidate line and matches it. It reports
// whether ms is full.
func (s *searcher) matchLine(line []byte, ms *matchSink) bool {
	if s.tooLong(line) {
		return false
	}
	if m, found, handled := s.fastMatchAt(line, -1, &ms.pieces); handled {
		return found && ms.add(m)
	}
	var e session.Event
	if json.Unmarshal(line, &e) != nil || !s.types.has(e.Type()) {
		return false
	}
	m, ok := s.matchEvent(e)
	return ok && ms.add(m)
}

// tooLong reports a line longer than the store reads.
func (s *searcher) tooLong(line []byte) bool { return s.maxLine > 0 && len(line) > s.maxLine }

// matchEvent matches the text of one event.
func (s *searcher) matchEvent(e session.Event) (Match, bool) {
	var out Match
	found := false
	eachText(e, func(t textPiece) bool {
		snip, ms, me, ok := s.snippetOf(t.text)
		if !ok {
			return true
		}
		out = Match{Seq: e.Seq, Type: e.Type(), Time: e.Time, Role: t.role, Tool: t.tool,
			Snippet: snip, MatchStart: ms, MatchEnd: me}
		found = true
		return false
	})
	return out, found
}

func (s *searcher) find(text string) (int, int, bool) {
	if s.re != nil {
		loc := s.re.FindStringIndex(text)
		if loc == nil {
			return 0, 0, false
		}
		return loc[0], loc[1], true
	}
	i := strings.Index(text, s.literal)
	if i < 0 {
		return 0, 0, false
	}
	return i, i + len(s.literal), true
}

// maxSnippetMatch bounds how much of a long match a snippet shows.
const maxSnippetMatch = 400

// snippet cuts text to the match and context bytes on each side, on UTF-8
// boundaries, and returns the snippet and the match's offsets in it.
func snippet(text string, start, end, context int) (string, int, int) {
	cutMatch := false
	if end-start > maxSnippetMatch {
		end = start + len(textcut.Prefix(text[start:], maxSnippetMatch))
		cutMatch = true
	}
	before := textcut.Suffix(text[:start], context)
	var after string
	if !cutMatch {
		after = textcut.Prefix(text[end:], context)
	}
	var b strings.Builder
	if len(before) < start {
		b.WriteString("…")
	}
	b.WriteString(before)
	ms := b.Len()
	b.WriteString(text[start:end])
	me := b.Len()
	b.WriteString(after)
	if end+len(after) < len(text) {
		b.WriteString("…")
	}
	return b.String(), ms, me
}

// textPiece is one piece of model-visible text of an event.
type textPiece struct {
	text string
	role harness.Role
	tool string
}

// eachText calls fn with the searchable text of an event, in order, until
// fn returns false.
func eachText(e session.Event, fn func(textPiece) bool) {
	switch p := e.Data.(type) {
	case *session.UserMessage:
		for _, c := range p.Content {
			if c.Text != "" && !fn(textPiece{text: c.Text, role: harness.RoleUser}) {
				return
			}
		}
	case *session.AssistantMessage:
		for _, b := range p.Content {
			switch {
			case b.Type == harness.BlockToolCall && b.ToolCall != nil:
				c := b.ToolCall
				if !fn(textPiece{text: c.Arguments, role: harness.RoleAssistant, tool: c.Name}) {
					return
				}
				// The string values of the arguments, decoded: what the
				// model wrote into a file, say.
				var v any
				if json.Unmarshal([]byte(c.Arguments), &v) == nil && !eachString(v, func(s string) bool {
					return fn(textPiece{text: s, role: harness.RoleAssistant, tool: c.Name})
				}) {
					return
				}
			case b.Text != "":
				if !fn(textPiece{text: b.Text, role: harness.RoleAssistant}) {
					return
				}
			}
		}
	case *session.ToolFinished:
		for _, c := range p.Result.Content {
			if c.Text != "" && !fn(textPiece{text: c.Text, role: harness.RoleTool, tool: p.Name}) {
				return
			}
		}
	case *session.Reminded:
		fn(textPiece{text: p.Text, role: harness.RoleUser})
	case *session.SystemPrompt:
		fn(textPiece{text: p.Text, role: "system"})
	case *session.ToolRecord:
		var v any
		if json.Unmarshal(p.Data, &v) == nil {
			eachString(v, func(s string) bool { return fn(textPiece{text: s, tool: p.Tool}) })
		}
	case *session.Unknown:
		var v any
		if json.Unmarshal(p.Data, &v) == nil {
			eachString(v, func(s string) bool { return fn(textPiece{text: s}) })
		}
	}
}

// eachString calls fn with every string in a decoded JSON value, in
// document order for arrays and in sorted key order for objects; it
// reports false when fn stopped it.
func eachString(v any, fn func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		for _, e := range x {
			if !eachString(e, fn) {
				return false
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !eachString(x[k], fn) {
				return false
			}
		}
	}
	return true
}

// typeSet is the set of event types a search looks at.
type typeSet map[string]bool

func newTypeSet(types []string) typeSet {
	if types == nil {
		types = []string{session.TypeUser, session.TypeAssistant, session.TypeToolResult, session.TypeReminder}
	}
	ts := typeSet{}
	for _, t := range types {
		ts[t] = true
	}
	return ts
}

func (ts typeSet) has(t string) bool { return ts[t] }

// lineMayHave reports whether a log line can be an event of a searched
// type, from the "type" field Event.MarshalJSON writes before the data;
// a line laid out otherwise may be anything.
func (ts typeSet) lineMayHave(line []byte) bool {
	head := line[:min(len(line), 160)]
	i := indexString(head, `"type":"`)
	if i < 0 {
		return true
	}
	rest := head[i+len(`"type":"`):]
	j := indexByteFrom(rest, 0, '"')
	if j == len(rest) {
		return true
	}
	return ts[string(rest[:j])]
}
