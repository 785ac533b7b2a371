package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

func TestObserveSchemas(t *testing.T) {
	schema := `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}`
	result := `{"tools":[{"name":"t","inputSchema":` + schema + `},{"name":"u","inputSchema": {"type" : "object"} }]}`
	cases := []struct{ name, body string }{
		{"json", `{"jsonrpc":"2.0","id":1,"result":` + result + `}`},
		{"sse", "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + result + "}\n\n"},
		{"sse split data lines", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\n" + "data: \"result\":" + result + "}\n\n: comment\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ht := &httpTransport{schemas: &schemas{}}
			ht.observe([]byte(c.body))
			got, ok := ht.schemas.get("t")
			require.True(t, ok)
			assert.Equal(t, schema, string(got), "the key order is the server's")
			u, _ := ht.schemas.get("u")
			assert.Equal(t, `{"type":"object"}`, string(u), "whitespace is compacted")
		})
	}
}

func FuzzObserve(f *testing.F) {
	f.Add([]byte(`{"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`))
	f.Add([]byte("data: {\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":{}}]}}\n\n"))
	f.Add([]byte("data: \ndata: x\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		ht := &httpTransport{schemas: &schemas{}}
		ht.observe(body)
		for name, raw := range ht.schemas.raw {
			require.NotEmpty(t, name)
			require.True(t, json.Valid(raw), "%q", raw)
			var b bytes.Buffer
			require.NoError(t, json.Compact(&b, raw))
			require.Equal(t, b.String(), string(raw), "kept compact")
		}
	})
}

func FuzzAppendStructured(f *testing.F) {
	f.Add("Created issue 17.", `{"id":17,"url":"u"}`)
	f.Add(`{"sum": 5}`, `{"sum":5}`)
	f.Add("", `[1,"a",null,true]`)
	f.Fuzz(func(t *testing.T, text, structured string) {
		var v any
		if json.Unmarshal([]byte(structured), &v) != nil {
			return
		}
		var in []harness.Block
		if text != "" {
			in = append(in, harness.TextBlock(text))
		}
		out := appendStructured(in, v)
		require.GreaterOrEqual(t, len(out), len(in))
		require.LessOrEqual(t, len(out), len(in)+1)
		if len(out) == len(in)+1 {
			b, _ := json.Marshal(v)
			require.Equal(t, string(b), out[len(out)-1].Text, "the structured content as compact JSON")
		}
		if text == "" {
			require.Len(t, out, 1, "with no text, the structured content is shown")
		}
	})
}
