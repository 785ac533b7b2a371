// Package schemaprompt writes the prompt text that asks a model for a
// structured answer where the endpoint cannot be given the schema itself
// (a "json_object" response format, or none): the schema as given, and
// an example of the shape derived from it, as DeepSeek's JSON output
// guide asks for.
//
// It imports harness only.
package schemaprompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-harness/harness"
)

// Bounds of an example derived from a schema.
const (
	maxDepth = 16
	maxBytes = 16 << 10
)

// Instruction is the text that asks for a structured answer: it says
// "JSON", carries the schema as given (compacted; an empty schema is any
// object) and an example derived from it when one can be ([Example]). A
// schema that is not JSON is an error.
func Instruction(schema []byte) (string, error) {
	var compact bytes.Buffer
	if len(bytes.TrimSpace(schema)) == 0 {
		compact.WriteString(`{"type":"object"}`)
	} else if err := json.Compact(&compact, schema); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("Answer with one JSON object and nothing else (no prose, no code fence). It must be valid against this JSON Schema:\n")
	b.Write(compact.Bytes())
	if ex, err := Example(compact.Bytes()); err == nil {
		b.WriteString("\nAn example of the shape, with placeholder values:\n")
		b.Write(ex)
	}
	return b.String(), nil
}

// Example returns a JSON value of the shape schema describes: its
// own examples, defaults, constants or first enum values where it gives
// them (in that order of preference), else a placeholder for each type (a string that fits a known
// format, 0 or the minimum for numbers, false, the properties of an
// object in the schema's order, one item of an array). Local references
// ("#/$defs/...", "#/definitions/...") are followed to a bounded depth.
// The example is compact JSON of at most 16 KiB; a schema that is not
// JSON is an error.
func Example(schema []byte) ([]byte, error) {
	root, err := parseOrdered(schema)
	if err != nil {
		return nil, err
	}
	e := &exampler{root: root}
	e.value(root, 0)
	if e.over {
		return nil, errors.New("the example would be too large")
	}
	return e.out, nil
}

// orderedObject is a JSON object with its members in document order.
type orderedObject []member

type member struct {
	key   string
	value any
}

func (o orderedObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// parseOrdered decodes one JSON value: objects as orderedObject, arrays
// as []any, numbers as json.Number, other values as encoding/json does.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the schema")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth int) (any, error) {
	if depth > 256 {
		return nil, errors.New("the schema nests too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var obj orderedObject
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, member{key, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if obj == nil {
				obj = orderedObject{}
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// exampler writes an example value.
type exampler struct {
	root any
	out  []byte
	over bool
}

// placeholders are the example strings of the formats strict modes and
// common schemas use.
var placeholders = map[string]string{
	"email": "user@example.com", "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
	"uuid": "123e4567-e89b-12d3-a456-426614174000", "date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01",
	"time": "12:00:00", "duration": "PT1H", "uri": "https://example.com/", "uri-reference": "/path",
}

func (e *exampler) raw(s string) {
	if len(e.out)+len(s) > maxBytes {
		e.over = true
		return
	}
	e.out = append(e.out, s...)
}

// literal writes a JSON value from the schema as it is.
func (e *exampler) literal(v any) {
	switch t := v.(type) {
	case orderedObject:
		e.raw("{")
		for i, m := range t {
			if i > 0 {
				e.raw(",")
			}
			e.str(m.key)
			e.raw(":")
			e.literal(m.value)
		}
		e.raw("}")
	case []any:
		e.raw("[")
		for i, x := range t {
			if i > 0 {
				e.raw(",")
			}
			e.literal(x)
		}
		e.raw("]")
	case json.Number:
		e.raw(t.String())
	case string:
		e.str(t)
	case bool:
		e.raw(fmt.Sprint(t))
	default:
		e.raw("null")
	}
}

func (e *exampler) str(s string) {
	b, _ := json.Marshal(s)
	e.raw(string(b))
}

// value writes an example of schema node s.
func (e *exampler) value(node any, depth int) {
	s, ok := node.(orderedObject)
	if !ok || depth > maxDepth || e.over {
		e.raw("null")
		return
	}
	if ref, ok := s.get("$ref"); ok {
		if target, ok := e.resolve(ref); ok {
			e.value(target, depth+1)
			return
		}
	}
	if v, ok := s.get("const"); ok {
		e.literal(v)
		return
	}
	if v, ok := s.get("examples"); ok {
		if list, ok := v.([]any); ok && len(list) > 0 {
			e.literal(list[0])
			return
		}
	}
	for _, k := range []string{"example", "default"} {
		if v, ok := s.get(k); ok {
			e.literal(v)
			return
		}
	}
	if v, ok := s.get("enum"); ok {
		if list, ok := v.([]any); ok && len(list) > 0 {
			e.literal(list[0])
			return
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if v, ok := s.get(k); ok {
			if list, ok := v.([]any); ok && len(list) > 0 {
				e.value(firstNotNull(list), depth+1)
				return
			}
		}
	}
	props, hasProps := s.get("properties")
	items, hasItems := s.get("items")
	switch typeOf(s) {
	case "object":
		e.raw("{")
		if po, ok := props.(orderedObject); ok && hasProps {
			for i, m := range po {
				if i > 0 {
					e.raw(",")
				}
				e.str(m.key)
				e.raw(":")
				e.value(m.value, depth+1)
			}
		}
		e.raw("}")
	case "array":
		if !hasItems {
			e.raw("[]")
			return
		}
		e.raw("[")
		e.value(items, depth+1)
		e.raw("]")
	case "string":
		f, _ := s.get("format")
		fs, _ := f.(string)
		if p, ok := placeholders[fs]; ok {
			e.str(p)
		} else {
			e.str("string")
		}
	case "integer", "number":
		if v, ok := s.get("minimum"); ok {
			if n, ok := v.(json.Number); ok {
				e.raw(n.String())
				return
			}
		}
		e.raw("0")
	case "boolean":
		e.raw("false")
	default:
		e.raw("null")
	}
}

// typeOf names the type of a schema: its "type" (the first one that is
// not "null" of a list), else what its keywords imply.
func typeOf(s orderedObject) string {
	switch t, _ := s.get("type"); v := t.(type) {
	case string:
		return v
	case []any:
		for _, x := range v {
			if name, ok := x.(string); ok && name != "null" {
				return name
			}
		}
		return "null"
	}
	if _, ok := s.get("properties"); ok {
		return "object"
	}
	if _, ok := s.get("items"); ok {
		return "array"
	}
	return ""
}

// firstNotNull returns the first alternative that is not the null type.
func firstNotNull(list []any) any {
	for _, alt := range list {
		if o, ok := alt.(orderedObject); ok {
			if t, _ := o.get("type"); t == "null" {
				continue
			}
		}
		return alt
	}
	return list[0]
}

// resolve follows a local reference.
func (e *exampler) resolve(ref any) (any, bool) {
	r, _ := ref.(string)
	var cur any = e.root
	if r == "#" {
		return cur, true
	}
	path, ok := strings.CutPrefix(r, "#/")
	if !ok {
		return nil, false
	}
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		o, ok := cur.(orderedObject)
		if !ok {
			return nil, false
		}
		if cur, ok = o.get(part); !ok {
			return nil, false
		}
	}
	return cur, true
}

// Message returns the user message that carries the instruction.
func Message(schema []byte) (harness.Message, error) {
	text, err := Instruction(schema)
	if err != nil {
		return harness.Message{}, err
	}
	return harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(text)}}, nil
}
