package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools"
)

// TestCheckSchemaRefusesPlainInvalidSchemas: the registry compiles a
// plain schema at its tool's first call, so a server's tool whose plain
// schema is not valid JSON Schema must be refused when it is listed,
// not offered to the model and failed at every call.
func TestCheckSchemaRefusesPlainInvalidSchemas(t *testing.T) {
	bad := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","minLength":"x"}}}`)
	err := checkSchema("lookup", bad)
	var se *tools.SchemaError
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, "lookup", se.Tool)
	assert.Equal(t, "invalid", se.Reason)
	assert.NoError(t, checkSchema("lookup", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`)))
}
