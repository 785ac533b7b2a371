package schemaguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// gen builds schemas and values from fuzz bytes: each choice takes one
// byte, and an exhausted input chooses 0.
type gen struct {
	b []byte
}

func (g *gen) next(n int) int {
	if len(g.b) == 0 || n <= 0 {
		return 0
	}
	c := int(g.b[0])
	g.b = g.b[1:]
	return c % n
}

var (
	genNames   = []string{"a", "b", "path", "mode", "n"}
	genStrings = []string{`""`, `"a"`, `"b"`, `"é"`, `"path"`, `"ab"`}
	genNumbers = []string{"0", "-0", "1", "2", "2.0", "1.5", "-3", "1e2", "10", "1e400", "-1e400", "1e-400", "0.1", "3"}
	genTypes   = []string{"null", "boolean", "integer", "number", "string", "array", "object", "foo"}
)

// scalar is a JSON scalar.
func (g *gen) scalar() string {
	switch g.next(4) {
	case 0:
		return genStrings[g.next(len(genStrings))]
	case 1:
		return genNumbers[g.next(len(genNumbers))]
	case 2:
		return []string{"true", "false"}[g.next(2)]
	}
	return "null"
}

// schema is a schema of the kinds the fast check models, with now and
// then a keyword it does not.
func (g *gen) schema(depth int) string {
	if depth > 3 || g.next(8) == 0 {
		return []string{`true`, `false`, `{}`, `{"not":{}}`}[g.next(4)]
	}
	var kv []string
	add := func(k, v string) { kv = append(kv, strconv.Quote(k)+":"+v) }
	for range 1 + g.next(4) {
		switch g.next(20) {
		case 0, 1:
			add("type", strconv.Quote(genTypes[g.next(len(genTypes))]))
		case 2:
			var ts []string
			for range g.next(3) {
				ts = append(ts, strconv.Quote(genTypes[g.next(len(genTypes))]))
			}
			add("type", "["+strings.Join(ts, ",")+"]")
		case 3:
			var es []string
			for range g.next(4) {
				es = append(es, g.scalar())
			}
			add("enum", "["+strings.Join(es, ",")+"]")
		case 4:
			add("const", g.scalar())
		case 5:
			add([]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}[g.next(5)], genNumbers[g.next(len(genNumbers)-5)])
		case 6:
			add([]string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}[g.next(6)], strconv.Itoa(g.next(4)))
		case 7, 8, 9:
			var ps []string
			for range 1 + g.next(3) {
				ps = append(ps, strconv.Quote(genNames[g.next(len(genNames))])+":"+g.schema(depth+1))
			}
			add("properties", "{"+strings.Join(ps, ",")+"}")
		case 10, 11:
			var rs []string
			for range 1 + g.next(2) {
				rs = append(rs, strconv.Quote(genNames[g.next(len(genNames))]))
			}
			add("required", "["+strings.Join(rs, ",")+"]")
		case 12, 13:
			add("additionalProperties", g.schema(depth+1))
		case 14, 15:
			add("items", g.schema(depth+1))
		case 16:
			add("description", `"text"`)
		case 17:
			// Keywords the fast check does not model.
			switch g.next(6) {
			case 0:
				add("pattern", `"^a"`)
			case 1:
				add("uniqueItems", "true")
			case 2:
				add("anyOf", "["+g.schema(depth+1)+","+g.schema(depth+1)+"]")
			case 3:
				add("enum", `[[1],{"a":1}]`)
			case 4:
				add("not", g.schema(depth+1))
			case 5:
				add("dependentRequired", `{"a":["b"]}`)
			}
		case 18:
			add("format", `"uri"`)
		case 19:
			add("x-extra", `{"type":"string"}`)
		}
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// value is a JSON value.
func (g *gen) value(depth int) string {
	if depth > 3 {
		return g.scalar()
	}
	switch g.next(6) {
	case 0:
		var es []string
		for range g.next(4) {
			es = append(es, g.value(depth+1))
		}
		return "[" + strings.Join(es, ",") + "]"
	case 1, 2:
		var ps []string
		for range g.next(4) {
			ps = append(ps, strconv.Quote(genNames[g.next(len(genNames))])+":"+g.value(depth+1))
		}
		return "{" + strings.Join(ps, ",") + "}"
	}
	return g.scalar()
}

