package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/schemaguard"
	"github.com/go-harness/harness/tools"
)

// rawTool is a tool with the schema it is given, as an MCP server's
// tools are.
type rawTool struct {
	name   string
	schema string
}

func (r rawTool) Spec() tools.Spec {
	return tools.Spec{Name: r.name, Description: "A tool with a schema from elsewhere.", InputSchema: json.RawMessage(r.schema)}
}

func (rawTool) Execute(context.Context, *tools.Call) (*harness.ToolResult, error) {
	return harness.TextResult("ran"), nil
}

// cyclicSchema is the schema of the report: checking {"x":{}} against it
// recursed through a → b → a until the Go runtime killed the process.
const cyclicSchema = `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`

// TestCyclicSchemaDoesNotKillTheProcess registers a schema with a $ref
// cycle and checks arguments against it, in a subprocess (this test
// binary run again), because before the fix the check overflowed the
// stack, which ends the process and no recover can catch.
func TestCyclicSchemaDoesNotKillTheProcess(t *testing.T) {
	if os.Getenv("HARNESS_TEST_CYCLIC_SCHEMA") == "1" {
		reg, err := tools.NewRegistry(rawTool{"cyclic", cyclicSchema})
		if err != nil {
			fmt.Printf("registration refused: %v\n", err)
			return
		}
		res := reg.Check(&tools.Call{Name: "cyclic", Arguments: `{"x":{}}`})
		fmt.Printf("check answered: %v\n", res)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCyclicSchemaDoesNotKillTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HARNESS_TEST_CYCLIC_SCHEMA=1")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	require.NoError(t, err, "the subprocess died:\n%s", text)
	assert.Contains(t, text, "registration refused: tools: cyclic: input schema refused: the schema has a reference cycle")
	assert.Contains(t, text, "#/$defs/a → #/$defs/b → #/$defs/a")
}

func TestSchemaErrors(t *testing.T) {
	_, err := tools.NewRegistry(rawTool{"cyclic", cyclicSchema})
	var se *tools.SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "cyclic", se.Tool)
	assert.Equal(t, "cycle", se.Reason)
	assert.Equal(t, []string{"#/$defs/a", "#/$defs/b", "#/$defs/a"}, se.Cycle)
	assert.ErrorIs(t, err, tools.CodeInvalidSchema)
	assert.Equal(t, tools.CodeInvalidSchema, harness.CodeOf(err))

	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{}` + strings.Repeat(`}}`, 200) + `}}`
	_, err = tools.NewRegistry(rawTool{"deep", deep})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "nesting", se.Reason)
	assert.ErrorContains(t, err, "tools: deep: input schema refused: the schema nests 403 levels deep")

	_, err = tools.NewRegistry(rawTool{"str", `{"type":"string"}`})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "not_object", se.Reason)
	_, err = tools.NewRegistry(rawTool{"untyped", `{"properties":{}}`})
	assert.ErrorContains(t, err, `must describe an object ("type": "object"), not no type`)

	// A tool registered beside a refused one is not registered either:
	// a registry is all or nothing.
	_, err = tools.NewRegistry(rawTool{"fine", `{"type":"object"}`}, rawTool{"cyclic", cyclicSchema})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "cyclic", se.Tool)
}

// TestDeepArguments: arguments nested 100,000 levels deep are refused by
// the JSON decoder (whose bound is 10,000 levels); 9,000 levels decode,
// and the check refuses them before the validator recurses.
func TestDeepArguments(t *testing.T) {
	reg, err := tools.NewRegistry(rawTool{"tree", `{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}}}`},
		rawTool{"loose", `{"type":"object"}`})
	require.NoError(t, err)
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"tree", `{"x":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, "are not valid JSON (invalid character '[' exceeded max depth)"},
		{"tree", `{"x":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}`, "could not be checked: the value is nested too deeply to check against its schema"},
		{"tree", `{"x":` + strings.Repeat(`{"a":`, 9000) + `1` + strings.Repeat(`}`, 9000) + `}`, "do not match its schema"},
	} {
		c := &tools.Call{Name: tc.tool, Arguments: tc.args}
		res := reg.Check(c)
		require.NotNil(t, res, "%s: %.40s", tc.tool, tc.args)
		assert.Equal(t, harness.CodeInvalidArguments, res.Code)
		assert.Contains(t, res.Text(), tc.want)
	}
	// Where the schema does not look, depth costs nothing.
	c := &tools.Call{Name: "loose", Arguments: `{"x":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}`}
	assert.Nil(t, reg.Check(c))
	c = &tools.Call{Name: "tree", Arguments: `{"x":[[[],[[]]]]}`}
	assert.Nil(t, reg.Check(c))
}

