package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// propTokens are the pieces random texts are made of: words in several
// cases, the characters JSON escapes, non-ASCII letters (the Kelvin sign
// and the long s fold to k and s), and the words of propPatterns.
var propTokens = []string{
	"connection", "Connection", "CONNECTION", "reset", "RESET", "Reset", "by", "peer", "Peer",
	"return nil", "RETURN NIL", "k", "K", "\u212a", "s", "S", "\u017f", "é", "É", "日本",
	" ", " ", " ", "\n", "\t", "\r", `"`, `\`, "/", "<", ">", "&", "'", "\u2028", "\x01", "\x7f",
	"x", "y", "42", "say \"hi\"", "\\u00e9", "\\/",
}

// propPatterns are the regular expressions of the property test, beside
// random literals and random case-insensitive queries.
var propPatterns = []string{
	`(?i)connection reset by peer`, `(?i)connection\s+reset`, `(?i)RESET`, `(?i)k`, `(?i)s`,
	`(?i)peer|nil`, `conn\w+`, `(?i)é`, `(?i)日本`, `"\\`, `(?i)say "HI"`, `(?i)x\ny`,
	`^connection`, `(?i)reset$`, `(?i)(reset|peer) by`, `(?i)return nil`, `[kK]`, `\x{212a}`,
	`(?i)\x{17f}`, `(?i)<&>`, `(?i)\\u00E9`, `(?i)\\/`,
}

func propText(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(12) + 1 {
		b.WriteString(propTokens[rng.IntN(len(propTokens))])
	}
	return b.String()
}

func propPayload(rng *rand.Rand) session.Payload {
	a, b := propText(rng), propText(rng)
	switch rng.IntN(6) {
	case 0:
		return &session.UserMessage{Content: []harness.Block{harness.TextBlock(a), harness.TextBlock(b)}}
	case 1:
		args, _ := json.Marshal(map[string]any{"content": a, "list": []string{b}}) // HTML-escaped
		return &session.AssistantMessage{Step: 1, Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: b},
			harness.TextBlock(a),
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c", Name: "write", Arguments: string(args)}},
		}}
	case 2:
		return &session.ToolFinished{CallID: "c", Name: "bash", Result: harness.ToolResult{Content: []harness.Block{harness.TextBlock(a + b)}}}
	case 3:
		return &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: a}}
	case 4:
		return &session.SystemPrompt{Text: a}
	}
	return &session.UserMessage{Content: []harness.Block{harness.TextBlock(a)}}
}

// propQuery returns a random query: a piece of a corpus text as a
// literal or a quoted regexp, case-insensitive or not, or one of
// propPatterns.
func propQuery(rng *rand.Rand, texts []string) Options {
	switch rng.IntN(4) {
	case 0:
		return Options{Query: propPatterns[rng.IntN(len(propPatterns))], Regex: true}
	case 1:
		return Options{Query: "(?i)" + regexp.QuoteMeta(strings.ToUpper(propText(rng))), Regex: true}
	}
	t := texts[rng.IntN(len(texts))]
	i := rng.IntN(len(t) + 1)
	j := min(len(t), i+rng.IntN(20)+1)
	q := strings.ToValidUTF8(t[i:j], "")
	if q == "" {
		q = "connection"
	}
	if rng.IntN(2) == 0 {
		return Options{Query: q}
	}
	return Options{Query: "(?i)" + regexp.QuoteMeta(q), Regex: true}
}

type propKey struct {
	id  string
	seq int64
}

// propReference matches every event of the transcripts with the plain
// regexp (or strings.Index for a literal), decoding everything.
func propReference(t *testing.T, trs map[string]*session.Transcript, o Options) map[propKey]Match {
	t.Helper()
	var re *regexp.Regexp
	if o.Regex {
		re = regexp.MustCompile(o.Query)
	}
	types := newTypeSet(o.Types)
	out := map[propKey]Match{}
	for id, tr := range trs {
		for _, e := range tr.Events {
			if !types.has(e.Type()) {
				continue
			}
			eachText(e, func(p textPiece) bool {
				start, end := strings.Index(p.text, o.Query), 0
				if re != nil {
					if loc := re.FindStringIndex(p.text); loc != nil {
						start, end = loc[0], loc[1]
					} else {
						start = -1
					}
				} else {
					end = start + len(o.Query)
				}
				if start < 0 {
					return true
				}
				snip, ms, me := snippet(p.text, start, end, 80)
				out[propKey{id, e.Seq}] = Match{Seq: e.Seq, Type: e.Type(), Time: e.Time, Role: p.role, Tool: p.tool,
					Snippet: snip, MatchStart: ms, MatchEnd: me}
				return false
			})
		}
	}
	return out
}

