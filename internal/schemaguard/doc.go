// Package schemaguard makes a JSON Schema from an untrusted source safe to
// check values against. The validator of github.com/google/jsonschema-go
// recurses through $ref, allOf and the other keywords that apply a schema
// to the same value without any bound: a reference cycle (a → b → a, or a
// schema that refers to itself through allOf) makes it recurse until the
// Go runtime aborts the whole process with a stack overflow, which no
// recover catches; a chain of schemas that each apply two others makes
// the work grow exponentially; a large counted repetition in a pattern
// makes every match slow. A tool's input schema comes from whoever wrote
// the tool, which for an MCP server is a program the host does not
// control, and its arguments come from the model.
//
// [Compile] resolves a schema and refuses what the validator cannot check
// safely, before any value is checked: text nested deeper than
// Limits.MaxNesting, patterns longer than Limits.MaxPatternBytes or
// compiling to more than Limits.MaxPatternInsts instructions, a cycle of
// schemas applied to the same value (the error names the schemas around
// the cycle by JSON Pointer), and schemas that apply more than
// Limits.MaxExpansion schemas to one value. The schema's own $ref
// resolution ($id, $anchor, JSON Pointers, $dynamicRef) is mirrored to
// find the graph; a $dynamicRef that resolves at validation time is
// taken to reach every schema with that dynamic anchor.
//
// [Schema.Validate] then estimates, before the validator runs, how much
// work and how deep a recursion a value needs, following every keyword
// the validator may follow (more than it will, never less), and refuses
// a value past Limits.MaxDepth or Limits.MaxWork with a [*LimitError].
// So no value, however nested, makes the validator recurse without a
// bound, and none costs more than the budget.
//
// [Schema.ValidateDecoded] checks values decoded with json.Number: for
// schemas of the common kind it accepts a valid value with a compiled
// check that neither reflects nor allocates, and hands everything else to
// the validator, so verdicts and messages are the validator's.
// [Precheck] makes the checks that need no decoding, for a caller that
// compiles a plain schema only when it is first used.
//
// It imports only the standard library and jsonschema-go.
package schemaguard
