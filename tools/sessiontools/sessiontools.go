package sessiontools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
	"github.com/go-harness/harness/tools"
)

// Config configures the session tools. The zero value is the default:
// the tools reach the sessions of the calling session's workspace only,
// with the search limits below. A negative limit, or a SearchLimit above
// a MaxSearchLimit set, is an error, which the tools' Validate method
// reports (so tools.NewRegistry refuses them).
type Config struct {
	// AllWorkspaces lets the tools reach the sessions of every workspace,
	// not only those of the calling session's working directory and
	// below. Other workspaces can hold other projects' code and secrets:
	// enable it only when the user asked for it.
	AllWorkspaces bool
	// SearchLimit is how many matches session_search returns when the
	// model gives no limit (20; at most MaxSearchLimit).
	SearchLimit int
	// MaxSearchLimit is the most matches session_search returns, whatever
	// the model asks (100).
	MaxSearchLimit int
	// PerSession is the most matches one session contributes to a search,
	// so one long session does not crowd out the others (5).
	PerSession int
}

// Defaults of Config.
const (
	defaultSearchLimit = 20
	maxSearchLimit     = 100
	defaultPerSession  = 5
)

// config is a Config with its defaults filled in.
type config struct {
	allWorkspaces bool
	defaultLimit  int
	maxLimit      int
	perSession    int
	err           error // invalid values, reported by Validate
}

// resolve fills in the defaults of cfg and checks it.
func (cfg Config) resolve() config {
	c := config{allWorkspaces: cfg.AllWorkspaces, defaultLimit: defaultSearchLimit, maxLimit: maxSearchLimit, perSession: defaultPerSession}
	def, max, per := cfg.SearchLimit, cfg.MaxSearchLimit, cfg.PerSession
	if def < 0 || max < 0 || per < 0 || (def > 0 && max > 0 && def > max) {
		c.err = toolexec.OptionError("sessiontools: Config%+v: limits must not be negative and SearchLimit must not exceed MaxSearchLimit (zero keeps a default)", cfg)
		return c
	}
	if def > 0 {
		c.defaultLimit = def
	}
	if max > 0 {
		c.maxLimit = max
	}
	if per > 0 {
		c.perSession = per
	}
	// A default the caller did not set follows a lower maximum.
	c.defaultLimit = min(c.defaultLimit, c.maxLimit)
	return c
}

// Tools returns session_search and session_read over store, in that
// order. They are one capability: session_search finds an event by its
// session id and number (seq), and session_read opens it, so a host
// offers both or neither.
func Tools(store session.Store, cfg Config) []tools.Tool {
	c := cfg.resolve()
	return []tools.Tool{searchTool(store, c), readTool(store, c)}
}

// workspaceOf returns the workspace the call is confined to, or an error
// when the calling session has none.
func (c *config) workspaceOf(call *tools.Call, tool string) (string, error) {
	if c.allWorkspaces {
		return "", nil
	}
	if call.Env == nil || call.Env.Cwd == "" {
		return "", &harness.Error{Code: CodeNoWorkspace, Message: fmt.Sprintf(
			"%s reaches only the sessions of the current workspace, and this session has no working directory.", tool)}
	}
	return call.Env.Cwd, nil
}

// searchInput is the arguments of session_search.
type searchInput struct {
	Query string `json:"query" jsonschema:"Text to find; literal unless regex."`
	Regex bool   `json:"regex,omitempty" jsonschema:"Query is an RE2 regular expression ((?i) ignores case)."`
	Limit int    `json:"limit,omitempty" jsonschema:"Most matches (default 20)."`
}

