package files

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// inferred returns the schema tools.Define infers for In.
func inferred[In any]() json.RawMessage {
	return tools.Define(tools.Spec{Name: "x", Description: "x"}, func(context.Context, *tools.Call, In) (*harness.ToolResult, error) {
		return nil, nil
	}).Spec().InputSchema
}

// The static schemas are what Define infers from the argument types, so
// a change to a field or its tag that is not made to them fails here.
func TestStaticSchemas(t *testing.T) {
	assert.Equal(t, string(inferred[readArgs]()), readSchema, "read")
	assert.Equal(t, string(inferred[writeArgs]()), writeSchema, "write")
	assert.Equal(t, string(inferred[editArgs]()), editSchema, "edit")
	for _, tl := range Tools(Config{}) {
		s := tl.Spec()
		assert.True(t, json.Valid(s.InputSchema), s.Name)
	}
	assert.Equal(t, readSchema, string(Read(Config{}).Spec().InputSchema))
	assert.Equal(t, writeSchema, string(Write(Config{}).Spec().InputSchema))
	assert.Equal(t, editSchema, string(Edit(Config{}).Spec().InputSchema))
}
