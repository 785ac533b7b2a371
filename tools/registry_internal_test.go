package tools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/go-harness/harness"
)

type rawSchemaTool struct{ name, schema string }

func (r rawSchemaTool) Spec() Spec {
	return Spec{Name: r.name, Description: "A tool with the schema it is given.", InputSchema: json.RawMessage(r.schema)}
}

func (r rawSchemaTool) Execute(context.Context, *Call) (*harness.ToolResult, error) {
	return harness.TextResult("ok"), nil
}

// TestLazyCompile: plain schemas of objects are compiled at the first
// call of their tool, once; the others at registration.
func TestLazyCompile(t *testing.T) {
	type pathIn struct {
		Path string `json:"path"`
	}
	defined := Define(Spec{Name: "defined", Description: "d"}, func(ctx context.Context, call *Call, in pathIn) (*harness.ToolResult, error) {
		return harness.TextResult(in.Path), nil
	})
	reg, err := NewRegistry(
		defined,
		// A property named pattern is no regular expression.
		rawSchemaTool{"grep_like", `{"type":"object","properties":{"pattern":{"type":"string","description":"a \u003cregex\u003e"}},"required":["pattern"]}`},
		rawSchemaTool{"with_pattern", `{"type":"object","properties":{"p":{"type":"string","pattern":"^a"}}}`},
		rawSchemaTool{"with_ref", `{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`},
		rawSchemaTool{"escaped", `{"type":"object","properties":{"p":{"\u0024ref":"#"}}}`},
		rawSchemaTool{"with_not", `{"type":"object","properties":{"p":{"not":{"type":"string"}}}}`},
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, lazy := range map[string]bool{"defined": true, "grep_like": true, "with_pattern": false, "with_ref": false, "escaped": false, "with_not": false} {
		if got := reg.byName[name].schema == nil; got != lazy {
			t.Errorf("%s: compiled at registration = %v, want %v", name, !got, !lazy)
		}
	}
	// Many first calls at once compile the schema once, and all are
	// checked against it.
	var wg sync.WaitGroup
	results := make([]*harness.ToolResult, 16)
	for i := range results {
		args := `{"path":"a"}`
		if i%2 == 1 {
			args = `{"path":1}`
		}
		wg.Go(func() { results[i] = reg.Check(&Call{Name: "defined", Arguments: args}) })
	}
	wg.Wait()
	for i, res := range results {
		if (res == nil) != (i%2 == 0) {
			t.Fatalf("call %d: %+v", i, res)
		}
		if res != nil && !strings.Contains(res.Text(), "do not match its schema") || res != nil && !strings.Contains(res.Text(), "Parameters: path (string, required).") {
			t.Fatalf("call %d: %s", i, res.Text())
		}
	}
	if reg.byName["defined"].schema == nil {
		t.Fatal("the schema was not kept after the first call")
	}
	if res := reg.Check(&Call{Name: "grep_like", Arguments: `{}`}); res == nil || !strings.Contains(res.Text(), `missing properties: ["pattern"]`) {
		t.Fatalf("grep_like without its pattern: %+v", res)
	}
}

// TestLazyCompileRefusal: a plain schema that is not JSON Schema passes
// registration; each call of its tool is refused, saying why.
func TestLazyCompileRefusal(t *testing.T) {
	reg, err := NewRegistry(rawSchemaTool{"bad_types", `{"type":"object","properties":{"n":{"type":"integer","minLength":"x"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res := reg.Check(&Call{Name: "bad_types", Arguments: `{"n":1}`})
		if res == nil || res.Code != harness.CodeToolFailed || !strings.Contains(res.Text(), "The bad_types tool cannot be called: its input schema does not compile (tools: bad_types: input schema refused: the schema is not valid JSON Schema") {
			t.Fatalf("%+v", res)
		}
	}
}
