package schemaguard

import (
	"encoding/json"
	"math"
	"reflect"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// The fast check.
//
// Most tool schemas use a small part of JSON Schema: objects of scalar
// properties, enums, required properties, additionalProperties false,
// arrays of scalars, nested objects of the same kind. For those,
// compileFast builds a tree the fast check walks without reflection and
// without allocating. It decides only that a value is valid: a value it
// finds invalid, or a schema it does not model, goes to jsonschema-go's
// validator, which gives the verdict and the message. So the fast check
// must never accept a value the validator refuses; FuzzFastAgrees runs
// both on random schemas and values and fails on any disagreement.

// Bits of fastNode.types, one per JSON type.
const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeInteger
	typeNumber
	typeString
	typeArray
	typeObject
)

var typeBits = map[string]uint8{
	"null": typeNull, "boolean": typeBoolean, "integer": typeInteger, "number": typeNumber,
	"string": typeString, "array": typeArray, "object": typeObject,
}

// fastNode is one schema of the modelled kind.
type fastNode struct {
	// never: the schema refuses every value ("false", or a "not" of the
	// empty schema).
	never bool
	// typed: the schema has "type"; types are the bits of the types it
	// allows ("number" allowing integers too).
	typed bool
	types uint8

	enum     []any // string, float64, bool or nil values
	hasEnum  bool
	constVal any
	hasConst bool

	multipleOf, minimum, maximum, exclusiveMinimum, exclusiveMaximum *float64

	minLength, maxLength         *int
	minItems, maxItems           *int
	minProperties, maxProperties *int

	props      map[string]*fastNode
	required   []string
	additional *fastNode // nil: any property allowed
	items      *fastNode
}

// compileFast returns the fast tree of s, or nil when s (or a schema
// under it) uses a keyword the fast check does not model.
func compileFast(s *jsonschema.Schema) *fastNode {
	switch s.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
	default:
		return nil
	}
	return fastOf(s, 0)
}

// maxFastDepth bounds the recursion of compileFast; Compile's nesting
// limit bounds it already, this is a second guard.
const maxFastDepth = 64

func fastOf(s *jsonschema.Schema, depth int) *fastNode {
	if s == nil || depth > maxFastDepth {
		return nil
	}
	if s.Not != nil && reflect.ValueOf(*s.Not).IsZero() {
		// The validator fails a value on "not" whatever else the
		// schema says: the schema allows nothing.
		return &fastNode{never: true}
	}
	// Every keyword the validator reads but the fast check does not
	// model makes the schema unmodelled. Annotations, which it never
	// reads, do not count.
	rest := *s
	rest.ID, rest.Schema, rest.Comment, rest.Defs, rest.Definitions = "", "", "", nil, nil
	rest.Anchor, rest.DynamicAnchor = "", ""
	rest.Title, rest.Description, rest.Default, rest.Deprecated, rest.ReadOnly, rest.WriteOnly, rest.Examples = "", "", nil, false, false, false, nil
	rest.Type, rest.Types, rest.Enum, rest.Const = "", nil, nil, nil
	rest.MultipleOf, rest.Minimum, rest.Maximum, rest.ExclusiveMinimum, rest.ExclusiveMaximum = nil, nil, nil, nil, nil
	rest.MinLength, rest.MaxLength = nil, nil
	rest.Items, rest.MinItems, rest.MaxItems = nil, nil, nil
	rest.MinProperties, rest.MaxProperties, rest.Required, rest.Properties, rest.AdditionalProperties = nil, nil, nil, nil, nil
	rest.ContentEncoding, rest.ContentMediaType, rest.ContentSchema, rest.Format = "", "", nil, ""
	rest.Extra, rest.PropertyOrder = nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil
	}
	n := &fastNode{
		multipleOf: s.MultipleOf, minimum: s.Minimum, maximum: s.Maximum,
		exclusiveMinimum: s.ExclusiveMinimum, exclusiveMaximum: s.ExclusiveMaximum,
		minLength: s.MinLength, maxLength: s.MaxLength, minItems: s.MinItems, maxItems: s.MaxItems,
		minProperties: s.MinProperties, maxProperties: s.MaxProperties,
		required: s.Required,
	}
	if s.Type != "" || s.Types != nil {
		n.typed = true
		names := s.Types
		if s.Type != "" {
			names = []string{s.Type}
		}
		for _, t := range names {
			n.types |= typeBits[t]
		}
		if n.types&typeNumber != 0 {
			n.types |= typeInteger
		}
	}
	if s.Enum != nil {
		n.hasEnum = true
		for _, e := range s.Enum {
			if !scalar(e) {
				return nil
			}
		}
		n.enum = s.Enum
	}
	if s.Const != nil {
		if !scalar(*s.Const) {
			return nil
		}
		n.hasConst, n.constVal = true, *s.Const
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for k, c := range s.Properties {
			if n.props[k] = fastOf(c, depth+1); n.props[k] == nil {
				return nil
			}
		}
	}
	if s.AdditionalProperties != nil {
		if n.additional = fastOf(s.AdditionalProperties, depth+1); n.additional == nil {
			return nil
		}
	}
	if s.Items != nil {
		if n.items = fastOf(s.Items, depth+1); n.items == nil {
			return nil
		}
	}
	return n
}

