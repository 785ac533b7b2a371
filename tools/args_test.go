package tools_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// TestArgsDecodedOnce: the registry decodes a call's arguments when it
// checks the call, and Args gives that value back every time, whatever
// happens to the text afterwards: nothing downstream parses it again.
func TestArgsDecodedOnce(t *testing.T) {
	reg, err := tools.NewRegistry(readTool())
	require.NoError(t, err)
	call, res := check(t, reg, "read", `{"file_path":"a.go","offset":12345678901234567890}`)
	require.Nil(t, res)
	args := call.Args()
	require.NotNil(t, args)
	assert.Equal(t, "a.go", args["file_path"])
	assert.Equal(t, json.Number("12345678901234567890"), args["offset"], "numbers keep every digit")
	assert.Equal(t, reflect.ValueOf(args).Pointer(), reflect.ValueOf(call.Args()).Pointer(), "the same value, not a new decode")

	call.Arguments = `not JSON at all`
	assert.Equal(t, "a.go", call.Args()["file_path"], "the checked value stays; the text is not read again")
}

// TestArgsUnchecked: a call no registry checked is decoded when asked,
// and is nil when its arguments are not one JSON object.
func TestArgsUnchecked(t *testing.T) {
	for raw, want := range map[string]map[string]any{
		`{"a":"b","n":1.5}`: {"a": "b", "n": json.Number("1.5")},
		``:                  {},
		" \n":               {},
		`{"a":1} x`:         nil,
		`{"a":`:             nil,
		`[1]`:               nil,
		`"s"`:               nil,
		`null`:              nil,
	} {
		c := &tools.Call{Name: "x", Arguments: raw}
		if want == nil {
			assert.Nil(t, c.Args(), raw)
			continue
		}
		assert.Equal(t, want, c.Args(), raw)
	}
}

// TestIntegralNumbers: integral values written as floats reach Go integer
// fields, from the registry's decoded value and from the text of a call
// no registry checked alike.
func TestIntegralNumbers(t *testing.T) {
	reg, err := tools.NewRegistry(readTool())
	require.NoError(t, err)
	for raw, want := range map[string]string{
		`{"file_path":"a","offset":2.0,"limit":1e2}`: "a@2+100",
		`{"file_path":"a.e","offset":3}`:             "a.e@3+0",
		`{"file_path":"a","limit":-0.0E1}`:           "a@1+0",
	} {
		call, res := check(t, reg, "read", raw)
		require.Nil(t, res, raw)
		assert.Equal(t, want, toolexec.Executor()(context.Background(), call).Text(), raw)

		unchecked, err := readTool().Execute(context.Background(), &tools.Call{Name: "read", Arguments: raw})
		require.NoError(t, err, raw)
		assert.Equal(t, want, unchecked.Text(), raw)
	}
	_, res := check(t, reg, "read", `{"file_path":"a","offset":2.5}`)
	require.NotNil(t, res, "a fraction is not an integer")
}
