package schemaprompt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExample(t *testing.T) {
	for name, tc := range map[string]struct{ schema, want string }{
		"object in order":  {`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer","minimum":3},"b":{"type":"boolean"}}}`, `{"z":"string","a":3,"b":false}`},
		"examples first":   {`{"type":"string","examples":["x1"],"default":"d","enum":["e"]}`, `"x1"`},
		"const":            {`{"const":{"k":[1,"two",null,true]}}`, `{"k":[1,"two",null,true]}`},
		"default":          {`{"type":"integer","default":42}`, `42`},
		"enum":             {`{"enum":["b","a"]}`, `"b"`},
		"formats":          {`{"type":"array","items":{"type":"string","format":"email"}}`, `["user@example.com"]`},
		"nullable type":    {`{"type":["null","number"]}`, `0`},
		"any of":           {`{"anyOf":[{"type":"null"},{"type":"object","properties":{"x":{"type":"string"}}}]}`, `{"x":"string"}`},
		"ref":              {`{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}}}}`, `{"p":{"x":0,"y":0}}`},
		"recursive ref":    {`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, ``},
		"implied object":   {`{"properties":{"q":{}}}`, `{"q":null}`},
		"array no items":   {`{"type":"array"}`, `[]`},
		"unknown ref":      {`{"$ref":"https://example.com/s.json","type":"boolean"}`, `false`},
		"escaped key":      {`{"type":"object","properties":{"a\"b":{"type":"string"}}}`, `{"a\"b":"string"}`},
		"true schema":      {`true`, `null`},
		"empty properties": {`{"type":"object","properties":{}}`, `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Example([]byte(tc.schema))
			require.NoError(t, err)
			require.True(t, json.Valid(got), "%s", got)
			if tc.want != "" {
				assert.Equal(t, tc.want, string(got))
			} else {
				assert.LessOrEqual(t, len(got), maxBytes)
			}
		})
	}
	for _, bad := range []string{``, `{`, `{"a":1} x`, `[1,]`} {
		_, err := Example([]byte(bad))
		assert.Error(t, err, bad)
	}
	// A schema whose example would be huge gets none, and the
	// instruction still carries the schema.
	wide := `{"type":"object","properties":{` + strings.Repeat(`"a":{"type":"string","default":"`+strings.Repeat("x", 1000)+`"},`, 20) + `"z":{"type":"string"}}}`
	_, err := Example([]byte(wide))
	assert.Error(t, err)
	instr, err := Instruction([]byte(wide))
	require.NoError(t, err)
	assert.NotContains(t, instr, "An example")
	assert.Contains(t, instr, `"z":{"type":"string"}`)
}

// FuzzExample: any input gives an error or a valid JSON value of
// bounded size, and the instruction built from a valid schema names it.
func FuzzExample(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"}}}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#"}}]}`,
		`{"const":"\u2028<&>"}`,
		`[{"type":"string"}]`,
		`{"type":["integer","null"],"minimum":1e400}`,
		`{"$ref":"#/properties/~1a~0b","properties":{"/a~b":{"type":"boolean"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		got, err := Example(schema)
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("example %q of %q is not JSON", got, schema)
		}
		if len(got) > maxBytes {
			t.Fatalf("example of %d bytes", len(got))
		}
		instr, err := Instruction(schema)
		if err != nil {
			t.Fatalf("outputInstruction failed on a schema schemaExample read: %v", err)
		}
		if !strings.Contains(strings.ToLower(instr), "json") {
			t.Fatal("the instruction does not say json")
		}
	})
}
