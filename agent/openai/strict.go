package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// strictRules are what one dialect's strict mode (strict function
// calling, strict structured answers) takes.
type strictRules struct {
	// formats are the string formats it takes.
	formats []string
	// noItems refuses "minItems" and "maxItems"; strings never take
	// "minLength" or "maxLength".
	noItems bool
}

// openAIStrict is OpenAI's strict mode, which other endpoints copy.
var openAIStrict = strictRules{formats: []string{"date", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "time", "uuid"}}

// deepSeekStrict is DeepSeek's: fewer formats, and no bounds on the
// length of strings or arrays.
var deepSeekStrict = strictRules{formats: []string{"email", "hostname", "ipv4", "ipv6", "uuid"}, noItems: true}

// checkStrict reports the first place where schema breaks the rules of
// strict mode: the top level is an object; every object has
// "additionalProperties": false and lists all its properties in
// "required"; strings use only the formats the rules name and no length
// bounds; arrays no item-count bounds where the rules say so. The error
// names the field, as a dotted path.
func checkStrict(schema []byte, r strictRules) error {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return fmt.Errorf("the schema is not valid JSON: %v", err)
	}
	obj, ok := root.(map[string]any)
	if !ok || !isType(obj, "object") {
		return fmt.Errorf("the top level must be an object schema")
	}
	return r.checkNode(obj, "")
}

func (r strictRules) checkNode(s map[string]any, path string) error {
	where := "the top level"
	if path != "" {
		where = fmt.Sprintf("field %q", path)
	}
	props, _ := s["properties"].(map[string]any)
	if isType(s, "object") || props != nil {
		if ap, ok := s["additionalProperties"].(bool); !ok || ap {
			return fmt.Errorf(`%s is an object without "additionalProperties": false`, where)
		}
		req := map[string]bool{}
		if list, ok := s["required"].([]any); ok {
			for _, r := range list {
				if name, ok := r.(string); ok {
					req[name] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !req[name] {
				return fmt.Errorf(`field %q is not listed in "required" (strict mode makes every property required; make it nullable instead of optional)`, join(path, name))
			}
		}
		for _, name := range names {
			if sub, ok := props[name].(map[string]any); ok {
				if err := r.checkNode(sub, join(path, name)); err != nil {
					return err
				}
			}
		}
	}
	if f, ok := s["format"].(string); ok && !slices.Contains(r.formats, f) {
		return fmt.Errorf("%s uses the string format %q, which strict mode does not take (it takes %s)", where, f, strings.Join(r.formats, ", "))
	}
	bounds := []string{"minLength", "maxLength"}
	if r.noItems {
		bounds = append(bounds, "minItems", "maxItems")
	}
	for _, k := range bounds {
		if _, ok := s[k]; ok {
			return fmt.Errorf("%s sets %q, which strict mode does not take", where, k)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if err := r.checkNode(items, path+"[]"); err != nil {
			return err
		}
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		list, _ := s[k].([]any)
		for i, alt := range list {
			if sub, ok := alt.(map[string]any); ok {
				if err := r.checkNode(sub, fmt.Sprintf("%s(%s %d)", path, k, i)); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := s[k].(map[string]any)
		names := make([]string, 0, len(defs))
		for name := range defs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if sub, ok := defs[name].(map[string]any); ok {
				if err := r.checkNode(sub, "#/"+k+"/"+name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// isType reports whether a schema's "type" is t or a list holding t.
func isType(s map[string]any, t string) bool {
	switch v := s["type"].(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
