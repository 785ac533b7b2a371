package jsonenc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/jsonenc"
)

func TestFields(t *testing.T) {
	b := []byte{'{'}
	b = jsonenc.StringField(b, "s", "a\u2028<b>")
	b = jsonenc.BoolField(b, "t", true)
	b = jsonenc.IntField(b, "i", -3)
	b = jsonenc.FloatField(b, "f", 0.25)
	b = append(jsonenc.Key(b, "l"), '[')
	b = append(jsonenc.String(b, "x"), ']', '}')
	assert.Equal(t, `{"s":"a\u2028<b>","t":true,"i":-3,"f":0.25,"l":["x"]}`, string(b))
	assert.True(t, json.Valid(b))
}

// FuzzString checks the hand-written JSON string encoder against
// encoding/json: the output is valid JSON that decodes to the input (with
// invalid UTF-8 replaced, as encoding/json does).
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ tab \t nl \n", "\x00\x1f\x7f", "\u2028\u2029 <html> &", "bad \xff utf8", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := jsonenc.String(nil, s)
		var back string
		require.NoError(t, json.Unmarshal(enc, &back), "%q", enc)
		want, _ := json.Marshal(s)
		var wantBack string
		require.NoError(t, json.Unmarshal(want, &wantBack))
		require.Equal(t, wantBack, back)
	})
}

func TestMarshal(t *testing.T) {
	type v struct {
		S string          `json:"s"`
		R json.RawMessage `json:"r"`
		N float64         `json:"n"`
	}
	b, err := jsonenc.Marshal(v{S: "a\u2028<b> & \"c\"\n\xff", R: json.RawMessage(`{ "x" : [1, "<"] }`), N: 0.25})
	require.NoError(t, err)
	assert.Equal(t, `{"s":"a\u2028<b> & \"c\"\n\ufffd","r":{"x":[1,"<"]},"n":0.25}`, string(b))
	_, err = jsonenc.Marshal(v{R: json.RawMessage(`{`)})
	assert.Error(t, err, "an invalid raw value is an error")
}

// FuzzMarshalString checks that Marshal spells a string as String does,
// but for \b and \f, which encoding/json writes short.
func FuzzMarshalString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ tab \t nl \n", "\x00\x1f\x7f", "\u2028\u2029 <html> &", "bad \xff utf8", "日本語", "\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := jsonenc.Marshal(s)
		require.NoError(t, err)
		want := strings.NewReplacer(`\u0008`, `\b`, `\u000c`, `\f`).Replace(string(jsonenc.String(nil, s)))
		require.Equal(t, want, string(got))
	})
}

func TestEncoderAppends(t *testing.T) {
	var e jsonenc.Encoder
	b, err := e.Append([]byte("["), "a<")
	require.NoError(t, err)
	b = append(b, ',')
	b, err = e.Append(b, map[string]int{"n": 1})
	require.NoError(t, err)
	assert.Equal(t, `["a<",{"n":1}`, string(b))
	b, err = e.Append(b, json.RawMessage(`{`))
	assert.Error(t, err)
	assert.Equal(t, `["a<",{"n":1}`, string(b), "a failed value leaves dst as it was")
}
