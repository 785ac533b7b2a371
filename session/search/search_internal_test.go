package search

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textmatch"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/jsonstr"
)

// A scan checks its context between reads of a log.
// newTestJSONL returns session.NewJSONL's store as search reaches it.
func newTestJSONL(dir string) jsonlStore {
	return session.NewJSONL(dir, session.StoreConfig{}).(jsonlStore)
}

func TestScanFileStopsWhenCancelled(t *testing.T) {
	store := newTestJSONL(t.TempDir())
	log, err := store.Create(context.Background(), session.Header{ID: "big", Cwd: "/w"})
	require.NoError(t, err)
	for range 8 {
		_, err := log.Append(context.Background(), &session.ToolFinished{Name: "bash", Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock(strings.Repeat("no match here\n", 40_000) + "needle")}}})
		require.NoError(t, err)
	}
	require.NoError(t, log.Close())
	st, err := os.Stat(logPath(store, "big"))
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(3*scanBufferSize), "several reads")

	m, err := compile(Options{Query: "needle", Workspace: "/w"})
	require.NoError(t, err)
	buf := make([]byte, scanBufferSize)
	ms := &matchSink{max: 100}
	_, err = scanFile(context.Background(), store, "big", m, &buf, ms)
	require.NoError(t, err)
	assert.Len(t, ms.matches, 8)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ms = &matchSink{max: 100}
	_, err = scanFile(ctx, store, "big", m, &buf, ms)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, ms.matches)

	// The same, with the log mapped into memory.
	m.mapMin = 1
	ms = &matchSink{max: 100}
	_, err = scanFile(context.Background(), store, "big", m, &buf, ms)
	require.NoError(t, err)
	assert.Len(t, ms.matches, 8)
	ms = &matchSink{max: 100}
	_, err = scanFile(ctx, store, "big", m, &buf, ms)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, ms.matches)
}

// Tuning on a sample makes the rarest of the literal sets a pattern
// requires the one scanned for; the others stay as checks.
func TestTuneScansRarestSet(t *testing.T) {
	m, err := compile(Options{Query: `(?i)connection reset by peer`, Regex: true, Workspace: "/w"})
	require.NoError(t, err)
	lits := func(p prefilter) []textmatch.Literal {
		var out []textmatch.Literal
		for _, f := range p {
			out = append(out, f.lit)
		}
		return out
	}
	assert.Equal(t, []textmatch.Literal{{Text: "connection re", Fold: true}}, lits(m.pre))
	require.Len(t, m.also, 1)
	m.tune([]byte(strings.Repeat(`{"text":"one connection, recent events, return nil"}`+"\n", 100)))
	assert.Equal(t, []textmatch.Literal{{Text: "et by peer", Fold: true}}, lits(m.pre), "y and b are rare in the sample")
	assert.Equal(t, []textmatch.Literal{{Text: "connection re", Fold: true}}, lits(m.also[0]))
	assert.False(t, m.alsoMayMatch([]byte(`{"text":"CONNECTION BY PEER"}`)))
	assert.True(t, m.alsoMayMatch([]byte(`{"text":"CONNECTION RESET BY PEER"}`)))
}

// The prefilter of a pattern holds the literals one of which every
// match contains; a case-insensitive pattern's literals fold ASCII case.
func TestRegexPrefilter(t *testing.T) {
	exact := func(ss ...string) []textmatch.Literal {
		var out []textmatch.Literal
		for _, s := range ss {
			out = append(out, textmatch.Literal{Text: s})
		}
		return out
	}
	for pattern, want := range map[string][]textmatch.Literal{
		`needle`:                               exact("needle"),
		`foo\d+barbaz`:                         exact("barbaz"),
		`(foo|barx)\s+q`:                       exact("foo", "barx"),
		`(?i)needle`:                           {{Text: "needle", Fold: true}},
		`(?i)Connection Reset by peer`:         {{Text: "connection re", Fold: true}},
		`(?i)ünï`:                              {{Text: "n", Fold: true}},
		`(?i)éü`:                               nil,
		`\d+`:                                  nil,
		`a?bc`:                                 exact("bc"),
		`(ab)+c*`:                              exact("ab"),
		`x{2,}yy`:                              exact("yy"),
		`"quoted"`:                             exact(`"quoted"`),
		`(?i)123-456`:                          {{Text: "123-456", Fold: true}},
		`(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q)x`: exact("x"),
	} {
		var got []textmatch.Literal
		pf, _ := regexPrefilters(pattern)
		for _, f := range pf {
			got = append(got, f.lit)
		}
		assert.ElementsMatch(t, want, got, "pattern %q", pattern)
	}
}

// A folded literal's prefilter passes lines holding it in any case, as
// written once and twice encoded, and drops lines without it.
func TestFoldedPrefilter(t *testing.T) {
	pf, _ := regexPrefilters(`(?i)say "hi"`)
	require.Len(t, pf, 1)
	for line, want := range map[string]bool{
		`{"text":"SAY \"Hi\""}`:                      true,
		`{"arguments":"{\"a\":\"say \\\"HI\\\"\"}"}`: true,
		`{"text":"say hi"}`:                          false,
		`{"text":"nothing"}`:                         false,
		`{"text":"SAY \u0022hi\u0022"}`:              true, // escapes that could hide it
	} {
		assert.Equal(t, want, pf.lineMayMatch([]byte(line)), "%s", line)
	}
}

func TestAnchorOf(t *testing.T) {
	for s, want := range map[string]string{
		"needle":              "needle",
		`say "hello world" x`: "hello world",
		"ünïcode":             "code",
		"日本語":                 "",
		`a\b/c<d>e&f'g`:       "a",
		"path/to/file.go:12":  "file.go:12",
	} {
		assert.Equal(t, want, anchorOf(s), "%q", s)
	}
}

// FuzzJSONStringPrefix: the whole encoding of a string decodes to what
// encoding/json decodes, and every prefix of it to a prefix of that.
func FuzzJSONStringPrefix(f *testing.F) {
	f.Add("plain", 3)
	f.Add("quote \" backslash \\ tab \t nl \n", 20)
	f.Add("\u2028 \x01 \xff é 😀", 9)
	f.Add(`\ud83d\ude00 \ud800x \udc00`, 7)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		for _, raw := range []string{encodeString(s), mustMarshal(t, s)} {
			var want string
			require.NoError(t, json.Unmarshal([]byte(`"`+raw+`"`), &want))
			got, complete := jsonstr.Prefix([]byte(raw + `"tail`))
			assert.True(t, complete)
			assert.Equal(t, want, got)
			assert.Equal(t, want, string(unescape(nil, []byte(raw))))
			if len(raw) == 0 {
				continue
			}
			c := cut % len(raw)
			if c < 0 {
				c = -c
			}
			part, complete := jsonstr.Prefix([]byte(raw[:c]))
			assert.False(t, complete)
			assert.True(t, strings.HasPrefix(want, part), "prefix %q of %q decodes to %q, not a prefix of %q", raw[:c], raw, part, want)
		}
		// Arbitrary bytes never panic, and what encoding/json accepts
		// decodes the same.
		jsonstr.Prefix([]byte(s))
		got := unescape(nil, []byte(s))
		var want string
		if json.Unmarshal([]byte(`"`+s+`"`), &want) == nil {
			assert.Equal(t, want, string(got))
		}
	})
}

func mustMarshal(t *testing.T, s string) string {
	b, err := json.Marshal(s) // HTML-escaping, as other writers do
	require.NoError(t, err)
	return string(b[1 : len(b)-1])
}
