package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/go-harness/harness"
)

// Define returns a tool that decodes its arguments into In and calls fn.
//
// When spec.InputSchema is empty, the schema is inferred from In: json
// tags name the fields, a `jsonschema:"..."` tag describes a field, and
// fields tagged omitempty or omitzero are optional (a pointer makes an
// optional field's absence visible). Unknown fields are refused. A problem
// with the definition (an invalid name, a type that has no schema) is
// reported by the tool's Validate method, which [NewRegistry] calls, so a
// misdefined tool never reaches a model.
func Define[In any](spec Spec, fn func(ctx context.Context, call *Call, in In) (*harness.ToolResult, error)) Tool {
	t := &funcTool[In]{spec: spec, fn: fn}
	if len(spec.InputSchema) == 0 {
		t.spec.InputSchema, t.err = schemaFor[In]()
	}
	if t.err == nil && fn == nil {
		t.err = fmt.Errorf("tools: %s: nil function", spec.Name)
	}
	return t
}

type funcTool[In any] struct {
	spec Spec
	fn   func(context.Context, *Call, In) (*harness.ToolResult, error)
	err  error
}

func (t *funcTool[In]) Spec() Spec { return t.spec }

// Validate reports a problem with the tool's definition.
func (t *funcTool[In]) Validate() error { return t.err }

func (t *funcTool[In]) Execute(ctx context.Context, call *Call) (*harness.ToolResult, error) {
	if t.err != nil {
		return nil, t.err
	}
	var in In
	dec := json.NewDecoder(strings.NewReader(typedArguments(call)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Err: err,
			Message: fmt.Sprintf("The arguments could not be decoded for the %s tool: %v. Send one JSON object that matches its schema.", t.spec.Name, err)}
	}
	return t.fn(ctx, call, in)
}

// schemaFor infers the JSON Schema of a tool argument struct, in the form
// Define uses: properties in field order, optional fields typed plainly
// (a *int field is "integer", not ["null","integer"]), unknown properties
// refused.
func schemaFor[In any]() (json.RawMessage, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("tools: inferring argument schema: %w", err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("tools: arguments must be a struct, got schema type %q", s.Type)
	}
	simplifyNullable(s)
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tools: encoding argument schema: %w", err)
	}
	return b, nil
}

// simplifyNullable rewrites ["null", T] property types of optional
// properties to T: models handle a plain type better, and an absent field
// already means "not given".
func simplifyNullable(s *jsonschema.Schema) {
	for name, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" && !slices.Contains(s.Required, name) {
			p.Type, p.Types = p.Types[1], nil
		}
		simplifyNullable(p)
	}
	if s.Items != nil {
		simplifyNullable(s.Items)
	}
}

// isToolName reports whether name is a tool name: snake_case, a
// lower-case letter then lower-case letters, digits and underscores, at
// most 64 bytes in all.
func isToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isMCPToolName reports whether name is the name of an MCP server's
// tool, mcp__server__tool: "mcp__" then 1 to 59 letters, digits,
// underscores and hyphens, which keeps the server's spelling within what
// providers accept.
func isMCPToolName(name string) bool {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok || len(rest) == 0 || len(rest) > 59 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validateSpec checks what every tool must get right.
func validateSpec(s Spec) error {
	if !isToolName(s.Name) && !isMCPToolName(s.Name) {
		return fmt.Errorf("tools: tool name %q is not snake_case (a-z, 0-9, _; at most 64 characters, starting with a letter)", s.Name)
	}
	if s.Description == "" {
		return fmt.Errorf("tools: %s: empty description", s.Name)
	}
	if len(s.InputSchema) == 0 {
		return fmt.Errorf("tools: %s: empty input schema", s.Name)
	}
	if s.Deadline < 0 {
		return fmt.Errorf("tools: %s: negative deadline", s.Name)
	}
	return nil
}
