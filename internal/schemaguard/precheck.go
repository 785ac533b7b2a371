package schemaguard

import (
	"bytes"
	"fmt"
)

// Precheck makes the checks of Compile that need no decoding, for a
// caller that compiles later: text nested deeper than Limits.MaxNesting
// is the same *Error Compile returns. It reports whether the schema is
// plain: no string in its text names a keyword that applies schemas to
// the same value or refers to one ($ref, $dynamicRef, allOf, anyOf,
// oneOf, not, if, then, else, dependentSchemas, dependencies, $id,
// $anchor, $dynamicAnchor) or holds a regular expression
// (patternProperties, and pattern as a key whose value is not an object:
// a property may be named pattern), and no string is written with a \u escape of a
// letter, digit or "$" that could spell one. A plain schema has no
// reference cycle, applies one schema to each value and has no pattern,
// so of Compile's refusals only those of decoding and resolving
// (KindInvalid) remain for it. Precheck reads the text once and does not
// allocate.
func Precheck(raw []byte, lim Limits) (plain bool, err error) {
	lim = lim.withDefaults()
	if d := nesting(raw); d > lim.MaxNesting {
		return false, &Error{Kind: KindNesting, Msg: fmt.Sprintf("the schema nests %d levels deep, more than the %d allowed", d, lim.MaxNesting)}
	}
	plain = true
	for i := 0; i < len(raw) && plain; i++ {
		if raw[i] != '"' {
			continue
		}
		// A string: find its end, noting escapes.
		j := i + 1
		for j < len(raw) && raw[j] != '"' {
			if raw[j] == '\\' {
				if j+1 < len(raw) && raw[j+1] == 'u' && hidesName(raw[j+2:]) {
					plain = false
				}
				j++
			}
			j++
		}
		if j > len(raw) {
			j = len(raw)
		}
		if name := raw[i+1 : j]; riskyName(name) && !(string(name) == "pattern" && !regexpFollows(raw[min(j+1, len(raw)):])) {
			plain = false
		}
		i = j
	}
	return plain, nil
}

// regexpFollows reports whether rest, the text after the string
// "pattern", may hold a regular expression: the string is a key whose
// value is not an object. A property may be named "pattern" (its value
// an object), and a list of required properties may name it.
func regexpFollows(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	return len(rest) == 0 || rest[0] != '{'
}

// riskyNames are the keywords that make a schema not plain (see
// Precheck).
var riskyNames = [][]byte{
	[]byte("$ref"), []byte("$dynamicRef"), []byte("$recursiveRef"), []byte("allOf"), []byte("anyOf"), []byte("oneOf"),
	[]byte("not"), []byte("if"), []byte("then"), []byte("else"), []byte("dependentSchemas"), []byte("dependencies"),
	[]byte("$id"), []byte("$anchor"), []byte("$dynamicAnchor"), []byte("$recursiveAnchor"),
	[]byte("pattern"), []byte("patternProperties"),
}

func riskyName(s []byte) bool {
	for _, n := range riskyNames {
		if bytes.Equal(s, n) {
			return true
		}
	}
	return false
}

// hidesName reports whether the four hex digits at the start of h
// (after a \u) write a letter, a digit or "$", which a keyword's name
// may be spelled with. Unreadable digits count as hiding one.
func hidesName(h []byte) bool {
	if len(h) < 4 {
		return true
	}
	var r rune
	for _, c := range h[:4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return true
		}
		r = r<<4 | rune(d)
	}
	return r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}
