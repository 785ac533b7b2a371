package tools

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// Args returns the call's arguments decoded: the JSON object as
// encoding/json decodes one into a map[string]any, with numbers as
// json.Number so that no digit is lost.
//
// The registry decodes the arguments once, when it checks the call, and
// every later reader uses that value: the typed adapter of [Define], the
// permission policy, the guards. A call the registry has not checked is
// decoded now, on every call of Args. Args returns nil when the arguments
// are not one JSON object. The map is shared: do not modify it.
func (c *Call) Args() map[string]any {
	if c.args != nil {
		return c.args
	}
	v, err := decodeArgs(c.Arguments)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// errTrailingData is the error of arguments with more than one JSON value.
var errTrailingData = errors.New("unexpected data after the first JSON value")

// decodeArgs decodes the arguments of a call, empty ones as {}: one JSON
// value, numbers as json.Number. It is the one place the module parses
// a call's arguments in full.
func decodeArgs(raw string) (any, error) {
	raw = argumentsOrEmpty(raw)
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(strings.Trim(raw[dec.InputOffset():], jsonSpace)) > 0 {
		return nil, errTrailingData
	}
	return v, nil
}

// jsonSpace is the white space JSON allows between tokens.
const jsonSpace = " \t\r\n"

// argumentsOrEmpty returns raw, or {} when it is empty or white space.
func argumentsOrEmpty(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "{}"
	}
	return raw
}

// typedArguments returns the text Define's adapter decodes into its
// struct: the arguments, with numbers of an integral value written as a
// float ("2.0", "1e2") rewritten to integer form, which Go integer fields
// accept; models write them that way now and then, and the schema allows
// them. A call the registry checked is rewritten from its decoded value,
// without parsing the text again.
func typedArguments(c *Call) string {
	raw := argumentsOrEmpty(c.Arguments)
	if !strings.ContainsAny(raw, ".eE") {
		return raw
	}
	v := any(c.args)
	if c.args == nil {
		// Not checked: decode what the adapter will decode, its first
		// value (trailing data is the decoder's to ignore).
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			return raw
		}
	}
	if !hasFloatIntegral(v) {
		return raw
	}
	out, err := json.Marshal(integral(v))
	if err != nil {
		return raw
	}
	return string(out)
}

// floatIntegral reports whether n is an integral value written as a
// float, and its integer form.
func floatIntegral(n json.Number) (string, bool) {
	if !strings.ContainsAny(string(n), ".eE") {
		return "", false
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// hasFloatIntegral reports whether v holds a number floatIntegral
// rewrites.
func hasFloatIntegral(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if hasFloatIntegral(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasFloatIntegral(e) {
				return true
			}
		}
	case json.Number:
		_, ok := floatIntegral(x)
		return ok
	}
	return false
}

// integral returns a copy of v with the numbers floatIntegral rewrites
// in integer form. v is not changed.
func integral(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = integral(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = integral(e)
		}
		return out
	case json.Number:
		if s, ok := floatIntegral(x); ok {
			return json.Number(s)
		}
	}
	return v
}