// agree compiles schema and checks value against it both ways: the fast
// check must never accept what the validator refuses, and on the
// schemas it models it must accept what the validator accepts.
func agree(t *testing.T, schema, value string) {
	t.Helper()
	s, err := Compile([]byte(schema), Limits{})
	if err != nil {
		return
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	full := s.res.Validate(PlainNumbers(v))
	if s.fast == nil {
		return
	}
	fast := s.fast.valid(v)
	if fast != (full == nil) {
		t.Fatalf("the fast check says valid=%v, the validator %v\nschema: %s\nvalue:  %s", fast, full, schema, value)
	}
	// ValidateDecoded gives the validator's verdict.
	if got := s.ValidateDecoded(v); (got == nil) != (full == nil) {
		t.Fatalf("ValidateDecoded: %v, the validator: %v\nschema: %s\nvalue:  %s", got, full, schema, value)
	}
}

// FuzzFastAgrees builds a random schema and a random value from the
// input and runs the fast check and the validator on them: they must
// give the same verdict.
func FuzzFastAgrees(f *testing.F) {
	for i := range 64 {
		f.Add([]byte(fmt.Sprintf("%d seed %d", i, i*i)), []byte{byte(i), byte(i * 7), byte(i * 13)})
	}
	f.Fuzz(func(t *testing.T, sb, vb []byte) {
		g := &gen{b: sb}
		schema := g.schema(0)
		g = &gen{b: vb}
		for range 4 {
			agree(t, schema, g.value(0))
		}
	})
}

// FuzzFastAgreesText runs the fast check and the validator on a schema
// and a value given as text.
func FuzzFastAgreesText(f *testing.F) {
	f.Add(`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer","minimum":1}},"required":["file_path"],"additionalProperties":false}`, `{"file_path":"a","offset":2.0}`)
	f.Add(`{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]}}}`, `{"mode":"c"}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":1e400}`)
	f.Add(`{"type":"object","properties":{"n":{"type":["null","integer"]}}}`, `{"n":null}`)
	f.Add(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string"},"maxItems":2}}}`, `{"xs":["a","b","c"]}`)
	f.Add(`{"type":"object","additionalProperties":{"type":"number"}}`, `{"a":1,"b":"x"}`)
	f.Fuzz(func(t *testing.T, schema, value string) {
		agree(t, schema, value)
	})
}

// TestFastModels checks which schemas the fast check takes: those of
// tools are, those with keywords it does not model are not.
func TestFastModels(t *testing.T) {
	for _, c := range []struct {
		schema string
		fast   bool
	}{
		{`{"type":"object","properties":{"file_path":{"type":"string","description":"x"},"offset":{"type":"integer","minimum":1}},"required":["file_path"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"}},"required":["old"]}}}}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"m":{"enum":["a","b",null,1]}}}`, true},
		{`{"type":"object","properties":{"p":{"type":"string","pattern":"^a"}}}`, false},
		{`{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`, false},
		{`{"type":"object","properties":{"p":{"enum":[[1]]}}}`, false},
		{`{"type":"object","anyOf":[{},{}]}`, false},
		{`{"type":"object","properties":{"p":{"type":"array","uniqueItems":true}}}`, false},
	} {
		s, err := Compile([]byte(c.schema), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if s.Fast() != c.fast {
			t.Errorf("%s: Fast() = %v, want %v", c.schema, s.Fast(), c.fast)
		}
	}
}

// TestValidateDecodedAllocations: a valid value of a modelled schema is
// checked without allocating.
func TestValidateDecodedAllocations(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer","minimum":1},"mode":{"enum":["a","b"]}},"required":["file_path"],"additionalProperties":false}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"file_path": "/a/b.go", "offset": json.Number("10"), "mode": "b"}
	if n := testing.AllocsPerRun(100, func() {
		if err := s.ValidateDecoded(v); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ValidateDecoded allocates %v times a check, want 0", n)
	}
	// An invalid value still gets the validator's message.
	v["offset"] = json.Number("0")
	if err := s.ValidateDecoded(v); err == nil || !strings.Contains(err.Error(), "minimum: 0/1 is less than 1") {
		t.Errorf("ValidateDecoded of an offset of 0: %v", err)
	}
}

// FuzzPrecheck: a schema Precheck calls plain is one Compile refuses,
// if at all, only as invalid: never for a cycle, a fan-out or a
// pattern; and Precheck refuses deep nesting as Compile does.
func FuzzPrecheck(f *testing.F) {
	f.Add(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)
	f.Add(`{"type":"object","properties":{"p":{"type":"string","pattern":"(a{1000}){1000}"}}}`)
	f.Add(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`)
	f.Add(`{"type":"object","properties":{"p":{"\u0024ref":"#"}}}`)
	f.Add(`{"allOf":[{"allOf":[{},{}]},{"allOf":[{},{}]}]}`)
	f.Add(`{"type":"object","patternProperties":{"^a":{}}}`)
	f.Add(strings.Repeat("[", 100) + strings.Repeat("]", 100))
	f.Fuzz(func(t *testing.T, schema string) {
		plain, perr := Precheck([]byte(schema), Limits{})
		_, cerr := Compile([]byte(schema), Limits{})
		var pe, ce *Error
		if perr != nil {
			if !errors.As(perr, &pe) || pe.Kind != KindNesting || !errors.As(cerr, &ce) || ce.Kind != KindNesting || pe.Msg != ce.Msg {
				t.Fatalf("Precheck: %v; Compile: %v", perr, cerr)
			}
			return
		}
		if plain && cerr != nil && (!errors.As(cerr, &ce) || ce.Kind != KindInvalid) {
			t.Fatalf("Precheck calls %s plain, and Compile refuses it: %v", schema, cerr)
		}
	})
}