// searchTool returns the session_search tool: literal or regex search over
// the earlier sessions of the calling session's workspace (its working
// directory and the directories below it), newest first, the calling
// session left out.
func searchTool(store session.Store, c config) tools.Tool {
	scope := "of this workspace (this working directory and below)"
	if c.allWorkspaces {
		scope = "of every workspace"
	}
	spec := tools.Spec{
		Name: "session_search",
		Description: "Search earlier agent sessions " + scope + " for text: what was asked, answered, run and printed. " +
			"Matches come newest session first with session id and event number (seq), for session_read. The current session is not searched.",
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		Render:          harness.RenderGeneric,
	}
	return toolexec.Checked(tools.Define(spec, func(ctx context.Context, call *tools.Call, in searchInput) (*harness.ToolResult, error) {
		ws, err := c.workspaceOf(call, "session_search")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(in.Query) == "" {
			return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "The query is empty. Give the text (or, with regex=true, the pattern) to find."}
		}
		if in.Limit < 0 {
			return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("limit must be positive, got %d.", in.Limit)}
		}
		limit := in.Limit
		if limit == 0 {
			limit = c.defaultLimit
		}
		limit = min(limit, c.maxLimit)
		var exclude []string
		if call.Env != nil && call.Env.SessionID != "" {
			exclude = []string{call.Env.SessionID}
		}
		// One more than the limit tells whether there were more.
		ms, err := search.Search(ctx, store, search.Options{
			Query: in.Query, Regex: in.Regex, Workspace: ws, AllWorkspaces: c.allWorkspaces,
			Exclude: exclude, Limit: limit + 1, PerSession: c.perSession,
		})
		if errors.Is(err, harness.CodeInvalidQuery) {
			msg := strings.TrimPrefix(err.Error(), harness.CodeInvalidQuery.Error()+": ")
			return nil, &harness.Error{Code: harness.CodeInvalidArguments, Err: err, Message: "The query is not usable: " + msg + "."}
		}
		if err != nil {
			return nil, err
		}
		if pol := policyOf(call); pol != nil {
			ms = filterMatches(ctx, store, pol, ms)
		}
		more := len(ms) > limit
		ms = ms[:min(len(ms), limit)]
		text := renderMatches(in, ws, ms, more, c.perSession)
		return &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock(text)},
			Render:  &harness.Render{Kind: harness.RenderGeneric, Title: fmt.Sprintf("session_search %q: %d matches", in.Query, len(ms)), Text: text},
		}, nil
	}), c.err)
}

