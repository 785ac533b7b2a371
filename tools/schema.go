package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/schemaguard"
)

// CodeInvalidSchema (invalid_schema) is the code of a [*SchemaError]: a
// tool's input schema that the registry refuses.
const CodeInvalidSchema harness.Code = "invalid_schema"

// SchemaError reports a tool input schema that [NewRegistry] refuses:
// one that is not a JSON Schema of an object, does not resolve, or could
// not be checked safely: nested too deeply, with a regular expression
// too large to match quickly, with a reference cycle ($ref, allOf, anyOf,
// oneOf, not or if/then/else applying a schema to the same value again,
// which would make checking any arguments recurse forever), or applying
// too many schemas to one value. It matches [CodeInvalidSchema] with
// errors.Is.
type SchemaError struct {
	// Tool is the name of the tool whose schema is refused.
	Tool string
	// Reason says what is wrong, in a word: "invalid", "not_object",
	// "nesting", "pattern", "cycle" or "expansion".
	Reason string
	// At is the JSON Pointer, as a URI fragment ("#/$defs/node"), of the
	// part of the schema at fault, when there is one.
	At string
	// Cycle, for a reference cycle, lists the schemas around it as URI
	// fragments, the first repeated at the end.
	Cycle []string
	// Err is the underlying problem.
	Err error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("tools: %s: input schema refused: %v", e.Tool, e.Err)
}

// Unwrap returns the underlying problem.
func (e *SchemaError) Unwrap() error { return e.Err }

// Is reports whether target is CodeInvalidSchema.
func (e *SchemaError) Is(target error) bool { return target == CodeInvalidSchema }

// ErrorCode returns "invalid_schema", for harness.CodeOf.
func (e *SchemaError) ErrorCode() string { return string(CodeInvalidSchema) }

// CheckSchema checks the input schema of the tool named name as fully
// as the tool's first call does. NewRegistry refuses hostile schemas at
// once but compiles a plain schema (no references, combinators or
// patterns) at its tool's first call, so a plain schema that is not
// valid JSON Schema fails that call instead. A host that wants such a
// schema refused up front, before it offers the tool, calls
// CheckSchema. A schema it refuses is a *SchemaError.
func CheckSchema(name string, raw json.RawMessage) error {
	_, err := compileSchema(name, raw)
	return err
}

// compileSchema checks and resolves the input schema of the tool named
// name as NewRegistry does, and returns it ready to check arguments
// against. A schema it refuses is a *SchemaError.
func compileSchema(name string, raw json.RawMessage) (*schemaguard.Schema, error) {
	s, err := schemaguard.Compile(raw, schemaguard.Limits{})
	if err != nil {
		se := &SchemaError{Tool: name, Reason: schemaguard.KindInvalid, Err: err}
		var ge *schemaguard.Error
		if errors.As(err, &ge) {
			se.Reason, se.At, se.Cycle = ge.Kind, ge.At, ge.Cycle
		}
		return nil, se
	}
	if t := s.Source().Type; t != "object" {
		what := fmt.Sprintf("%q", t)
		if t == "" {
			what = "no type"
			if len(s.Source().Types) > 0 {
				what = strings.Join(s.Source().Types, " or ")
			}
		}
		return nil, &SchemaError{Tool: name, Reason: "not_object",
			Err: fmt.Errorf("the schema must describe an object (\"type\": \"object\"), not %s", what)}
	}
	return s, nil
}

// precheckSchema makes the checks of the input schema of the tool named
// name that NewRegistry makes at once for every schema: those against
// hostile schemas that need no decoding (schemaguard.Precheck), and the
// type of the top level. It reports whether the full compile may wait
// for the tool's first call: the schema is plain and of an object. A
// schema it refuses is a *SchemaError.
func precheckSchema(name string, raw json.RawMessage) (lazy bool, err error) {
	plain, err := schemaguard.Precheck(raw, schemaguard.Limits{})
	if err != nil {
		var ge *schemaguard.Error
		errors.As(err, &ge)
		return false, &SchemaError{Tool: name, Reason: ge.Kind, At: ge.At, Err: err}
	}
	if !plain {
		return false, nil
	}
	var top struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return false, nil // the compile says what is wrong
	}
	return string(top.Type) == `"object"`, nil
}
