package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reference extracts what extract should, with encoding/json's token
// reader: the texts of a tool result's content (and of its embedded
// resources), a line apart, structuredContent (compact) when there is
// no text, and isError.
func reference(data []byte) (text string, isError bool, id string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type block struct {
		text       string
		structured json.RawMessage
	}
	var blocks []block
	var walkObject func(path string) bool
	skip := func() bool {
		var v json.RawMessage
		return dec.Decode(&v) == nil
	}
	add := func(s string) { blocks = append(blocks, block{text: s}) }
	stringOr := func() bool {
		if !dec.More() {
			return false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
		var s string
		if json.Unmarshal(v, &s) == nil && len(v) > 0 && v[0] == '"' {
			add(s)
		}
		return true
	}
	var texts int
	walkObject = func(path string) bool {
		tok, err := dec.Token()
		if err != nil || tok != json.Delim('{') {
			return false
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			key := tok.(string)
			var good bool
			switch {
			case path == "" && key == "id":
				var v json.RawMessage
				good = dec.Decode(&v) == nil
				var c bytes.Buffer
				_ = json.Compact(&c, v)
				id = c.String()
			case path == "" && key == "result":
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					return false
				}
				if len(v) > 0 && v[0] == '{' {
					sub := json.NewDecoder(bytes.NewReader(v))
					saved := dec
					dec = sub
					good = walkObject("result")
					dec = saved
				} else {
					good = true
				}
			case path == "result" && key == "content":
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					return false
				}
				var items []json.RawMessage
				if len(v) > 0 && v[0] == '[' && json.Unmarshal(v, &items) == nil {
					for _, it := range items {
						if len(it) == 0 || it[0] != '{' {
							continue
						}
						sub := json.NewDecoder(bytes.NewReader(it))
						saved := dec
						dec = sub
						if !walkObject("item") {
							dec = saved
							return false
						}
						dec = saved
					}
				}
				good = true
			case path == "item" && key == "text", path == "resource" && key == "text":
				before := len(blocks)
				good = stringOr()
				if len(blocks) > before {
					texts++
				}
			case path == "item" && key == "resource":
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					return false
				}
				if len(v) > 0 && v[0] == '{' {
					sub := json.NewDecoder(bytes.NewReader(v))
					saved := dec
					dec = sub
					good = walkObject("resource")
					dec = saved
				} else {
					good = true
				}
			case path == "result" && key == "structuredContent":
				var v json.RawMessage
				good = dec.Decode(&v) == nil
				blocks = append(blocks, block{structured: v})
			case path == "result" && key == "isError":
				var v json.RawMessage
				good = dec.Decode(&v) == nil
				isError = string(bytes.TrimSpace(v)) == "true"
			default:
				good = skip()
			}
			if !good {
				return false
			}
		}
		tok, err = dec.Token()
		return err == nil && tok == json.Delim('}')
	}
	if !walkObject("") {
		return "", false, "", false
	}
	// structuredContent is kept only when the content has no text.
	var parts []string
	for _, bl := range blocks {
		switch {
		case bl.structured == nil:
			parts = append(parts, bl.text)
		case texts == 0:
			var c bytes.Buffer
			_ = json.Compact(&c, bl.structured)
			parts = append(parts, c.String())
		}
	}
	out := strings.Join(parts, "\n")
	return out, isError, id, true
}

func runExtract(data []byte, r io.Reader) (string, extracted, surveyed, error) {
	sv, err := survey(bytes.NewReader(data))
	if err != nil {
		return "", extracted{}, sv, err
	}
	var out bytes.Buffer
	x, err := extract(r, &out, sv)
	return out.String(), x, sv, err
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name, in, want string
		isError        bool
	}{
		{"text", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb"},{"type":"text","text":"c"}]}}`, "a\nb\nc", false},
		{"escapes", `{"id":1,"result":{"content":[{"text":"\u00e9\ud83d\ude00\ud800x\"\\\/\b\f\n\r\t"}]}}`, "é😀\uFFFDx\"\\/\b\f\n\r\t", false},
		{"invalid utf-8", "{\"id\":1,\"result\":{\"content\":[{\"text\":\"a\xffb\xe2\x82\"}]}}", "a\uFFFDb\uFFFD\uFFFD", false},
		{"resource and image", `{"id":"x","result":{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"resource","resource":{"uri":"u","text":"inside"}}],"isError":true}}`, "inside", true},
		{"structured only", `{"id":1,"result":{"content":[],"structuredContent":{"a": [1, 2.5, "x y"]}}}`, `{"a":[1,2.5,"x y"]}`, false},
		{"structured beside text", `{"id":1,"result":{"structuredContent":{"a":1},"content":[{"text":"t"}]}}`, "t", false},
		{"key order", `{"result":{"content":[{"text":"first"}]},"id":3,"jsonrpc":"2.0"}`, "first", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, x, _, err := runExtract([]byte(tt.in), bytes.NewReader([]byte(tt.in)))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.isError, x.isError)
			// One byte at a time: pieces never change the result.
			got, _, _, err = runExtract([]byte(tt.in), iotest.OneByteReader(bytes.NewReader([]byte(tt.in))))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	sv, err := survey(strings.NewReader(`{"id": 12 ,"method":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, "12", string(sv.id))
	assert.True(t, sv.method)
	_, err = survey(strings.NewReader(`{"id":1,"result":{"content":[{"text":"cut sh`))
	assert.ErrorContains(t, err, "incomplete JSON at byte")
	_, err = survey(strings.NewReader(`{"id":1} x`))
	assert.ErrorContains(t, err, "after the end of the value")
	_, err = survey(strings.NewReader(strings.Repeat("[", 20000)))
	assert.Error(t, err)
}

// FuzzExtract: on any input survey and extract end without panicking;
// on a well-formed message they find what encoding/json's token reader
// finds, whether the input comes whole or a byte at a time.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb"}]}}`))
	f.Add([]byte(`{"id":1,"result":{"content":[{"text":"\ud800\udc00\ud800\u0041"}],"structuredContent":[1]}}`))
	f.Add([]byte("{\"id\":1,\"result\":{\"content\":[{\"text\":\"\xe2\x82\xac\xe2\x82\"}]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, x, sv, err := runExtract(data, bytes.NewReader(data))
		want, isError, id, ok := reference(data)
		if !json.Valid(data) || !ok {
			return
		}
		if err != nil {
			t.Fatalf("a valid message failed: %v\n%q", err, data)
		}
		if got != want {
			t.Fatalf("extract = %q, want %q\n%q", got, want, data)
		}
		if x.isError != isError {
			t.Fatalf("isError = %v, want %v", x.isError, isError)
		}
		if id != "" && len(id) <= 1<<10 && string(sv.id) != id {
			var c bytes.Buffer
			_ = json.Compact(&c, sv.id)
			if c.String() != id {
				t.Fatalf("id = %q, want %q", sv.id, id)
			}
		}
		slow, _, _, err := runExtract(data, iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil || slow != got {
			t.Fatalf("a byte at a time: %q, %v; whole: %q", slow, err, got)
		}
	})
}
