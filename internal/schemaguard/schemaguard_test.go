package schemaguard_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/schemaguard"
)

func compileErr(t *testing.T, schema string) *schemaguard.Error {
	t.Helper()
	_, err := schemaguard.Compile([]byte(schema), schemaguard.Limits{})
	require.Error(t, err, schema)
	var ge *schemaguard.Error
	require.True(t, errors.As(err, &ge), "%T %v", err, err)
	return ge
}

func TestCycles(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		cycle  []string
	}{
		{"two refs", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
			[]string{"#/$defs/a", "#/$defs/b", "#/$defs/a"}},
		{"root refers to itself", `{"type":"object","$ref":"#"}`, []string{"#", "#"}},
		{"through allOf", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"type":"object"},{"$ref":"#/$defs/a"}]}}}`,
			[]string{"#/$defs/a", "#/$defs/a/allOf/1", "#/$defs/a"}},
		{"through not", `{"type":"object","not":{"$ref":"#"}}`, []string{"#", "#/not", "#"}},
		{"through anyOf", `{"type":"object","anyOf":[{"$ref":"#"}]}`, []string{"#", "#/anyOf/0", "#"}},
		{"through oneOf", `{"type":"object","oneOf":[{"$ref":"#"}]}`, []string{"#", "#/oneOf/0", "#"}},
		{"through if", `{"type":"object","if":{"$ref":"#"}}`, []string{"#", "#/if", "#"}},
		{"through else", `{"type":"object","if":false,"else":{"$ref":"#"}}`, []string{"#", "#/else", "#"}},
		{"through dependentSchemas", `{"type":"object","dependentSchemas":{"x":{"$ref":"#"}}}`, []string{"#", "#/dependentSchemas/x", "#"}},
		{"draft-07 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"x":{"$ref":"#"}}}`, []string{"#", "#/dependencies/x", "#"}},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"$ref":"#/definitions/a"}},"definitions":{"a":{"$ref":"#/definitions/a"}}}`,
			[]string{"#/definitions/a", "#/definitions/a"}},
		{"anchor", `{"type":"object","properties":{"x":{"$ref":"#loop"}},"$defs":{"a":{"$anchor":"loop","allOf":[{"$ref":"#loop"}]}}}`,
			[]string{"#/$defs/a", "#/$defs/a/allOf/0", "#/$defs/a"}},
		{"by $id", `{"$id":"https://example.com/root.json","type":"object","properties":{"x":{"$ref":"other.json"}},"$defs":{"o":{"$id":"other.json","$ref":"root.json#/$defs/o"}}}`,
			[]string{"#/$defs/o", "#/$defs/o"}},
		{"dynamic ref", `{"$dynamicAnchor":"meta","type":"object","allOf":[{"$dynamicRef":"#meta"}]}`, []string{"#", "#/allOf/0", "#"}},
		{"escaped pointer", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a~1b"}},"$defs":{"a/b":{"$ref":"#/$defs/a~1b"}}}`, []string{"#/$defs/a~1b", "#/$defs/a~1b"}},
		{"percent-encoded pointer", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a%20b"}},"$defs":{"a b":{"not":{"$ref":"#/$defs/a%20b"}}}}`, []string{"#/$defs/a b", "#/$defs/a b/not", "#/$defs/a b"}},
		{"items list", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a/prefixItems/0"}},"$defs":{"a":{"prefixItems":[{"allOf":[{"$ref":"#/$defs/a/prefixItems/0"}]}]}}}`,
			[]string{"#/$defs/a/prefixItems/0", "#/$defs/a/prefixItems/0/allOf/0", "#/$defs/a/prefixItems/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ge := compileErr(t, tt.schema)
			assert.Equal(t, schemaguard.KindCycle, ge.Kind, ge.Msg)
			assert.Equal(t, tt.cycle, ge.Cycle)
			assert.Contains(t, ge.Msg, "reference cycle")
		})
	}
}

// TestRecursionThatConsumesTheValue: a schema that refers to itself
// through properties or items applies itself to a part of the value,
// which ends; it is accepted.
func TestRecursionThatConsumesTheValue(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"type":"object","additionalProperties":{"$ref":"#"}}`,
		`{"type":"object","propertyNames":{"$ref":"#"}}`,
		`{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}}}`,                                                                                        // never applied
		`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/o","allOf":[{"$ref":"#"}],"definitions":{"o":{"type":"object"}}}`, // draft-07 ignores allOf beside $ref
		`{"$dynamicAnchor":"node","type":"object","properties":{"kids":{"items":{"$dynamicRef":"#node"}}}}`,
	} {
		s, err := schemaguard.Compile([]byte(schema), schemaguard.Limits{})
		require.NoError(t, err, schema)
		var le *schemaguard.LimitError
		assert.False(t, errors.As(s.Validate(map[string]any{"children": []any{map[string]any{"children": []any{}}}}), &le))
	}
	s, err := schemaguard.Compile([]byte(`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`), schemaguard.Limits{})
	require.NoError(t, err)
	assert.ErrorContains(t, s.Validate(map[string]any{"children": []any{map[string]any{"children": "no"}}}), "type")
}

