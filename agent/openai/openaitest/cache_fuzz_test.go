package openaitest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzStreamUsage rewrites arbitrary streams: every line that is not a
// data event is kept in order, and the result carries the prompt's
// counts in at least one usage object, in every one it has.
func FuzzStreamUsage(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":9}}\n\n: keep-alive\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"cut"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		use := CacheUse{PromptTokens: 100, HitTokens: 64, MissTokens: 36}
		out := withStreamUsage(stream, use, 4)
		var kept, want [][]byte
		for _, l := range bytes.SplitAfter(stream, []byte("\n")) {
			if len(l) > 0 && !bytes.HasPrefix(l, []byte("data:")) && len(bytes.TrimSpace(l)) > 0 {
				want = append(want, bytes.TrimRight(l, "\n"))
			}
		}
		usages := 0
		for _, l := range bytes.SplitAfter(out, []byte("\n")) {
			payload, ok := bytes.CutPrefix(l, []byte("data:"))
			if !ok {
				if len(bytes.TrimSpace(l)) > 0 {
					kept = append(kept, bytes.TrimRight(l, "\n"))
				}
				continue
			}
			var ev map[string]any
			dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(payload)))
			dec.UseNumber()
			if dec.Decode(&ev) != nil || dec.More() {
				continue
			}
			u, ok := ev["usage"].(map[string]any)
			if !ok {
				continue
			}
			usages++
			require.Equal(t, json.Number("100"), u["prompt_tokens"], "%q", l)
			require.Equal(t, json.Number("64"), u["prompt_cache_hit_tokens"])
			require.Equal(t, json.Number("36"), u["prompt_cache_miss_tokens"])
		}
		require.Equal(t, want, kept, "lines that are not data events are kept")
		require.Positive(t, usages, "the stream reports usage: %q", out)
	})
}

// FuzzPrefixCache measures arbitrary prompt sequences: hits and misses
// add up, a hit is never longer than the prompt, and the same prompt
// twice hits all of it but its last partial token (when it is at least
// a unit long).
func FuzzPrefixCache(f *testing.F) {
	f.Add([]byte("abcdefgh"), []byte("abcdefgX"), uint8(2), uint8(1))
	f.Add(bytes.Repeat([]byte("x"), 300), bytes.Repeat([]byte("x"), 600), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, a, b []byte, unit, bpt uint8) {
		c := &PrefixCache{UnitTokens: int(unit % 8), BytesPerToken: int(bpt % 6)}
		split := func(p []byte) promptText { // any split reads the same
			k := int(unit) % (len(p) + 1)
			return promptText{p[:k], p[k:]}
		}
		for _, p := range [][]byte{a, b, a, b} {
			u, err := c.use("m", split(p))
			require.NoError(t, err)
			require.Equal(t, u.PromptTokens, u.HitTokens+u.MissTokens)
			require.GreaterOrEqual(t, u.MissTokens, int64(0))
			require.LessOrEqual(t, u.HitTokens*int64(c.bytesPerToken()), int64(len(p)))
		}
		u, err := c.use("m", promptText{nil, a})
		require.NoError(t, err)
		if len(a) >= c.unit()*c.bytesPerToken() {
			require.Equal(t, int64(len(a)/c.bytesPerToken()), u.HitTokens, "the same prompt again")
		} else {
			require.Zero(t, u.HitTokens, "less than a unit is never a hit")
		}
	})
}

// FuzzTopLevel checks the request body scanner against encoding/json:
// on every valid JSON object it finds each member's raw value, the last
// of duplicates, as a map of raw messages holds it.
func FuzzTopLevel(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a \"quoted\" ]}"}],"tools":[],"stream":true}`))
	f.Add([]byte(` { "messages" : [ ] , "messages" : [1,{"a":[2]}] } `))
	f.Add([]byte(`{"mess\u0061ges":"x","n":-1.5e3,"t":true,"z":null}`))
	f.Add([]byte(`{"a":[}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, ok := topLevel(body, "model", "messages", "tools")
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil || m == nil {
			return // not a valid object: anything but a panic will do
		}
		require.True(t, ok, "a valid object is scanned: %q", body)
		for k, name := range []string{"model", "messages", "tools"} {
			want, present := m[name]
			if !present {
				require.Nil(t, fields[k], name)
				continue
			}
			require.Equal(t, string(want), string(fields[k]), name)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		all, ok := topLevel(body, keys...)
		require.True(t, ok)
		for i, k := range keys {
			require.Equal(t, string(m[k]), string(all[i]), k)
		}
	})
}

// FuzzBodyUsage rewrites arbitrary completion bodies: a JSON object gets
// the prompt's counts in its usage, anything else is kept as it is.
func FuzzBodyUsage(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	f.Add([]byte(`{"choices":[]}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		use := CacheUse{PromptTokens: 10, HitTokens: 4, MissTokens: 6}
		out := withBodyUsage(body, use)
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&doc) != nil || doc == nil {
			require.Equal(t, body, out, "not an object: kept")
			return
		}
		var got map[string]any
		dec = json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&got))
		u, ok := got["usage"].(map[string]any)
		require.True(t, ok)
		require.Equal(t, json.Number("10"), u["prompt_tokens"])
		require.Equal(t, json.Number("4"), u["prompt_cache_hit_tokens"])
		require.Equal(t, json.Number("6"), u["prompt_cache_miss_tokens"])
	})
}
