package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

type readArgs struct {
	FilePath string `json:"file_path" jsonschema:"path of the file"`
	Offset   *int   `json:"offset,omitempty" jsonschema:"first line, 1-based"`
	Limit    int    `json:"limit,omitzero"`
}

func readTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "read", Description: "Read a file.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in readArgs) (*harness.ToolResult, error) {
			off := 1
			if in.Offset != nil {
				off = *in.Offset
			}
			return harness.TextResult(fmt.Sprintf("%s@%d+%d", in.FilePath, off, in.Limit)), nil
		})
}

func TestSchemaInference(t *testing.T) {
	schemaOf := func() json.RawMessage {
		return tools.Define(tools.Spec{Name: "read", Description: "Read."}, func(ctx context.Context, call *tools.Call, in readArgs) (*harness.ToolResult, error) {
			return nil, nil
		}).Spec().InputSchema
	}
	raw := schemaOf()
	assert.JSONEq(t, `{
		"type":"object",
		"properties":{
			"file_path":{"type":"string","description":"path of the file"},
			"offset":{"type":"integer","description":"first line, 1-based"},
			"limit":{"type":"integer"}
		},
		"required":["file_path"],
		"additionalProperties":false}`, string(raw))
	assert.True(t, strings.Index(string(raw), "file_path") < strings.Index(string(raw), "offset"), "field order is kept")
	assert.Equal(t, raw, schemaOf(), "schema bytes are stable")

	notStruct := tools.Define(tools.Spec{Name: "n", Description: "N."}, func(ctx context.Context, call *tools.Call, in int) (*harness.ToolResult, error) {
		return nil, nil
	})
	_, err := tools.NewRegistry(notStruct)
	assert.ErrorContains(t, err, "must be a struct")
}

func check(t *testing.T, reg *tools.Registry, name, args string) (*tools.Call, *harness.ToolResult) {
	call := &tools.Call{ID: "1", Name: name, Arguments: args}
	return call, reg.Check(call)
}

func TestRegistryCheck(t *testing.T) {
	reg, err := tools.NewRegistry(readTool())
	require.NoError(t, err)

	call, res := check(t, reg, "read", `{"file_path":"a.go","offset":3}`)
	require.Nil(t, res)
	assert.Equal(t, "read", call.Spec.Name)
	out := toolexec.Executor()(context.Background(), call)
	assert.Equal(t, "a.go@3+0", out.Text())

	_, res = check(t, reg, "read", "")
	require.NotNil(t, res, "empty arguments are {} and miss file_path")
	assert.Contains(t, res.Text(), `missing properties: ["file_path"]`)

	cases := map[string]string{
		`{"file_path":"a"`:               "not valid JSON",
		`{"file_path":"a"} {"x":1}`:      "not valid JSON",
		`{"file_path":"a"}}`:             "unexpected data after the first JSON value",
		"{\"file_path\":\"a\"}\u00a0":    "unexpected data after the first JSON value",
		"{\"file_path\":\"a\"} \v":       "unexpected data after the first JSON value",
		`"a.go"`:                         "must be a JSON object, not a string",
		`null`:                           "must be a JSON object, not null",
		`{"file_path":1}`:                `has type "integer", want "string"`,
		`{"file_path":"a","offset":1.5}`: "offset",
		`{"file_path":"a","bogus":1}`:    "bogus",
	}
	for args, want := range cases {
		_, res := check(t, reg, "read", args)
		require.NotNil(t, res, args)
		assert.True(t, res.IsError)
		assert.Equal(t, harness.CodeInvalidArguments, res.Code, args)
		assert.Contains(t, res.Text(), want, args)
		assert.Contains(t, res.Text(), "Parameters: file_path (string, required), offset (integer), limit (integer).", args)
	}

	_, res = check(t, reg, "Read", `{}`)
	assert.Equal(t, harness.CodeUnknownTool, res.Code)
	assert.Contains(t, res.Text(), `Did you mean "read"?`)
	_, res = check(t, reg, "completely_different", `{}`)
	assert.NotContains(t, res.Text(), "Did you mean")
	assert.Contains(t, res.Text(), "Available tools: read.")
}

func TestRegistryRefusesBadTools(t *testing.T) {
	noop := func(context.Context, *tools.Call, struct{}) (*harness.ToolResult, error) { return nil, nil }
	for _, tc := range []struct {
		spec tools.Spec
		want string
	}{
		{tools.Spec{Name: "", Description: "x"}, "snake_case"},
		{tools.Spec{Name: "readFile", Description: "x"}, "snake_case"},
		{tools.Spec{Name: "ok", Description: ""}, "empty description"},
		{tools.Spec{Name: "ok", Description: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}, "must describe an object"},
		{tools.Spec{Name: "ok", Description: "x", InputSchema: json.RawMessage(`{"type":`)}, "not valid JSON Schema"},
	} {
		_, err := tools.NewRegistry(tools.Define(tc.spec, noop))
		assert.ErrorContains(t, err, tc.want, "%+v", tc.spec)
	}
	_, err := tools.NewRegistry(tools.Define(tools.Spec{Name: "bad", Description: "x"}, func(context.Context, *tools.Call, struct{ C chan int }) (*harness.ToolResult, error) { return nil, nil }))
	assert.Error(t, err, "a type without a schema is refused at registration")
}

