package guard

import (
	"encoding/json"
	"math/big"
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
		{`{"s":"\u007f\u2028\b\f"}`, "{\"s\":\"\x7f\\u2028\\b\\f\"}"},
		{`{"a":1} trailing`, `{"a":1} trailing`},
		{`not json`, `not json`},
		{`{"dup":1,"dup":2}`, `{"dup":2}`},
		{`1e999`, `1e999`},
		{`[1e700, 1E700, 1e+700, 1E0700, 10e699, 0.1e701, 1.000e700]`, `[1e700,1e700,1e700,1e700,1e700,1e700,1e700]`},
		{`[-0, -0.0, 0e5, -0E-999999999999999999999, 0.000]`, `[0,0,0,0,0]`},
		{`[1e-700, 0.01E-698, -2.50e-30]`, `[1e-700,1e-700,-2.5e-30]`},
		{`[12345678901234567890123456789012345678901234567890, 1.2345678901234567890123456789012345678901234567890e49]`,
			`[12345678901234567890123456789012345678901234567890,12345678901234567890123456789012345678901234567890]`},
		{`[0.1, 0.10000000000000000555, 1.0000000000000001]`, `[0.1,0.10000000000000000555,1.0000000000000001]`},
		{`[100000000000000000000, 1e20, 1e21, 1000000000000000000000]`, `[100000000000000000000,100000000000000000000,1e21,1e21]`},
		{`[0.000000000000000000001, 1e-21, 1e-22, 1.5e-21]`, `[0.000000000000000000001,0.000000000000000000001,1e-22,0.0000000000000000000015]`},
		{`[123.456e1, 123456e-3, -1E-1, 5E-1]`, `[1234.56,123.456,-0.1,0.5]`},
		{`1E99999999999999999999999999`, `1e99999999999999999999999999`},
		{`-12.5E-99999999999999999999999999`, `-1.25e-99999999999999999999999998`},
		{`{"n":1E2,"m":[1.50,2e0]}`, `{"m":[1.5,2],"n":100}`},
	} {
		assert.Equal(t, tc.want, canonicalJSON([]byte(tc.in)), "canonical of %q", tc.in)
	}
}

func TestCutRunes(t *testing.T) {
	assert.Equal(t, "abc", cutRunes("abc", 3))
	assert.Equal(t, "ab…", cutRunes("abc", 2))
	assert.Equal(t, "éé…", cutRunes("ééé", 2))
	assert.Equal(t, "\uFFFDa", cutRunes("\xffa", 5))
}

// decodeNumbers decodes JSON text keeping numbers as json.Number.
func decodeNumbers(t *testing.T, text string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "%q", text)
	return v
}

// sameValue compares decoded JSON, numbers by exact value. Numbers whose
// exponent is too large for a big.Rat to hold cheaply are compared by
// canonical text instead (checked apart, against such exponents).
func sameValue(t *testing.T, a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if !smallExponent(string(x)) || !smallExponent(string(y)) {
			return canonicalNumber(string(x)) == canonicalNumber(string(y))
		}
		rx, okx := new(big.Rat).SetString(string(x))
		ry, oky := new(big.Rat).SetString(string(y))
		require.True(t, okx && oky, "%q %q", x, y)
		return rx.Cmp(ry) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(t, x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(t, v, w) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a, b)
	}
}

// smallExponent reports whether the number text s has an exponent of at
// most four digits and at most 400 digits in all.
func smallExponent(s string) bool {
	_, e, ok := strings.Cut(strings.ToLower(s), "e")
	return len(s) <= 400 && (!ok || len(strings.TrimLeft(strings.TrimLeft(e, "+-"), "0")) <= 4)
}

// variant writes decoded JSON back with every number in another form of
// the same value: mantissa shifted, exponent letter in upper case, a
// zero-padded exponent, zeros appended to the fraction.
func variant(b *strings.Builder, v any) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		mant, e, _ := strings.Cut(strings.ToLower(s), "e")
		whole, frac, _ := strings.Cut(mant, ".")
		exp := new(big.Int)
		if e != "" {
			exp.SetString(strings.TrimPrefix(e, "+"), 10)
		}
		// whole.frac × 10^exp = 0.(whole frac) × 10^(exp + len(whole))
		exp.Add(exp, big.NewInt(int64(len(whole))))
		if neg {
			b.WriteByte('-')
		}
		b.WriteString("0." + whole + frac + "00E")
		if exp.Sign() >= 0 {
			b.WriteString("+00" + exp.String())
		} else {
			b.WriteString("-00" + new(big.Int).Neg(exp).String())
		}
	case []any:
		b.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				b.WriteString(" , ")
			}
			variant(b, e)
		}
		b.WriteString(" ]")
	case map[string]any:
		b.WriteString("{ ")
		first := true
		for k, e := range x {
			if !first {
				b.WriteString(", ")
			}
			first = false
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(" : ")
			variant(b, e)
		}
		b.WriteString(" }")
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"b":[1,2.5e3,{"y":null,"x":"\u00e9"}],"a":true}`, `[-0.0, 1E-7, 9007199254740993]`, `"\ud800"`, `{"a":"\x7f<&>"}`, `nope`,
		`[ 1E700]`, `[1e-700, 0.001, 123456789012345678901234567890]`, `-0E-00`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := canonicalJSON([]byte(in))
		if !json.Valid([]byte(in)) {
			if trimmed := strings.Trim(in, " \t\r\n"); trimmed != "" {
				require.Equal(t, trimmed, out, "invalid JSON is kept as it is")
			}
			return
		}
		require.True(t, json.Valid([]byte(out)), "canonical text %q is valid JSON", out)
		require.True(t, utf8.ValidString(out))
		require.Equal(t, out, canonicalJSON([]byte(out)), "canonical text is stable")
		orig := decodeNumbers(t, in)
		require.True(t, sameValue(t, orig, decodeNumbers(t, out)), "same value: %q -> %q", in, out)
		var v strings.Builder
		variant(&v, orig)
		require.True(t, json.Valid([]byte(v.String())), "variant %q", v.String())
		require.Equal(t, out, canonicalJSON([]byte(v.String())), "an equal value in other forms: %q", v.String())
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
