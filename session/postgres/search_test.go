package postgres_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
	"github.com/go-harness/harness/session/search"
)

// corpusWords are the pieces of corpus text: words a search looks for,
// and every character that JSON escapes or that a database might fold.
var corpusWords = []string{
	"needle", "Needle", "NEEDLE", "needles", "haystack", "naïve", "ünïcode", "✓", "日本語",
	`"quoted"`, `C:\path\file`, "<html>", "&amp;", "tab\there", "new\nline", "line\u2028sep",
	"nul\x00byte", "ansi \x1b[31mred", "100%", "under_score", "back\\slash", "grep -n", "func main()",
	"{\"nested\": \"json\"}", "  ", "a", "b", "x",
}

// corpusText returns random text of n words.
func corpusText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(corpusWords[r.IntN(len(corpusWords))])
	}
	return b.String()
}

// corpusPayloads returns a random conversation.
func corpusPayloads(r *rand.Rand) []session.Payload {
	ps := []session.Payload{&session.SystemPrompt{Text: "system " + corpusText(r, 3)}}
	for step := 1; step <= 1+r.IntN(4); step++ {
		ps = append(ps, &session.UserMessage{Content: []harness.Block{harness.TextBlock(corpusText(r, 1+r.IntN(12)))}})
		args, _ := json.Marshal(map[string]string{"command": corpusText(r, 3), "content": corpusText(r, 5)})
		call := &harness.ToolCall{ID: fmt.Sprintf("c%d", step), Name: []string{"bash", "write", "read"}[r.IntN(3)], Arguments: string(args)}
		ps = append(ps,
			&session.AssistantMessage{Step: step, Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: corpusText(r, 4)},
				harness.TextBlock(corpusText(r, 6)),
				{Type: harness.BlockToolCall, ToolCall: call},
			}},
			&session.ToolStarted{Step: step, CallID: call.ID, Name: call.Name},
			&session.ToolRecord{CallID: call.ID, Tool: call.Name, Name: "env", Data: json.RawMessage(`{"note":` + mustJSON(corpusText(r, 2)) + `}`)},
			&session.ToolFinished{Step: step, CallID: call.ID, Name: call.Name, Result: *harness.TextResult(corpusText(r, 1+r.IntN(20)))},
		)
		if r.IntN(3) == 0 {
			ps = append(ps, &session.Reminded{Reminder: harness.Reminder{Source: "guard", Text: corpusText(r, 4)}})
		}
		ps = append(ps, &session.TurnEnded{Reason: session.ReasonCompleted, Steps: 1})
	}
	return ps
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestSearchSameAsJSONL writes one random corpus to a JSONL store and to
// PostgreSQL and checks that every search answers the same on both:
// sessions, events, roles, tools, snippets and match offsets.
func TestSearchSameAsJSONL(t *testing.T) {
	pg := newStore(t, postgres.Config{})
	js := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	sessions := 24
	if os.Getenv("HARNESS_LONG_TESTS") != "" {
		sessions = 60
	}
	r := rand.New(rand.NewPCG(18, 18))
	cwds := []string{"/home/u/proj", "/home/u/proj/sub", "/home/u/project", "/home/u/proj/sub/deep", "/other", `/w/a\..`, "/"}
	for i := range sessions {
		h := session.Header{ID: fmt.Sprintf("s%02d", i), Cwd: cwds[r.IntN(len(cwds))], Created: time.Now()}
		ps := corpusPayloads(r)
		for _, st := range []session.Store{js, pg} {
			log, err := st.Create(ctx(), h)
			require.NoError(t, err)
			_, err = log.Append(ctx(), ps...)
			require.NoError(t, err)
			require.NoError(t, log.Close())
		}
		// Distinct update times on the file system's clock too.
		time.Sleep(8 * time.Millisecond)
	}

	queries := []search.Options{
		{Query: "needle"},
		{Query: "Needle"},
		{Query: "needle", AllWorkspaces: true},
		{Query: "needle", Workspace: "/home/u/proj/sub"},
		{Query: "needle", Workspace: "/"},
		{Query: "needle", Workspace: `/w/a\..`},
		{Query: "needle", Workspace: "/home/u/proj/"},
		{Query: "needle", Limit: 7},
		{Query: "needle", PerSession: 1, AllWorkspaces: true},
		{Query: "needle", Exclude: []string{"s03", "s05"}, AllWorkspaces: true},
		{Query: "needle", Types: []string{session.TypeToolResult}},
		{Query: "system", Types: []string{session.TypeSystem}, AllWorkspaces: true},
		{Query: "needle", Types: []string{"record", "from_the_future"}, AllWorkspaces: true},
		{Query: `"quoted"`, AllWorkspaces: true},
		{Query: `C:\path`, AllWorkspaces: true},
		{Query: "<html>", AllWorkspaces: true},
		{Query: "tab\there", AllWorkspaces: true},
		{Query: "new\nline", AllWorkspaces: true},
		{Query: "line\u2028sep", AllWorkspaces: true},
		{Query: "nul\x00byte", AllWorkspaces: true},
		{Query: "\x1b[31m", AllWorkspaces: true},
		{Query: "100%", AllWorkspaces: true},
		{Query: "under_score", AllWorkspaces: true},
		{Query: `back\slash`, AllWorkspaces: true},
		{Query: "ünïcode ✓", AllWorkspaces: true},
		{Query: "日本", AllWorkspaces: true, Context: 3},
		{Query: `{"nested"`, AllWorkspaces: true},
		{Query: "nested", AllWorkspaces: true},
		{Query: "command", AllWorkspaces: true},
		{Query: "x", AllWorkspaces: true, Context: 5},
		{Query: "not in the corpus", AllWorkspaces: true},
		{Query: `need(le|les)\b`, Regex: true, AllWorkspaces: true},
		{Query: `(?i)NEEDLE`, Regex: true},
		{Query: `^\S+ \S+$`, Regex: true, AllWorkspaces: true},
		{Query: `\d+%`, Regex: true, AllWorkspaces: true},
		{Query: `naïve|日本語`, Regex: true, AllWorkspaces: true, Limit: 500},
		// Regular expressions whose required literals become an SQL
		// prefilter: exact and case-folded, alternatives, several sets,
		// characters that LIKE and PostgreSQL's regular expressions treat
		// specially, NUL, escapes, and literals split across pieces of
		// text.
		{Query: `needle\d*`, Regex: true, AllWorkspaces: true, Limit: 500},
		{Query: `(?i)nEEdle.s?`, Regex: true, AllWorkspaces: true, Limit: 500},
		{Query: `(?i)quoted|(?i)SYSTEM`, Regex: true, AllWorkspaces: true, Types: []string{session.TypeSystem, session.TypeUser}},
		{Query: `tab\there|new\nline`, Regex: true, AllWorkspaces: true},
		{Query: `100%.*under_score`, Regex: true, AllWorkspaces: true},
		{Query: `100%|under_score`, Regex: true, AllWorkspaces: true},
		{Query: `C:\\path|back\\slash`, Regex: true, AllWorkspaces: true},
		{Query: `<html>\s*`, Regex: true, AllWorkspaces: true},
		{Query: `\{"nested"`, Regex: true, AllWorkspaces: true},
		{Query: `"quoted"|\x1b\[31m`, Regex: true, AllWorkspaces: true},
		{Query: `nul\x00byte`, Regex: true, AllWorkspaces: true},
		{Query: `line\x{2028}sep`, Regex: true, AllWorkspaces: true},
		{Query: `(?i)ÜNÏCODE ✓`, Regex: true, AllWorkspaces: true},
		{Query: `nee.le`, Regex: true, AllWorkspaces: true, Limit: 500},
		{Query: `comm[a-z]nd\b.*\(`, Regex: true, AllWorkspaces: true},
		{Query: `(?i)K\w+ S\w+`, Regex: true, AllWorkspaces: true},
		{Query: `x\by|not in the corpus`, Regex: true, AllWorkspaces: true},
	}
	total := 0
	for _, q := range queries {
		if q.Workspace == "" && !q.AllWorkspaces {
			q.Workspace = "/home/u/proj"
		}
		want, err := search.Search(ctx(), js, q)
		require.NoError(t, err)
		got, err := search.Search(ctx(), pg, q)
		require.NoError(t, err)
		require.Equal(t, comparable(want), comparable(got), "query %+v", q)
		total += len(want)
	}
	assert.Greater(t, total, 500, "the corpus holds matches")
}

// comparable describes matches without what the two stores report
// differently by nature: when a session was updated, its size in bytes,
// and the times of events written at different moments.
func comparable(ms []search.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		h := m.Session.Header
		out[i] = fmt.Sprintf("%s (%s, created %s, parent %q, title %q) event %d %s role=%s tool=%s snippet=%q [%d:%d]",
			h.ID, h.Cwd, h.Created.UTC().Format(time.RFC3339Nano), h.Parent, m.Session.Title,
			m.Seq, m.Type, m.Role, m.Tool, m.Snippet, m.MatchStart, m.MatchEnd)
	}
	return out
}
