package sessiontest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
)

// searchCorpus creates sessions in several workspaces, oldest first:
//
//	a1 /home/u/proj      text with every kind of escaped character
//	a2 /home/u/proj/sub  "needle in sub"
//	b1 /home/u/project   a sibling directory with a common prefix
//	c1 /elsewhere
func searchCorpus(t *testing.T, s session.Store) {
	t.Helper()
	mk := func(id, cwd string, payloads ...session.Payload) {
		log, err := s.Create(ctx(), session.Header{ID: id, Cwd: cwd})
		require.NoError(t, err)
		_, err = log.Append(ctx(), payloads...)
		require.NoError(t, err)
		require.NoError(t, log.Close())
		time.Sleep(5 * time.Millisecond) // distinct update times
	}
	user := func(s string) *session.UserMessage {
		return &session.UserMessage{Content: []harness.Block{harness.TextBlock(s)}}
	}
	mk("a1", "/home/u/proj",
		&session.SystemPrompt{Text: "You are the search corpus."},
		user("fix the \"quoted\" bug\n\tnow — ünïcode ✓ in C:\\path\\file, <html> & line\u2028sep, ansi \x1b[31mred"),
		&session.AssistantMessage{Step: 1, Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: "let me grep"},
			harness.TextBlock("Searching."),
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"grep -n \"needle\" src/*.go"}`}},
		}},
		&session.ToolStarted{Step: 1, CallID: "c1", Name: "bash"},
		&session.ToolFinished{Step: 1, CallID: "c1", Name: "bash", Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("line one\nfound needle at src/x.go:12\n")}}},
		&session.Reminded{Reminder: harness.Reminder{Source: "guard", Text: "you grep a lot"}},
		&session.TurnEnded{Reason: session.ReasonCompleted},
	)
	mk("a2", "/home/u/proj/sub", user("needle in sub"))
	mk("b1", "/home/u/project", user("needle in sibling"))
	mk("c1", "/elsewhere", user("needle elsewhere"))
}

type hit struct {
	ID  string
	Seq int64
}

func hits(ms []search.Match) []hit {
	out := make([]hit, len(ms))
	for i, m := range ms {
		out[i] = hit{m.Session.Header.ID, m.Seq}
	}
	return out
}

func testSearch(t *testing.T, s session.Store) {
	searchCorpus(t, s)
	find := func(opts search.Options) []search.Match {
		t.Helper()
		if opts.Workspace == "" && !opts.AllWorkspaces {
			opts.Workspace = "/home/u/proj"
		}
		ms, err := search.Search(ctx(), s, opts)
		require.NoError(t, err)
		for _, m := range ms {
			require.True(t, m.MatchStart <= m.MatchEnd && m.MatchEnd <= len(m.Snippet), "match offsets in the snippet")
		}
		return ms
	}

	t.Run("WorkspaceNewestFirst", func(t *testing.T) {
		ms := find(search.Options{Query: "needle"})
		// a1: the call (seq 3) and its result (seq 5); not the sibling
		// /home/u/project nor /elsewhere.
		assert.Equal(t, []hit{{"a2", 1}, {"a1", 3}, {"a1", 5}}, hits(ms))
		m := ms[0]
		assert.Equal(t, "needle in sub", m.Snippet)
		assert.Equal(t, "needle", m.Snippet[m.MatchStart:m.MatchEnd])
		assert.Equal(t, session.TypeUser, m.Type)
		assert.Equal(t, harness.RoleUser, m.Role)
		assert.Equal(t, "/home/u/proj/sub", m.Session.Header.Cwd)
		assert.Equal(t, "needle in sub", m.Session.Title)
		assert.False(t, m.Time.IsZero())
		assert.False(t, m.Session.Updated.IsZero())

		call, res := ms[1], ms[2]
		assert.Equal(t, session.TypeAssistant, call.Type)
		assert.Equal(t, harness.RoleAssistant, call.Role)
		assert.Equal(t, "bash", call.Tool)
		assert.Equal(t, session.TypeToolResult, res.Type)
		assert.Equal(t, harness.RoleTool, res.Role)
		assert.Equal(t, "bash", res.Tool)
		assert.Equal(t, "line one\nfound needle at src/x.go:12\n", res.Snippet, "decoded, not JSON-escaped")
		assert.True(t, strings.HasPrefix(ms[1].Session.Title, `fix the "quoted" bug`), "title %q", ms[1].Session.Title)
	})

	t.Run("OtherWorkspacesOnlyWhenEnabled", func(t *testing.T) {
		for _, ws := range []string{"/home/u/proj", "/home/u/proj/", "/home/u/proj/sub"} {
			for _, m := range find(search.Options{Query: "needle", Workspace: ws}) {
				assert.True(t, session.Below(m.Session.Header.Cwd, ws), "%s is in workspace %s", m.Session.Header.Cwd, ws)
			}
		}
		assert.Equal(t, []hit{{"a2", 1}}, hits(find(search.Options{Query: "needle", Workspace: "/home/u/proj/sub"})))
		assert.Equal(t, []hit{{"b1", 1}}, hits(find(search.Options{Query: "needle", Workspace: "/home/u/project"})))
		all := find(search.Options{Query: "needle", AllWorkspaces: true})
		assert.Equal(t, []hit{{"c1", 1}, {"b1", 1}, {"a2", 1}, {"a1", 3}, {"a1", 5}}, hits(all))
	})

	t.Run("EscapedText", func(t *testing.T) {
		for _, q := range []string{
			`fix the "quoted" bug`,
			"bug\n\tnow",
			`C:\path\file`,
			"ünïcode ✓",
			"— ü",
			"<html> & line",
			"line\u2028sep",
			"\x1b[31mred",
			`grep -n "needle" src/*.go`,     // a decoded argument value
			`"command":"grep -n \"needle\"`, // the arguments as the model wrote them
		} {
			ms := find(search.Options{Query: q})
			if assert.Len(t, ms, 1, "query %q", q) {
				m := ms[0]
				assert.Equal(t, q, m.Snippet[m.MatchStart:m.MatchEnd], "query %q", q)
			}
		}
		assert.Empty(t, find(search.Options{Query: `\"quoted\"`}), "the escaped form is not the text")
		assert.Empty(t, find(search.Options{Query: `\n\tnow`}))
		assert.Empty(t, find(search.Options{Query: "seq"}), "envelope fields are not text")
	})

	t.Run("Regex", func(t *testing.T) {
		ms := find(search.Options{Query: `need(le|ful) at src/\w+\.go:\d+`, Regex: true})
		assert.Equal(t, []hit{{"a1", 5}}, hits(ms))
		assert.Equal(t, "needle at src/x.go:12", ms[0].Snippet[ms[0].MatchStart:ms[0].MatchEnd])
		assert.Equal(t, []hit{{"a2", 1}}, hits(find(search.Options{Query: `(?i)NEEDLE in SUB`, Regex: true})))
		assert.Equal(t, []hit{{"a1", 2}}, hits(find(search.Options{Query: `"quoted" bug\s+now`, Regex: true})))
		assert.Equal(t, []hit{{"a1", 2}}, hits(find(search.Options{Query: `ünï\w*`, Regex: true})))
		assert.Equal(t, []hit{{"a2", 1}, {"a1", 2}}, hits(find(search.Options{Query: `sub$|✓`, Regex: true})))
		assert.Equal(t, []hit{{"a1", 3}}, hits(find(search.Options{Query: `^let me`, Regex: true})), "reasoning is searched")
	})

	t.Run("LimitAndPerSession", func(t *testing.T) {
		assert.Equal(t, []hit{{"a2", 1}}, hits(find(search.Options{Query: "needle", Limit: 1})))
		assert.Equal(t, []hit{{"a2", 1}, {"a1", 3}}, hits(find(search.Options{Query: "needle", Limit: 2})))
		assert.Equal(t, []hit{{"a2", 1}, {"a1", 3}}, hits(find(search.Options{Query: "needle", PerSession: 1})))
		assert.Equal(t, []hit{{"a2", 1}, {"a1", 3}, {"a1", 5}}, hits(find(search.Options{Query: "needle", Parallel: 1})))
	})

	t.Run("ExcludeAndTypes", func(t *testing.T) {
		assert.Equal(t, []hit{{"a1", 3}, {"a1", 5}}, hits(find(search.Options{Query: "needle", Exclude: []string{"a2"}})))
		assert.Empty(t, find(search.Options{Query: "search corpus"}), "system prompts are not searched by default")
		ms := find(search.Options{Query: "search corpus", Types: []string{session.TypeSystem}})
		assert.Equal(t, []hit{{"a1", 1}}, hits(ms))
		assert.Equal(t, []hit{{"a1", 6}}, hits(find(search.Options{Query: "grep a lot"})), "reminders are searched")
		assert.Equal(t, []hit{{"a1", 5}}, hits(find(search.Options{Query: "needle", Types: []string{session.TypeToolResult}})))
	})

	t.Run("Snippet", func(t *testing.T) {
		ms := find(search.Options{Query: "C:", Context: 7})
		require.Len(t, ms, 1)
		m := ms[0]
		assert.Equal(t, "…✓ in C:\\path\\f…", m.Snippet)
		ms = find(search.Options{Query: "C:", Context: 6})
		assert.Equal(t, "… in C:\\path\\…", ms[0].Snippet, "cut on character boundaries")
		assert.Equal(t, "C:", m.Snippet[m.MatchStart:m.MatchEnd])
	})

	t.Run("InvalidQueries", func(t *testing.T) {
		for _, opts := range []search.Options{
			{Workspace: "/w"},
			{Query: "x"},
			{Query: "a(", Regex: true, Workspace: "/w"},
			{Query: "a*", Regex: true, Workspace: "/w"},
		} {
			_, err := search.Search(ctx(), s, opts)
			assert.ErrorIs(t, err, harness.CodeInvalidQuery, "%+v", opts)
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx())
		cancel()
		ms, err := search.Search(c, s, search.Options{Query: "needle", AllWorkspaces: true})
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, ms)
		assert.True(t, errors.Is(err, context.Canceled))
	})
}
