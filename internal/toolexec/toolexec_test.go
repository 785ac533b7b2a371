package toolexec_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

type noArgs struct{}

func echo() tools.Tool {
	return tools.Define(tools.Spec{Name: "echo", Description: "Echo."},
		func(ctx context.Context, call *tools.Call, in noArgs) (*harness.ToolResult, error) {
			return harness.TextResult("ok"), nil
		})
}

func TestChecked(t *testing.T) {
	good := echo()
	assert.Same(t, good, toolexec.Checked(good, nil), "no error: the tool itself")

	bad := toolexec.Checked(good, toolexec.OptionError("echo: WithX(-1): the value must be positive"))
	assert.Equal(t, "echo", bad.Spec().Name, "the spec is the tool's")
	_, err := tools.NewRegistry(bad)
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), "WithX(-1)")

	_, err = bad.Execute(context.Background(), &tools.Call{Name: "echo"})
	assert.ErrorIs(t, err, harness.CodeInvalidOption, "a call run anyway fails with the option error")

	// A tool with a definition problem of its own reports both.
	broken := tools.Define(tools.Spec{Name: "broken", Description: "x"},
		(func(context.Context, *tools.Call, noArgs) (*harness.ToolResult, error))(nil))
	err = toolexec.Checked(broken, toolexec.OptionError("bad option")).(interface{ Validate() error }).Validate()
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), "nil function")
}

func TestPanicResultLogs(t *testing.T) {
	var buf bytes.Buffer
	env := &tools.Env{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	res := toolexec.PanicResult(&tools.Call{Name: "boom", ID: "c1", Env: env}, errors.New("kaput"))
	assert.True(t, res.IsError)
	assert.Equal(t, harness.CodeToolPanic, res.Code)
	assert.Contains(t, res.Text(), "kaput")
	assert.Contains(t, buf.String(), "tool panicked")
	assert.Contains(t, buf.String(), "call_id=c1")

	// Without an Env the panic is still a result, and nothing is logged.
	res = toolexec.PanicResult(&tools.Call{Name: "boom"}, "x")
	assert.Equal(t, harness.CodeToolPanic, res.Code)
	assert.NotNil(t, toolexec.Logger(nil))
}
