package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/editdist"
	"github.com/go-harness/harness/internal/schemaguard"
	"github.com/go-harness/harness/internal/textcut"
)

// Registry is a set of tools with compiled argument schemas. It is
// immutable once built and safe for concurrent use.
type Registry struct {
	order  []string
	byName map[string]*entry
}

type entry struct {
	tool Tool
	spec Spec

	// The schema is compiled when first needed (see NewRegistry); once
	// guards schema, summary and err.
	once    sync.Once
	schema  *schemaguard.Schema
	summary string
	err     error
}

// compiled returns the tool's compiled schema and its parameter summary,
// compiling it on the first call.
func (e *entry) compiled() (*schemaguard.Schema, string, error) {
	e.once.Do(func() {
		if e.schema == nil {
			e.schema, e.err = compileSchema(e.spec.Name, e.spec.InputSchema)
		}
		if e.err == nil {
			s := *e.schema.Source()
			s.PropertyOrder = propertyOrder(e.spec.InputSchema)
			e.summary = summarize(&s)
		}
	})
	return e.schema, e.summary, e.err
}

// NewRegistry checks each tool's spec (snake_case unique name, description,
// a schema of an object that is safe to check arguments against) and
// returns the registry. Tools keep the order given, which is the order
// their schemas are sent to the model.
//
// A schema that could make a check recurse for ever or cost without
// bound (a reference cycle, a fan-out of applied schemas, text nested
// too deeply, a pattern too large) is refused here, with a
// [*SchemaError], as is one that is not of an object. Compiling a schema
// is the costly part of registering a tool, and a session calls few of
// its tools: a plain schema (one without references, applicators and
// patterns, see schemaguard.Precheck) of an object is compiled when its
// tool is first called. Such a schema can fail to compile only by not
// being JSON Schema (a keyword of the wrong type); its calls then get an
// error result that says so.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]*entry, len(ts))}
	for _, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tools: nil tool")
		}
		if v, ok := t.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return nil, err
			}
		}
		spec := t.Spec()
		if err := validateSpec(spec); err != nil {
			return nil, err
		}
		if _, dup := r.byName[spec.Name]; dup {
			return nil, fmt.Errorf("tools: two tools are named %q", spec.Name)
		}
		e := &entry{tool: t, spec: spec}
		lazy, err := precheckSchema(spec.Name, spec.InputSchema)
		if err != nil {
			return nil, err
		}
		if !lazy {
			if e.schema, err = compileSchema(spec.Name, spec.InputSchema); err != nil {
				return nil, err
			}
		}
		r.byName[spec.Name] = e
		r.order = append(r.order, spec.Name)
	}
	return r, nil
}

// Specs returns the specs of the registered tools in registration order.
func (r *Registry) Specs() []Spec {
	out := make([]Spec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byName[n].spec)
	}
	return out
}

// Check resolves call's tool, decodes its arguments and validates them
// against the tool's schema. On success it sets call.Spec, the call's
// tool and its decoded arguments ([Call.Args]) and returns nil.
// Otherwise it returns an error result that tells the model what was
// wrong and how to fix it.
func (r *Registry) Check(call *Call) *harness.ToolResult {
	e, ok := r.byName[call.Name]
	if !ok {
		return r.unknown(call.Name)
	}
	schema, summary, err := e.compiled()
	if err != nil {
		return harness.ErrorResult(harness.CodeToolFailed,
			"The %s tool cannot be called: its input schema does not compile (%v). The fault is the tool's, not the call's: do without this tool.",
			call.Name, err)
	}
	v, err := decodeArgs(call.Arguments)
	if err != nil {
		return harness.ErrorResult(harness.CodeInvalidArguments,
			"The arguments of this %s call are not valid JSON (%v). Send exactly one JSON object. %s",
			call.Name, err, summary)
	}
	args, isObject := v.(map[string]any)
	if !isObject {
		return harness.ErrorResult(harness.CodeInvalidArguments,
			"The arguments of this %s call must be a JSON object, not %s. %s", call.Name, jsonKind(v), summary)
	}
	if err := schema.ValidateDecoded(args); err != nil {
		if le := (*schemaguard.LimitError)(nil); errors.As(err, &le) {
			return harness.ErrorResult(harness.CodeInvalidArguments,
				"The arguments of this %s call could not be checked: %v. Send smaller, less deeply nested arguments. %s", call.Name, le, summary)
		}
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		if len(msg) > maxSchemaMessage {
			// anyOf and oneOf report every branch; a deep value makes that long.
			msg = fmt.Sprintf("%s … (%d more bytes of the validator's report)", textcut.Prefix(msg, maxSchemaMessage), len(msg)-len(textcut.Prefix(msg, maxSchemaMessage)))
		}
		return harness.ErrorResult(harness.CodeInvalidArguments,
			"The arguments of this %s call do not match its schema: %s. %s", call.Name, msg, summary)
	}
	call.Spec = e.spec
	call.tool = e.tool
	call.args = args
	return nil
}

// maxSchemaMessage bounds the validator's report quoted to the model.
const maxSchemaMessage = 2000

func (r *Registry) unknown(name string) *harness.ToolResult {
	names := append([]string(nil), r.order...)
	sort.Strings(names)
	var hint string
	if best, ok := closest(name, names); ok {
		hint = fmt.Sprintf(" Did you mean %q?", best)
	}
	if len(names) == 0 {
		return harness.ErrorResult(harness.CodeUnknownTool, "There is no tool named %q: no tools are available in this session.", name)
	}
	return harness.ErrorResult(harness.CodeUnknownTool, "There is no tool named %q.%s Available tools: %s.",
		name, hint, strings.Join(names, ", "))
}

// summarize lists the parameters of an object schema for error messages:
// "Parameters: file_path (string, required), offset (integer)."
func summarize(s *jsonschema.Schema) string {
	names := s.PropertyOrder
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	if len(names) == 0 {
		return "This tool takes no parameters: send {}."
	}
	required := map[string]bool{}
	for _, n := range s.Required {
		required[n] = true
	}
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := s.Properties[n]
		typ := "any"
		if p != nil {
			switch {
			case p.Type != "":
				typ = p.Type
			case len(p.Types) > 0:
				typ = strings.Join(p.Types, " or ")
			}
		}
		if required[n] {
			typ += ", required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", n, typ))
	}
	return "Parameters: " + strings.Join(parts, ", ") + "."
}

// propertyOrder returns the keys of the schema's "properties" object in
// the order they appear in the JSON text.
func propertyOrder(raw json.RawMessage) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top["properties"]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		keys = append(keys, key)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "a value"
}

// closest returns the name nearest to s by edit distance, if it is near
// enough to be a plausible typo.
func closest(s string, names []string) (string, bool) {
	best, bestD := "", -1
	for _, n := range names {
		d := editdist.Distance(strings.ToLower(s), n)
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD < 0 || bestD > max(2, len(s)/3) {
		return "", false
	}
	return best, true
}