// FuzzRegisterAndCheck registers an arbitrary schema and checks arbitrary
// arguments against it: whatever the two are, the registry either
// refuses the schema with a *SchemaError or answers the check (for a
// plain schema compiled at the first call, perhaps by refusing it then),
// and never crashes the process.
func FuzzRegisterAndCheck(f *testing.F) {
	f.Add(cyclicSchema, `{"x":{}}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"string","pattern":"^(a+)+$"}}}`, `{"a":"aaaa"}`)
	f.Add(`{"type":"object","items":{"$ref":"#"},"contains":{"$ref":"#"}}`, `{"x":[[[[]]]]}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		reg, err := tools.NewRegistry(rawTool{"fuzzed", schema})
		if err != nil {
			var se *tools.SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("refused without a SchemaError: %v", err)
			}
			if se.Tool != "fuzzed" || !strings.HasPrefix(err.Error(), "tools: fuzzed: input schema refused: ") {
				t.Fatalf("the error does not name the tool: %v", err)
			}
			if se.Reason == "cycle" && (len(se.Cycle) < 2 || se.Cycle[0] != se.Cycle[len(se.Cycle)-1]) {
				t.Fatalf("a cycle that does not close: %q", se.Cycle)
			}
			return
		}
		res := reg.Check(&tools.Call{Name: "fuzzed", Arguments: args})
		if res != nil && res.Code == harness.CodeToolFailed {
			// A plain schema is compiled at its first call, and one that
			// is not JSON Schema is refused then; never a hostile one.
			if plain, _ := schemaguard.Precheck([]byte(schema), schemaguard.Limits{}); !plain {
				t.Fatalf("a schema that is not plain was not refused at registration: %s", res.Text())
			}
			if !strings.Contains(res.Text(), "its input schema does not compile (tools: fuzzed: input schema refused: ") {
				t.Fatalf("a schema refused at the first call, without saying why: %s", res.Text())
			}
			return
		}
		if res != nil && (!res.IsError || res.Code != harness.CodeInvalidArguments) {
			t.Fatalf("a refused check without invalid_arguments: %+v", res)
		}
	})
}

// TestFanOutArguments: a value that fails a schema whose anyOf applies
// two schemas to each level costs twice per level; past the work bound
// the check is refused, and below it the validator's long report is cut
// for the model.
func TestFanOutArguments(t *testing.T) {
	reg, err := tools.NewRegistry(rawTool{"fan", `{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","anyOf":[{"items":{"$ref":"#/$defs/n"}},{"items":{"$ref":"#/$defs/n"}}]}}}`})
	require.NoError(t, err)
	res := reg.Check(&tools.Call{Name: "fan", Arguments: `{"x":` + strings.Repeat("[", 30) + `"leaf"` + strings.Repeat("]", 30) + `}`})
	require.NotNil(t, res)
	assert.Contains(t, res.Text(), "could not be checked: the value is too large to check against its schema")
	res = reg.Check(&tools.Call{Name: "fan", Arguments: `{"x":` + strings.Repeat("[", 8) + `"leaf"` + strings.Repeat("]", 8) + `}`})
	require.NotNil(t, res)
	assert.Contains(t, res.Text(), "do not match its schema")
	assert.Contains(t, res.Text(), "more bytes of the validator's report")
	assert.Less(t, len(res.Text()), 3000)
}