func TestNormalizeAndErrors(t *testing.T) {
	call := &tools.Call{Name: "edit", Spec: tools.Spec{Name: "edit", SideEffects: true}}
	r := toolexec.Normalize(call, nil, &harness.Error{Code: "stale_version", Message: "The file changed since you read it. Read it again, then retry."})
	assert.Equal(t, harness.Code("stale_version"), r.Code)
	assert.Equal(t, "The file changed since you read it. Read it again, then retry.", r.Text())

	r = toolexec.Normalize(call, nil, fmt.Errorf("wrapped: %w", context.Canceled))
	assert.Equal(t, harness.CodeAborted, r.Code)
	assert.Contains(t, r.Text(), "side effects are unknown")

	r = toolexec.Normalize(call, nil, context.DeadlineExceeded)
	assert.Equal(t, harness.CodeTimeout, r.Code)

	r = toolexec.Normalize(call, nil, errors.New("disk on fire"))
	assert.Equal(t, harness.CodeToolFailed, r.Code)
	assert.Equal(t, "disk on fire", r.Text())

	r = toolexec.Normalize(call, nil, nil)
	assert.Equal(t, "(no output)", r.Text())
	r = toolexec.Normalize(call, &harness.ToolResult{IsError: true, Content: []harness.Block{harness.TextBlock("x")}}, nil)
	assert.Equal(t, harness.CodeToolFailed, r.Code)
}

func TestChainOrder(t *testing.T) {
	var trace []string
	mw := func(name string) tools.Middleware {
		return func(next tools.Handler) tools.Handler {
			return tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
				trace = append(trace, "in:"+name)
				r := next(ctx, call)
				trace = append(trace, "out:"+name)
				return r
			})
		}
	}
	h := toolexec.Chain(tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
		trace = append(trace, "tool")
		return harness.TextResult("x")
	}), mw("outer"), nil, mw("inner"))
	h(context.Background(), &tools.Call{})
	assert.Equal(t, []string{"in:outer", "in:inner", "tool", "out:inner", "out:outer"}, trace)
}

func TestExecutorRecoversPanics(t *testing.T) {
	boom := tools.Define(tools.Spec{Name: "boom", Description: "x"}, func(context.Context, *tools.Call, struct{}) (*harness.ToolResult, error) {
		panic("kaput")
	})
	reg, err := tools.NewRegistry(boom)
	require.NoError(t, err)
	call := &tools.Call{Name: "boom", Arguments: `{}`}
	require.Nil(t, reg.Check(call))
	r := toolexec.Executor()(context.Background(), call)
	assert.Equal(t, harness.CodeToolPanic, r.Code)
	assert.Contains(t, r.Text(), "kaput")
}

type closer struct {
	name  string
	trace *[]string
}

func (c closer) Close() error { *c.trace = append(*c.trace, c.name); return nil }

func TestState(t *testing.T) {
	var trace []string
	s := &tools.State{}
	type key string
	a, err := tools.LoadState(s, key("a"), func() io.Closer { return closer{"a", &trace} })
	require.NoError(t, err)
	a2, err := tools.LoadState(s, key("a"), func() io.Closer { t.Fatal("created twice"); return nil })
	require.NoError(t, err)
	assert.Equal(t, a, a2)
	_, err = tools.LoadState(s, key("b"), func() io.Closer { return closer{"b", &trace} })
	require.NoError(t, err)
	_, err = tools.LoadState(s, key("a"), func() int { return 1 })
	assert.ErrorContains(t, err, "another type")
	require.NoError(t, s.Close())
	assert.Equal(t, []string{"b", "a"}, trace, "closed newest first")
	_, err = tools.LoadState(s, key("c"), func() int { return 1 })
	assert.ErrorIs(t, err, harness.CodeClosed)
}

func TestEnvModelInput(t *testing.T) {
	var unknown tools.Env
	assert.False(t, slices.Contains(unknown.ModelInput, harness.ModalityImage), "unknown capabilities: no images")
	e := &tools.Env{ModelInput: []harness.Modality{harness.ModalityText, harness.ModalityImage}}
	assert.True(t, slices.Contains(e.ModelInput, harness.ModalityImage))
}
