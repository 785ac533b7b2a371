package toolstest_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/toolstest"
)

type echoArgs struct {
	Text string `json:"text"`
}

// echo answers with its text, fails with a code for "fail", panics for
// "panic" and logs for "log".
func echo() tools.Tool {
	return tools.Define(tools.Spec{Name: "echo", Description: "Echo text."},
		func(ctx context.Context, call *tools.Call, in echoArgs) (*harness.ToolResult, error) {
			switch in.Text {
			case "fail":
				return nil, &harness.Error{Code: harness.CodeNotFound, Message: "nothing to echo"}
			case "plain":
				return nil, errors.New("it broke")
			case "panic":
				panic("boom")
			case "log":
				call.Env.Logger.Warn("logged", "call", call.ID)
			}
			return harness.TextResult(in.Text + " from " + call.Env.Cwd), nil
		})
}

func TestCall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    any
		isError bool
		code    harness.Code
		text    string
	}{
		{"string arguments", `{"text":"hi"}`, false, "", "hi from /project"},
		{"byte arguments", []byte(`{"text":"hi"}`), false, "", "hi from /project"},
		{"raw arguments", json.RawMessage(`{"text":"hi"}`), false, "", "hi from /project"},
		{"a struct is encoded", echoArgs{Text: "hi"}, false, "", "hi from /project"},
		{"a map is encoded", map[string]string{"text": "hi"}, false, "", "hi from /project"},
		{"malformed JSON", `{"text":`, true, harness.CodeInvalidArguments, "not valid JSON"},
		{"not an object", `["hi"]`, true, harness.CodeInvalidArguments, "must be a JSON object"},
		{"schema violation", `{"txt":"hi"}`, true, harness.CodeInvalidArguments, "do not match its schema"},
		{"a coded error", `{"text":"fail"}`, true, harness.CodeNotFound, "nothing to echo"},
		{"a plain error", `{"text":"plain"}`, true, harness.CodeToolFailed, "it broke"},
		{"a panic", `{"text":"panic"}`, true, harness.CodeToolPanic, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := toolstest.NewEnv()
			defer env.Close()
			res, err := env.Call(context.Background(), echo(), tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.isError, res.IsError, res.Text())
			assert.Equal(t, tc.code, res.Code)
			assert.Contains(t, res.Text(), tc.text)
		})
	}
}

func TestCallReportsABrokenTest(t *testing.T) {
	env := toolstest.NewEnv()
	defer env.Close()
	_, err := env.Call(context.Background(), echo(), map[string]any{"text": make(chan int)})
	assert.ErrorContains(t, err, "encoding the arguments")

	bad := tools.Define(tools.Spec{Name: "Not Snake", Description: "x"},
		func(ctx context.Context, call *tools.Call, in echoArgs) (*harness.ToolResult, error) { return nil, nil })
	_, err = env.Call(context.Background(), bad, `{}`)
	assert.Error(t, err)

	_, err = env.Call(context.Background(), files.Read(files.Config{Lines: -1}), `{"file_path":"a"}`)
	assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err), "an option Validate refuses: %v", err)
}

func TestEnvParts(t *testing.T) {
	ctx := context.Background()
	env := toolstest.NewEnv()
	defer env.Close()

	assert.Same(t, env.FS, env.Env.FS)
	assert.Same(t, env.Output, env.Env.Output)
	assert.Same(t, env.Attachments, env.Env.Attachments)
	assert.Equal(t, "/project", env.Env.Cwd)
	assert.Equal(t, "/project", env.FS.Root())
	assert.False(t, slices.Contains(env.Env.ModelInput, harness.ModalityImage))

	digest, err := env.Env.Attachments.Put(ctx, []byte("png"))
	require.NoError(t, err)
	got, err := env.Attachments.Get(ctx, digest)
	require.NoError(t, err)
	assert.Equal(t, "png", string(got))

	res, err := env.Call(ctx, echo(), `{"text":"log"}`)
	require.NoError(t, err)
	require.False(t, res.IsError)
	res, err = env.Call(ctx, echo(), `{"text":"log"}`)
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, "level=WARN msg=logged call=call_1\nlevel=WARN msg=logged call=call_2\n", env.Logs())
}

// closer records that the session state closed it.
type closer struct{ closed bool }

func (c *closer) Close() error { c.closed = true; return nil }

type key struct{}

func TestCloseClosesTheState(t *testing.T) {
	env := toolstest.NewEnv()
	c, err := tools.LoadState(env.Env.State, key{}, func() *closer { return &closer{} })
	require.NoError(t, err)
	require.NoError(t, env.Close())
	assert.True(t, c.closed)
	_, err = tools.LoadState(env.Env.State, key{}, func() *closer { return &closer{} })
	assert.Equal(t, harness.CodeClosed, harness.CodeOf(err))
}

func TestFilesThroughTheEnv(t *testing.T) {
	ctx := context.Background()
	env := toolstest.NewEnv()
	defer env.Close()
	res, err := env.Call(ctx, files.Write(files.Config{}), map[string]string{"file_path": "dir/new.txt", "content": "one\n"})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text())
	b, _, err := env.FS.ReadBytes(ctx, "/project/dir/new.txt", 100)
	require.NoError(t, err)
	assert.Equal(t, "one\n", string(b))

	res, err = env.Call(ctx, files.Edit(files.Config{}), map[string]string{"file_path": "dir/new.txt", "old_string": "one", "new_string": "two"})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text())
	b, _, err = env.FS.ReadBytes(ctx, "/project/dir/new.txt", 100)
	require.NoError(t, err)
	assert.Equal(t, "two\n", string(b))
}
