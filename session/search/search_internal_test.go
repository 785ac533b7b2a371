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
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/jsonstr"
)

// A scan checks its context between reads of a log.
func TestScanFileStopsWhenCancelled(t *testing.T) {
	store := session.NewJSONL(t.TempDir())
	log, err := store.Create(context.Background(), session.Header{ID: "big", Cwd: "/w"})
	require.NoError(t, err)
	for range 8 {
		_, err := log.Append(context.Background(), &session.ToolFinished{Name: "bash", Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock(strings.Repeat("no match here\n", 40_000) + "needle")}}})
		require.NoError(t, err)
	}
	require.NoError(t, log.Close())
	st, err := os.Stat(store.Path("big"))
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
}

func TestRequiredLiterals(t *testing.T) {
	for pattern, want := range map[string][]string{
		`needle`:                               {"needle"},
		`foo\d+barbaz`:                         {"barbaz"},
		`(foo|barx)\s+q`:                       {"foo", "barx"},
		`(?i)needle`:                           nil,
		`\d+`:                                  nil,
		`a?bc`:                                 {"bc"},
		`(ab)+c*`:                              {"ab"},
		`x{2,}yy`:                              {"yy"},
		`"quoted"`:                             {`"quoted"`},
		`(?i)123-456`:                          {"123-456"},
		`(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q)x`: {"x"},
	} {
		pf := regexPrefilter(pattern)
		var lits []string
		for _, f := range pf {
			s, _ := jsonstr.Prefix(append(append([]byte(nil), f.forms[0]...), '"'))
			lits = append(lits, s)
		}
		assert.ElementsMatch(t, want, lits, "pattern %q", pattern)
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

func TestFinder(t *testing.T) {
	h := []byte(strings.Repeat("aaaaaaaaaaZ", 1000) + "needleZ" + strings.Repeat("xZ", 100))
	for _, needle := range []string{"needleZ", "Z", "aZ", "eZx", "absent", "aaaaaaaaaaZaaaaaaaaaaZ"} {
		f := newFinder([]byte(needle))
		assert.Equal(t, strings.Index(string(h), needle), f.index(h), "needle %q", needle)
	}
	f := newFinder([]byte("long needle"))
	assert.Equal(t, -1, f.index([]byte("long")))
	assert.Equal(t, 0, f.index([]byte("long needle")))
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
