package postgres

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSearchText(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`{"seq":1,"type":"user","data":{"content":[{"type":"text","text":"fix \"it\" \u003cnow\u003e"}]}}`, []string{`fix "it" <now>`, "user"}},
		{`{"data":{"arguments":"{\"command\":\"grep -n \\\"needle\\\"\"}"}}`, []string{`{"command":"grep -n \"needle\""}`, `grep -n "needle"`}},
		{`{"data":{"text":"a\u0000b"}}`, []string{"a\uFFFDb"}},
		{`{"data":{"record":{"deep":["x",{"y":"z"}]}}}`, []string{"x", "z"}},
		{`not json`, nil},
	} {
		got := searchText([]byte(tc.line))
		for _, w := range tc.want {
			assert.Contains(t, got, w, "line %s", tc.line)
		}
		assert.NotContains(t, got, "\x00")
		if tc.want == nil {
			assert.Empty(t, got)
		}
	}
}

// FuzzSearchText checks that the search text of a line holds every
// string of the line, decoded, and of the JSON within its strings, and
// never a NUL.
func FuzzSearchText(f *testing.F) {
	for _, s := range []string{
		`{"a":"b"}`,
		`{"data":{"arguments":"{\"command\":\"ls\"}"}}`,
		`["\u0000", "\ud800", "{\"x\":[\"y\"]}"]`,
		`{"k":"  [\"nested\", \"{\\\"deeper\\\":\\\"yes\\\"}\"]"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got := searchText(line)
		if strings.Contains(got, "\x00") {
			t.Fatalf("NUL in search text %q", got)
		}
		var v any
		if json.Unmarshal(line, &v) != nil {
			return
		}
		var check func(v any, depth int)
		check = func(v any, depth int) {
			switch x := v.(type) {
			case string:
				if want := strings.ReplaceAll(x, "\x00", "\uFFFD"); !strings.Contains(got, want) {
					t.Fatalf("search text %q lacks %q", got, want)
				}
				var inner any
				if t := strings.TrimLeft(x, " \t\r\n"); depth < maxNesting && t != "" && (t[0] == '{' || t[0] == '[') && json.Unmarshal([]byte(x), &inner) == nil {
					check(inner, depth+1)
				}
			case []any:
				for _, e := range x {
					check(e, depth)
				}
			case map[string]any:
				for _, e := range x {
					check(e, depth)
				}
			}
		}
		check(v, 0)
	})
}

// The one-pass walk over a line written by Append finds the same strings
// as decoding it whole (in document order, where a decoded object's
// order is random).
func TestSearchTextWalkMatchesDecode(t *testing.T) {
	for _, line := range []string{
		`{"seq":3,"time":"2026-12-01T09:00:00Z","type":"assistant","data":{"content":[{"type":"text","text":"a\nb \"c\" \u00e9\ud83d\ude00"},{"type":"tool_call","tool_call":{"id":"c1","name":"bash","arguments":"{\"command\":\"ls -la\",\"env\":[\"A=1\",{\"deep\":\"{\\\"x\\\":\\\"y\\\"}\"}]}"}}],"usage":{"input_tokens":3}}}`,
		`{"seq":4,"time":"2026-12-01T09:00:00Z","type":"tool_result","data":{"step":1,"call_id":"c1","name":"bash","result":{"content":[{"type":"text","text":"nul\u0000here [not json"}],"is_error":false}}}`,
		`{"seq":5,"time":"2026-12-01T09:00:00Z","type":"novel","data":[1,2.5e3,true,null,{"k":["v",{}],"":""}]}`,
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(line), &v))
		var want strings.Builder
		collect(v, &want, 0)
		var got strings.Builder
		require.True(t, walkStrings([]byte(line), &got, 0), line)
		w, g := strings.Split(want.String(), "\n"), strings.Split(got.String(), "\n")
		slices.Sort(w)
		slices.Sort(g)
		assert.Equal(t, w, g, line)
		assert.Equal(t, got.String(), searchText([]byte(line)))
	}
	var b strings.Builder
	for _, bad := range []string{`{"a":"b"`, `["a"}`, `{"a":"b}`, `]`} {
		assert.False(t, walkStrings([]byte(bad), &b, 0), bad)
	}
}
