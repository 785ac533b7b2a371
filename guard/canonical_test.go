package guard

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{`  `, `{}`},
		{`{}`, `{}`},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{`{"z":{"y":[{"b":true,"a":null}]},"a":"x"}`, `{"a":"x","z":{"y":[{"a":null,"b":true}]}}`},
		{`[1.0, 1e0, 10e-1, -0, 0.5, 1E2, 123456789012345678901234567890]`, `[1,1,1,0,0.5,100,123456789012345678901234567890]`},
		{`{"s":"a<b>&\u00e9\n\t\"\\\u0001"}`, `{"s":"a<b>&é\n\t\"\\\u0001"}`},
		{`{"a":1} trailing`, `{"a":1} trailing`},
		{`not json`, `not json`},
		{`{"dup":1,"dup":2}`, `{"dup":2}`},
		{`1e999`, `1e999`},
	} {
		assert.Equal(t, tc.want, CanonicalJSON([]byte(tc.in)), "canonical of %q", tc.in)
	}
}

func TestCutRunes(t *testing.T) {
	assert.Equal(t, "abc", cutRunes("abc", 3))
	assert.Equal(t, "ab…", cutRunes("abc", 2))
	assert.Equal(t, "éé…", cutRunes("ééé", 2))
	assert.Equal(t, "\uFFFDa", cutRunes("\xffa", 5))
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"b":[1,2.5e3,{"y":null,"x":"\u00e9"}],"a":true}`, `[-0.0, 1E-7, 9007199254740993]`, `"\ud800"`, `{"a":"\x7f<&>"}`, `nope`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := CanonicalJSON([]byte(in))
		var orig any
		if err := json.Unmarshal([]byte(in), &orig); err != nil {
			if trimmed := strings.Trim(in, " \t\r\n"); trimmed != "" {
				require.Equal(t, trimmed, out, "invalid JSON is kept as it is")
			}
			return
		}
		var back any
		require.NoError(t, json.Unmarshal([]byte(out), &back), "canonical text %q is valid JSON", out)
		require.True(t, reflect.DeepEqual(orig, back), "same value: %q -> %q", in, out)
		require.Equal(t, out, CanonicalJSON([]byte(out)), "canonical text is stable")
		require.True(t, utf8.ValidString(out))
	})
}

func FuzzCutRunes(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Add("\xff\xfe", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(0, min(n, 1000))
		out := cutRunes(s, n)
		require.True(t, utf8.ValidString(out))
		count := utf8.RuneCountInString(out)
		if strings.HasSuffix(out, "…") && count == n+1 {
			return
		}
		require.LessOrEqual(t, count, n)
		require.Equal(t, strings.ToValidUTF8(s, "\uFFFD"), out, "nothing cut")
	})
}