// propSearch searches the JSONL store (its logs read, or mapped into
// memory however small) or the memory store.
func propSearch(ctx context.Context, name string, jsonl jsonlStore, mem session.Store, o Options) ([]Match, error) {
	switch name {
	case "jsonl":
		return Search(ctx, jsonl, o)
	case "jsonl-mapped":
		m, err := compile(o)
		if err != nil {
			return nil, err
		}
		m.mapMin = 1
		return searchJSONL(ctx, jsonl, m)
	}
	return Search(ctx, mem, o)
}

// TestSearchMatchesPlainRegexp: on random corpora (written by this build,
// with some lines rewritten as an ASCII-only writer writes them), the
// JSONL scan with its prefilter and fast path (of logs read and of logs
// mapped into memory) and the generic search
// over a memory store find exactly the events, roles, tools and snippets
// that the plain regexp finds in the decoded text, for literal,
// case-sensitive and case-insensitive queries.
func TestSearchMatchesPlainRegexp(t *testing.T) {
	corpora, queries := 6, 40
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		corpora, queries = 40, 200
	}
	ctx := context.Background()
	for c := range corpora {
		rng := rand.New(rand.NewPCG(uint64(c), 20))
		dir := t.TempDir()
		jsonl, mem := newTestJSONL(dir), session.NewMemory(session.StoreConfig{})
		var texts []string
		for s := range 3 {
			id := fmt.Sprintf("s%d", s)
			var payloads []session.Payload
			for range rng.IntN(25) + 5 {
				p := propPayload(rng)
				payloads = append(payloads, p)
				ev := session.Event{Data: p}
				eachText(ev, func(tp textPiece) bool { texts = append(texts, tp.text); return true })
			}
			for _, store := range []session.Store{jsonl, mem} {
				log, err := store.Create(ctx, session.Header{ID: id, Cwd: "/w", Created: time.Unix(int64(s), 0)})
				require.NoError(t, err)
				for _, p := range payloads {
					_, err := log.Append(ctx, p)
					require.NoError(t, err)
				}
				require.NoError(t, log.Close())
			}
			// Rewrite some lines as an ASCII-only writer would.
			path := logPath(jsonl, id)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := strings.SplitAfter(string(raw), "\n")
			for i := 1; i < len(lines); i++ {
				if rng.IntN(3) == 0 {
					lines[i] = string(asciiOnly([]byte(lines[i])))
				}
			}
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600))
		}
		trs := map[string]*session.Transcript{}
		for s := range 3 {
			id := fmt.Sprintf("s%d", s)
			tr, err := jsonl.Load(ctx, id)
			require.NoError(t, err)
			trs[id] = tr
		}
		for range queries {
			o := propQuery(rng, texts)
			o.Workspace, o.Limit = "/w", 1<<20
			if rng.IntN(3) == 0 {
				o.Types = []string{session.TypeUser, session.TypeAssistant, session.TypeToolResult, session.TypeReminder, session.TypeSystem}
			}
			if o.Regex && regexp.MustCompile(o.Query).MatchString("") {
				continue
			}
			want := propReference(t, trs, o)
			for _, name := range []string{"jsonl", "jsonl-mapped", "memory"} {
				ms, err := propSearch(ctx, name, jsonl, mem, o)
				require.NoError(t, err)
				got := map[propKey]Match{}
				for _, m := range ms {
					k := propKey{m.Session.Header.ID, m.Seq}
					m.Session = session.Info{}
					if name == "memory" { // its own clock
						m.Time = trs[k.id].Events[slices.IndexFunc(trs[k.id].Events, func(e session.Event) bool { return e.Seq == k.seq })].Time
					}
					got[k] = m
				}
				require.Equal(t, want, got, "%s: corpus %d, query %q (regex %v)", name, c, o.Query, o.Regex)
			}
		}
	}
}