func renderMatches(in searchInput, ws string, ms []search.Match, more bool, perSession int) string {
	var b strings.Builder
	where := "earlier sessions of " + ws
	if ws == "" {
		where = "earlier sessions of every workspace"
	}
	kind := "text"
	if in.Regex {
		kind = "pattern"
	}
	if len(ms) == 0 {
		fmt.Fprintf(&b, "No matches for the %s %q in %s. The current session is not searched.", kind, in.Query, where)
		return b.String()
	}
	sessions := 0
	for i, m := range ms {
		if i == 0 || m.Session.Header.ID != ms[i-1].Session.Header.ID {
			sessions++
		}
	}
	fmt.Fprintf(&b, "%s for the %s %q in %s of %s, newest first (at most %d per session).\n",
		units.Plural(len(ms), "match", "matches"), kind, in.Query, units.Plural(sessions, "session", "sessions"),
		strings.TrimPrefix(where, "earlier sessions of "), perSession)
	for i, m := range ms {
		if i == 0 || m.Session.Header.ID != ms[i-1].Session.Header.ID {
			in := m.Session
			fmt.Fprintf(&b, "\nsession %s — cwd %s, updated %s", in.Header.ID, in.Header.Cwd, in.Updated.UTC().Format("2006-01-02 15:04 UTC"))
			if in.Title != "" {
				fmt.Fprintf(&b, ", started with %q", in.Title)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  seq %d %s: %s\n", m.Seq, who(m.Type, m.Role, m.Tool), indent(m.Snippet, "    "))
	}
	if more {
		b.WriteString("\nThere are more matches: narrow the query or raise the limit.\n")
	}
	b.WriteString("\nRead around a match with session_read(session_id, seq).")
	return b.String()
}

// who describes the source of an event's text.
func who(typ string, role harness.Role, tool string) string {
	switch typ {
	case session.TypeToolResult:
		return "tool result of " + tool
	case session.TypeAssistant:
		if tool != "" {
			return "assistant, call to " + tool
		}
		return "assistant"
	case session.TypeUser:
		return "user"
	case session.TypeReminder:
		return "reminder"
	case session.TypeSystem:
		return "system prompt"
	}
	if role != "" {
		return typ + " (" + string(role) + ")"
	}
	return typ
}

// indent puts prefix before every line of s but the first.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// readInput is the arguments of session_read.
type readInput struct {
	SessionID string `json:"session_id" jsonschema:"Session id from session_search."`
	Seq       *int64 `json:"seq,omitempty" jsonschema:"Event number from session_search; omit to read from the start."`
	Before    *int   `json:"before,omitempty" jsonschema:"Events before seq (default 3)."`
	After     *int   `json:"after,omitempty" jsonschema:"Events after seq (default 6; 20 from the start)."`
}

// Defaults and bounds of session_read.
const (
	defaultBefore      = 3
	defaultAfter       = 6
	defaultFromStart   = 20
	maxEvents          = 200
	summaryTextBytes   = 600
	summaryResultBytes = 400
	summaryArgsBytes   = 300
)

// readTool returns the session_read tool: the events of an earlier session of
// the calling session's workspace around an event number, the event itself
// in full and its neighbours summarized.
func readTool(store session.Store, c config) tools.Tool {
	scope := "of this workspace"
	if c.allWorkspaces {
		scope = "of any workspace"
	}
	spec := tools.Spec{
		Name:            "session_read",
		Description:     "Read part of an earlier agent session " + scope + ": the event at seq in full, the events around it summarized.",
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		Render:          harness.RenderGeneric,
	}
	return toolexec.Checked(tools.Define(spec, func(ctx context.Context, call *tools.Call, in readInput) (*harness.ToolResult, error) {
		ws, err := c.workspaceOf(call, "session_read")
		if err != nil {
			return nil, err
		}
		if in.SessionID == "" {
			return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "session_id is empty. Give a session id from session_search."}
		}
		for name, v := range map[string]*int{"before": in.Before, "after": in.After} {
			if v != nil && *v < 0 {
				return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("%s must not be negative, got %d.", name, *v)}
			}
		}
		tr, err := store.Load(ctx, in.SessionID)
		switch {
		case errors.Is(err, harness.CodeInvalidID):
			return nil, &harness.Error{Code: harness.CodeInvalidArguments, Err: err,
				Message: fmt.Sprintf("%q is not a session id. Session ids come from session_search.", in.SessionID)}
		case errors.Is(err, harness.CodeNotFound):
			return nil, &harness.Error{Code: harness.CodeNotFound, Err: err,
				Message: fmt.Sprintf("There is no session %s. Find session ids with session_search.", in.SessionID)}
		case err != nil:
			return nil, err
		}
		pol := policyOf(call)
		if hiddenSession(ctx, pol, tr.Header) {
			return nil, &harness.Error{Code: harness.CodeNotFound,
				Message: fmt.Sprintf("There is no session %s. Find session ids with session_search.", in.SessionID)}
		}
		if ws != "" && !session.Below(tr.Header.Cwd, ws) {
			return nil, &harness.Error{Code: CodeOutsideWorkspace, Message: fmt.Sprintf(
				"Session %s belongs to another workspace; session_read reads only sessions of this workspace (%s and the directories below it).",
				in.SessionID, ws)}
		}
		text, err := renderSession(tr, in, withheldEvents(ctx, pol, tr))
		if err != nil {
			return nil, err
		}
		return &harness.ToolResult{
			Content: []harness.Block{harness.TextBlock(text)},
			Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "session_read " + in.SessionID, Text: text},
		}, nil
	}), c.err)
}

// visible reports whether session_read shows an event: the conversation
// and the ends of turns, not the bookkeeping around them.
func visible(e session.Event) bool {
	switch e.Data.(type) {
	case *session.ModelRequest, *session.ToolStarted, *session.ModelRetry, *session.ModelFallback, *session.ToolRecord, *session.PermissionDecided, *session.ApprovalRequested:
		return false
	}
	return true
}

