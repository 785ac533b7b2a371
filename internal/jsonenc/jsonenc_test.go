package jsonenc_test

import (
	"encoding/json"
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