func nested(depth int, open, leaf, close string) string {
	return strings.Repeat(open, depth) + leaf + strings.Repeat(close, depth)
}

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestDeepValues(t *testing.T) {
	s, err := schemaguard.Compile([]byte(`{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}}}`), schemaguard.Limits{})
	require.NoError(t, err)
	// 9,000 levels: encoding/json decodes it (its bound is 10,000); the
	// check refuses it before the validator recurses.
	v := decode(t, `{"x":`+nested(9000, "[", "", "]")+`}`)
	err = s.Validate(v)
	var le *schemaguard.LimitError
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Depth)
	assert.Contains(t, err.Error(), "nested too deeply")
	// A value nested deeply where the schema does not look is no cost.
	any, err := schemaguard.Compile([]byte(`{"type":"object"}`), schemaguard.Limits{})
	require.NoError(t, err)
	assert.NoError(t, any.Validate(v))
	// A modest depth passes.
	assert.NoError(t, s.Validate(decode(t, `{"x":`+nested(100, "[", "", "]")+`}`)))
}

func TestExponentialWork(t *testing.T) {
	// Each level of the value is checked against the schema twice
	// (items and contains): 2^40 checks for 40 levels.
	s, err := schemaguard.Compile([]byte(`{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"contains":{"$ref":"#/$defs/n"}}}}`), schemaguard.Limits{})
	require.NoError(t, err)
	err = s.Validate(decode(t, `{"x":`+nested(40, "[", "", "]")+`}`))
	var le *schemaguard.LimitError
	require.ErrorAs(t, err, &le)
	assert.False(t, le.Depth)
	assert.Contains(t, err.Error(), "too large to check")

	// A chain of schemas that each apply the next twice, in place.
	var defs []string
	for i := range 30 {
		defs = append(defs, `"a`+itoa(i)+`":{"allOf":[{"$ref":"#/$defs/a`+itoa(i+1)+`"},{"$ref":"#/$defs/a`+itoa(i+1)+`"}]}`)
	}
	defs = append(defs, `"a30":{"type":"string"}`)
	ge := compileErr(t, `{"type":"object","properties":{"x":{"$ref":"#/$defs/a0"}},"$defs":{`+strings.Join(defs, ",")+`}}`)
	assert.Equal(t, schemaguard.KindExpansion, ge.Kind)
	assert.Contains(t, ge.Msg, "more than 1000 schemas")
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestNesting(t *testing.T) {
	deep := `{"type":"object","properties":{"a":` + nested(100, `{"type":"object","properties":{"a":`, `{}`, `}}`) + `}}`
	ge := compileErr(t, deep)
	assert.Equal(t, schemaguard.KindNesting, ge.Kind)
	assert.Contains(t, ge.Msg, "more than the 64 allowed")
	ok := `{"type":"object","properties":{"a":` + nested(20, `{"type":"object","properties":{"a":`, `{}`, `}}`) + `}}`
	_, err := schemaguard.Compile([]byte(ok), schemaguard.Limits{})
	assert.NoError(t, err)
	// Brackets inside strings do not count.
	_, err = schemaguard.Compile([]byte(`{"type":"object","description":"`+strings.Repeat("[{", 500)+`\"}"}`), schemaguard.Limits{})
	assert.NoError(t, err)
}

func TestPatterns(t *testing.T) {
	ge := compileErr(t, `{"type":"object","properties":{"x":{"type":"string","pattern":"`+strings.Repeat("(a{999})", 11)+`"}}}`)
	assert.Equal(t, schemaguard.KindPattern, ge.Kind)
	assert.Equal(t, "#/properties/x/pattern", ge.At)
	ge = compileErr(t, `{"type":"object","patternProperties":{"`+strings.Repeat("[a-z]", 300)+`":{}}}`)
	assert.Equal(t, schemaguard.KindPattern, ge.Kind)
	assert.Contains(t, ge.Msg, "bytes long")
	ge = compileErr(t, `{"type":"object","properties":{"x":{"pattern":"(unclosed"}}}`)
	assert.Equal(t, schemaguard.KindInvalid, ge.Kind)
	// Nested quantifiers are linear in RE2: accepted, and checked.
	s, err := schemaguard.Compile([]byte(`{"type":"object","patternProperties":{"^(a+)+$":{"type":"integer"}},"properties":{"s":{"type":"string","pattern":"^(a|aa)*$"}}}`), schemaguard.Limits{})
	require.NoError(t, err)
	assert.NoError(t, s.Validate(map[string]any{"aaaa": 1.0, "s": strings.Repeat("a", 10000)}))
	assert.Error(t, s.Validate(map[string]any{"aaaa": "x"}))
	// A large pattern on a long string costs its size times the length.
	big, err := schemaguard.Compile([]byte(`{"type":"object","properties":{"s":{"type":"string","pattern":"^`+strings.Repeat("(a{900})", 10)+`"}}}`), schemaguard.Limits{})
	require.NoError(t, err)
	err = big.Validate(map[string]any{"s": strings.Repeat("a", 2_000_000)})
	var le *schemaguard.LimitError
	assert.ErrorAs(t, err, &le)
}

func TestHugeEnum(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"x":{"type":"array","items":{"enum":[`)
	for i := range 100_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"v` + strings.Repeat("x", i%7) + `"`)
	}
	b.WriteString(`]}}}}`)
	s, err := schemaguard.Compile(b.Bytes(), schemaguard.Limits{})
	require.NoError(t, err)
	items := make([]any, 100)
	for i := range items {
		items[i] = "v"
	}
	err = s.Validate(map[string]any{"x": items})
	var le *schemaguard.LimitError
	assert.ErrorAs(t, err, &le, "100 items against 100,000 values each")
	assert.NoError(t, s.Validate(map[string]any{"x": items[:5]}))
}

func TestInvalid(t *testing.T) {
	for _, schema := range []string{`{"type":`, `{"type":5}`, `{"$ref":"#/nope"}`, `{"$ref":"https://elsewhere.example/s.json"}`, `[]`, `"x"`} {
		ge := compileErr(t, schema)
		assert.Equal(t, schemaguard.KindInvalid, ge.Kind, schema)
	}
}

// TestConformance: on the JSON Schema test suite that jsonschema-go
// ships, every schema it resolves compiles, and every verdict is the
// validator's own.
func TestConformance(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/jsonschema-go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skip("the jsonschema-go module is not in the module cache: no test suite to run")
	}
	checked := 0
	for draft, id := range map[string]string{"draft2020-12": "", "draft7": "http://json-schema.org/draft-07/schema#"} {
		files, _ := filepath.Glob(filepath.Join(dir, "jsonschema", "testdata", draft, "*.json"))
		if len(files) == 0 {
			t.Skipf("no test suite under %s", dir)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			var groups []struct {
				Description string
				Schema      json.RawMessage
				Tests       []struct {
					Description string
					Data        any
				}
			}
			require.NoError(t, json.Unmarshal(data, &groups), f)
			for _, g := range groups {
				raw := withDraft(g.Schema, id)
				s, err := schemaguard.Compile(raw, schemaguard.Limits{})
				if err != nil {
					var ge *schemaguard.Error
					require.ErrorAs(t, err, &ge)
					assert.Equal(t, schemaguard.KindInvalid, ge.Kind, "%s: %s: %v", filepath.Base(f), g.Description, err)
					// Only what jsonschema-go itself cannot resolve (remote
					// references: no loader) is refused.
					assert.Contains(t, err.Error(), "does not resolve", "%s: %s", filepath.Base(f), g.Description)
					continue
				}
				for _, tc := range g.Tests {
					want := s.Resolved().Validate(tc.Data)
					got := s.Validate(tc.Data)
					assert.Equal(t, want == nil, got == nil, "%s: %s: %s: %v / %v", filepath.Base(f), g.Description, tc.Description, want, got)
					checked++
				}
			}
		}
	}
	t.Logf("%d values checked", checked)
	assert.Greater(t, checked, 1000)
}

func withDraft(raw json.RawMessage, id string) []byte {
	t := bytes.TrimSpace(raw)
	if id == "" || len(t) == 0 || t[0] != '{' || bytes.Contains(t, []byte(`"$schema"`)) {
		return t
	}
	rest := bytes.TrimSpace(t[1:])
	if len(rest) > 0 && rest[0] == '}' {
		return []byte(`{"$schema":"` + id + `"}`)
	}
	return append([]byte(`{"$schema":"`+id+`",`), rest...)
}