// scalar reports whether v, a value of a decoded schema, is one the fast
// check compares: a string, a float64, a bool or null.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, float64, bool:
		return true
	}
	return false
}

// valid reports whether v (as encoding/json decodes into an any, numbers
// as float64 or json.Number) certainly satisfies n. false means "ask the
// validator".
func (n *fastNode) valid(v any) bool {
	if n.never {
		return false
	}
	switch x := v.(type) {
	case nil:
		return n.validScalar(typeNull, 0, "", false)
	case bool:
		return n.validScalar(typeBoolean, 0, "", x)
	case json.Number:
		// As the callers convert it for the validator (PlainNumbers).
		f, err := x.Float64()
		if err != nil {
			return n.validScalar(typeNull, 0, "", false)
		}
		return n.validScalar(numberType(f), f, "", false) && n.validNumber(f)
	case float64:
		return n.validScalar(numberType(x), x, "", false) && n.validNumber(x)
	case string:
		if !n.validScalar(typeString, 0, x, false) {
			return false
		}
		if n.minLength != nil || n.maxLength != nil {
			c := utf8.RuneCountInString(x)
			if n.minLength != nil && c < *n.minLength || n.maxLength != nil && c > *n.maxLength {
				return false
			}
		}
		return true
	case []any:
		if n.typed && n.types&typeArray == 0 || n.hasEnum || n.hasConst {
			return false // an array equals no scalar
		}
		if n.minItems != nil && len(x) < *n.minItems || n.maxItems != nil && len(x) > *n.maxItems {
			return false
		}
		if n.items != nil {
			for _, e := range x {
				if !n.items.valid(e) {
					return false
				}
			}
		}
		return true
	case map[string]any:
		if n.typed && n.types&typeObject == 0 || n.hasEnum || n.hasConst {
			return false
		}
		return n.validObject(x)
	}
	return false
}

// validScalar checks a scalar against type, enum and const: t is its
// type's bit, and f, s or b its value for a number, a string or a
// boolean.
func (n *fastNode) validScalar(t uint8, f float64, s string, b bool) bool {
	if n.typed && n.types&t == 0 {
		return false
	}
	if n.hasEnum {
		ok := false
		for _, e := range n.enum {
			if sameScalar(e, t, f, s, b) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return !n.hasConst || sameScalar(n.constVal, t, f, s, b)
}

func (n *fastNode) validNumber(f float64) bool {
	if m := n.multipleOf; m != nil {
		if _, frac := math.Modf(f / *m); frac != 0 {
			return false
		}
	}
	if n.minimum != nil && f < *n.minimum || n.maximum != nil && f > *n.maximum {
		return false
	}
	if n.exclusiveMinimum != nil && f <= *n.exclusiveMinimum || n.exclusiveMaximum != nil && f >= *n.exclusiveMaximum {
		return false
	}
	return true
}

func (n *fastNode) validObject(m map[string]any) bool {
	for k, c := range n.props {
		if e, ok := m[k]; ok && !c.valid(e) {
			return false
		}
	}
	if n.additional != nil {
		for k, e := range m {
			if _, known := n.props[k]; !known && !n.additional.valid(e) {
				return false
			}
		}
	}
	if n.minProperties != nil && len(m) < *n.minProperties || n.maxProperties != nil && len(m) > *n.maxProperties {
		return false
	}
	for _, k := range n.required {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// numberType is the type bit of a number, as the validator names it: a
// number with no fraction is an integer.
func numberType(f float64) uint8 {
	if _, frac := math.Modf(f); frac == 0 {
		return typeInteger
	}
	return typeNumber
}

// sameScalar reports whether e, a scalar of the schema, equals the
// scalar of type bit t (and value f, s or b) as the validator compares
// them: numbers by value, other values by type and value.
func sameScalar(e any, t uint8, f float64, s string, b bool) bool {
	switch x := e.(type) {
	case nil:
		return t == typeNull
	case float64:
		return (t == typeInteger || t == typeNumber) && f == x
	case string:
		return t == typeString && s == x
	case bool:
		return t == typeBoolean && b == x
	}
	return false
}
