// Package tools defines the contract between the agent loop and the tools a
// model can call, and ships the typed adapter that turns a Go function into a
// tool.
//
// A [Tool] has a [Spec] (name, description, JSON Schema for its arguments, and
// the declarations the dispatcher reads: whether calls may run concurrently,
// whether they have side effects, how long they may run) and an Execute method
// that returns a *harness.ToolResult: the blocks the model sees (text and image
// references), an error flag with a stable harness.Code, a render intent for
// host UIs (generic, terminal, diff or locations; plain data, no UI types), and
// the file access records that let history pruning prove a file read
// superseded without knowing tool names. A returned error becomes an error
// result: return a *harness.Error to choose its code and model-facing text.
//
// [Define] builds a Tool from a function over a Go struct: the schema is
// inferred from the struct (json tags name the fields, `jsonschema` tags
// describe them, omitempty/omitzero fields are optional) and arguments are
// validated before the function runs.
//
// A [Registry] holds a set of tools and checks a [Call] before it runs:
// unknown names, malformed JSON and schema violations become error results
// whose text tells the model what was wrong. It decodes the arguments
// once; everything after it (the typed adapter, the permission policy,
// the guards) reads that value through [Call.Args]. A tool's input schema may
// come from a program the host does not control (an MCP server), so
// [NewRegistry] resolves and checks it first, and refuses with a
// [*SchemaError] (code "invalid_schema", naming the tool) a schema whose
// checking could take the process down: a $ref cycle (schemas applying
// each other to the same value, which would recurse forever; the error
// names the cycle), text nested more than 64 levels, a regular
// expression too large to match quickly, or more than 1,000 schemas
// applied to one value. A plain schema (no references, applicators or
// patterns) cannot do any of this but nest; it is compiled at its tool's
// first call, so a session pays only for the tools it uses. Each check of
// arguments is bounded too, in depth and in work: arguments too deeply
// nested or too large to check are refused with invalid_arguments before
// the validator runs. Arguments of the common schemas (objects of scalar
// properties, enums, required and additional properties, arrays, nested
// objects) are accepted by a compiled check that does not allocate; the
// validator decides the rest and words every refusal. Execution goes through a
// [Handler], a function; [Middleware] wraps handlers the way net/http middleware wraps
// http.Handler, which is how spill, guards and deadlines plug into dispatch.
//
// The [Env] is what a tool sees of its session: the session id and working
// directory, the file system, the per-session [State] for values that live as
// long as the session (ledgers, shell sessions), optional output and
// attachment stores, and a way to record tool-specific events in the session
// log.
//
// Model-facing names (tool names and argument fields) are public API: they
// are snake_case and stay stable once shipped.
//
// It imports harness (the vocabulary) and fs (the file system an Env
// carries); nothing of session, spill, guard or agent. The session log
// does not depend on it: what a result is, and how it is logged, is
// harness.ToolResult.
package tools