func renderSession(tr *session.Transcript, in readInput, withheld map[int64]bool) (string, error) {
	var evs []session.Event
	for _, e := range tr.Events {
		if visible(e) {
			evs = append(evs, e)
		}
	}
	h := tr.Header
	var b strings.Builder
	last := int64(0)
	if n := len(tr.Events); n > 0 {
		last = tr.Events[n-1].Seq
	}
	fmt.Fprintf(&b, "session %s — cwd %s, created %s, %d events (seq 1 to %d)\n", h.ID, h.Cwd, h.Created.UTC().Format("2006-01-02 15:04 UTC"), len(tr.Events), last)
	if len(evs) == 0 {
		b.WriteString("\nThe session has no messages.")
		return b.String(), nil
	}
	focus := -1
	from, to := 0, 0
	if in.Seq != nil {
		seq := *in.Seq
		if seq < 1 || seq > last {
			return "", &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(
				"seq %d is outside session %s, whose events are numbered 1 to %d.", seq, h.ID, last)}
		}
		// The event itself, or the next shown one when it is bookkeeping.
		focus = len(evs) - 1
		for i, e := range evs {
			if e.Seq >= seq {
				focus = i
				break
			}
		}
		before, after := defaultBefore, defaultAfter
		if in.Before != nil {
			before = *in.Before
		}
		if in.After != nil {
			after = *in.After
		}
		from, to = max(0, focus-min(before, maxEvents)), min(len(evs), focus+1+min(after, maxEvents))
	} else {
		after := defaultFromStart
		if in.After != nil {
			after = *in.After
		}
		to = min(len(evs), max(1, min(after, maxEvents)))
	}
	if from > 0 {
		fmt.Fprintf(&b, "… %d earlier events (from seq %d)\n", from, evs[0].Seq)
	}
	for i := from; i < to; i++ {
		if withheld[evs[i].Seq] {
			fmt.Fprintf(&b, "\nseq %d %s\n", evs[i].Seq, withheldText)
			continue
		}
		renderEvent(&b, evs[i], i == focus)
	}
	if to < len(evs) {
		fmt.Fprintf(&b, "… %d later events; continue with session_read(session_id=%q, seq=%d, before=0)\n", len(evs)-to, h.ID, evs[to].Seq)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// renderEvent writes one event: in full when it is the focus, its text
// cut otherwise.
func renderEvent(b *strings.Builder, e session.Event, full bool) {
	cut := func(s string, n int) string {
		if full || len(s) <= n {
			return s
		}
		p := textcut.Prefix(s, n)
		return fmt.Sprintf("%s… (%d more bytes)", p, len(s)-len(p))
	}
	mark := ""
	if full {
		mark = " ◀"
	}
	line := func(format string, args ...any) {
		fmt.Fprintf(b, "\nseq %d%s ", e.Seq, mark)
		fmt.Fprintf(b, format, args...)
		b.WriteString("\n")
	}
	body := func(s string) {
		if s == "" {
			return
		}
		b.WriteString("    ")
		b.WriteString(indent(s, "    "))
		b.WriteString("\n")
	}
	switch p := e.Data.(type) {
	case *session.UserMessage:
		line("user:")
		for _, c := range p.Content {
			switch {
			case c.Image != nil:
				body(fmt.Sprintf("[image %s %dx%d]", c.Image.Name, c.Image.Width, c.Image.Height))
			default:
				body(cut(c.Text, summaryTextBytes))
			}
		}
	case *session.AssistantMessage:
		line("assistant (step %d):", p.Step)
		for _, blk := range p.Content {
			switch blk.Type {
			case harness.BlockReasoning:
				body("(reasoning) " + cut(blk.Text, summaryTextBytes))
			case harness.BlockToolCall:
				if blk.ToolCall != nil {
					body(fmt.Sprintf("→ call %s %s", blk.ToolCall.Name, cut(blk.ToolCall.Arguments, summaryArgsBytes)))
				}
			case harness.BlockImage:
				body("[image]")
			default:
				body(cut(blk.Text, summaryTextBytes))
			}
		}
	case *session.ToolFinished:
		status := ""
		if p.Result.IsError {
			status = fmt.Sprintf(" (error %s)", p.Result.Code)
		}
		line("tool result of %s%s:", p.Name, status)
		for _, c := range p.Result.Content {
			if c.Image != nil {
				body(fmt.Sprintf("[image %s]", c.Image.Name))
				continue
			}
			body(cut(c.Text, summaryResultBytes))
		}
	case *session.Reminded:
		line("reminder from %s:", p.Source)
		body(cut(p.Text, summaryTextBytes))
	case *session.SystemPrompt:
		line("system prompt (%d bytes)", len(p.Text))
		if full {
			body(p.Text)
		}
	case *session.TurnEnded:
		msg := ""
		if p.Error != nil {
			msg = ": " + cut(p.Error.Message, summaryTextBytes)
		}
		line("turn ended (%s, %d steps)%s", p.Reason, p.Steps, msg)
	case *session.Unknown:
		line("event of type %q, unknown to this build", p.Type)
	default:
		line("%s", e.Type())
	}
}
