package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

type coded struct{ code string }

func (c coded) Error() string     { return "coded " + c.code }
func (c coded) ErrorCode() string { return c.code }

func TestCodeOf(t *testing.T) {
	notFound := &harness.Error{Code: harness.CodeNotFound, Message: "no such file"}
	for name, tc := range map[string]struct {
		err  error
		want harness.Code
	}{
		"nil":                       {nil, ""},
		"error":                     {notFound, harness.CodeNotFound},
		"wrapped error":             {fmt.Errorf("reading: %w", notFound), harness.CodeNotFound},
		"code itself":               {harness.CodeLocked, harness.CodeLocked},
		"wrapped code":              {fmt.Errorf("open: %w", harness.CodeLocked), harness.CodeLocked},
		"outermost code wins":       {&harness.Error{Code: harness.CodeTransport, Err: notFound}, harness.CodeTransport},
		"empty code looks deeper":   {&harness.Error{Err: notFound}, harness.CodeNotFound},
		"error code method":         {fmt.Errorf("x: %w", coded{"shell_broken"}), harness.Code("shell_broken")},
		"empty error code method":   {coded{""}, harness.CodeUnknown},
		"joined: first with a code": {errors.Join(errors.New("plain"), harness.CodeStale, notFound), harness.CodeStale},
		"cancelled":                 {fmt.Errorf("x: %w", context.Canceled), harness.CodeAborted},
		"deadline":                  {fmt.Errorf("x: %w", context.DeadlineExceeded), harness.CodeTimeout},
		"code beats the context":    {&harness.Error{Code: harness.CodeTransport, Err: context.DeadlineExceeded}, harness.CodeTransport},
		"plain":                     {errors.New("plain"), harness.CodeUnknown},
		"io/fs not exist":           {fmt.Errorf("open: %w", iofs.ErrNotExist), harness.CodeNotFound},
		"io/fs exist":               {iofs.ErrExist, harness.CodeExists},
		"io/fs permission":          {iofs.ErrPermission, harness.CodePermission},
		"io/fs closed: no code":     {iofs.ErrClosed, harness.CodeUnknown},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, harness.CodeOf(tc.err))
		})
	}
}

func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("session x: %w", &harness.Error{Code: harness.CodeNotFound, Message: "not found"})
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.NotErrorIs(t, err, harness.CodeExists)
	assert.ErrorIs(t, err, iofs.ErrNotExist, "CodeNotFound matches io/fs")
	assert.ErrorIs(t, &harness.Error{Code: harness.CodeExists}, iofs.ErrExist)
	assert.ErrorIs(t, &harness.Error{Code: harness.CodePermission}, iofs.ErrPermission)
	assert.NotErrorIs(t, &harness.Error{Code: harness.CodeStale}, iofs.ErrNotExist)
	cause := errors.New("disk on fire")
	assert.ErrorIs(t, &harness.Error{Code: harness.CodeIO, Err: cause}, cause, "the cause is in the chain")
	assert.NotErrorIs(t, &harness.Error{Code: harness.CodeIO}, &harness.Error{Code: harness.CodeIO},
		"codes, not error values, are the sentinels")
}

func TestErrorText(t *testing.T) {
	cause := errors.New("the cause")
	assert.Equal(t, "what to do", (&harness.Error{Code: harness.CodeIO, Message: "what to do", Err: cause}).Error())
	assert.Equal(t, "the cause", (&harness.Error{Code: harness.CodeIO, Err: cause}).Error())
	assert.Equal(t, "io_error", (&harness.Error{Code: harness.CodeIO}).Error())
	assert.Equal(t, "locked", harness.CodeLocked.Error())
}

func TestMessageHelpers(t *testing.T) {
	call := harness.ToolCall{ID: "c1", Name: "read", Arguments: `{"file_path":"a"}`}
	m := harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
		{Type: harness.BlockReasoning, Text: "hmm"},
		harness.TextBlock("one "),
		{Type: harness.BlockToolCall, ToolCall: &call},
		{Type: harness.BlockToolCall}, // damaged: no call
		harness.TextBlock("two"),
	}}
	assert.Equal(t, "one two", m.Text())
	assert.Equal(t, []harness.ToolCall{call}, m.ToolCalls())
}

func TestToolResultHelpers(t *testing.T) {
	r := harness.ErrorResult(harness.CodeNotFound, "no %s here", "file")
	assert.Equal(t, &harness.ToolResult{IsError: true, Code: harness.CodeNotFound,
		Content: []harness.Block{harness.TextBlock("no file here")}}, r)
	r = &harness.ToolResult{Content: []harness.Block{
		harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: "sha256:00"}}, harness.TextBlock("a"), harness.TextBlock("bc"),
	}}
	assert.Equal(t, "a\nbc", r.Text())
	var none *harness.ToolResult
	assert.Equal(t, "", none.Text())
	assert.Equal(t, "ok", harness.TextResult("ok").Text())
}

func TestUsage(t *testing.T) {
	u := harness.Usage{InputTokens: 1, OutputTokens: 2, CacheHitTokens: 3}
	u.Add(harness.Usage{InputTokens: 10, OutputTokens: 20, CacheMissTokens: 4, ReasoningTokens: 5})
	assert.Equal(t, harness.Usage{InputTokens: 11, OutputTokens: 22, CacheHitTokens: 3, CacheMissTokens: 4, ReasoningTokens: 5}, u)
}

// TestJSON pins the JSON of the vocabulary: it is the session log's
// format, so these bytes may only change with a format version.
func TestJSON(t *testing.T) {
	exit := 2
	old := "a"
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"text block":  {harness.TextBlock("hi"), `{"type":"text","text":"hi"}`},
		"image block": {harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: "sha256:ab", MediaType: "image/png", Width: 1, Height: 2, Size: 3, Name: "/w/x.png"}}, `{"type":"image","image":{"digest":"sha256:ab","media_type":"image/png","width":1,"height":2,"size":3,"name":"/w/x.png"}}`},
		"tool call":   {harness.Block{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c", Name: "n", Arguments: "{"}}, `{"type":"tool_call","tool_call":{"id":"c","name":"n","arguments":"{"}}`},
		"logged result (no call id)": {harness.ToolResult{Content: []harness.Block{harness.TextBlock("x")}, IsError: true, Code: "exit",
			Render: &harness.Render{Kind: harness.RenderTerminal, Terminal: &harness.Terminal{Command: "ls", ExitCode: &exit, Status: "exited"}},
			Files:  []harness.FileAccess{{Op: harness.FileRead, Path: "/w/a", Version: "v", StartLine: 1, EndLine: 2, Complete: true}}},
			`{"content":[{"type":"text","text":"x"}],"is_error":true,"code":"exit","render":{"kind":"terminal","terminal":{"command":"ls","exit_code":2,"status":"exited"}},"files":[{"op":"read","path":"/w/a","version":"v","start_line":1,"end_line":2,"complete":true}]}`},
		"result block": {harness.Block{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{CallID: "c", Name: "n", Content: []harness.Block{harness.TextBlock("x")}}},
			`{"type":"tool_result","tool_result":{"call_id":"c","name":"n","content":[{"type":"text","text":"x"}]}}`},
		"empty result": {harness.ToolResult{}, `{"content":null}`},
		"diff": {harness.Render{Kind: harness.RenderDiff, Title: "t", Diff: &harness.Diff{Path: "/a", OldText: &old, NewText: "b", Added: 1, Removed: 1,
			Hunks: []harness.Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []string{"-a", "+b"}}}}},
			`{"kind":"diff","title":"t","diff":{"path":"/a","old_text":"a","new_text":"b","hunks":[{"old_start":1,"old_lines":1,"new_start":1,"new_lines":1,"lines":["-a","+b"]}],"added":1,"removed":1}}`},
		"locations": {harness.Render{Kind: harness.RenderLocations, Locations: []harness.Location{{Path: "/a", StartLine: 1, EndLine: 3}}}, `{"kind":"locations","locations":[{"path":"/a","start_line":1,"end_line":3}]}`},
		"usage":     {harness.Usage{InputTokens: 1}, `{"input_tokens":1,"output_tokens":0}`},
		"reminder":  {harness.Reminder{Source: "guard", Text: "t"}, `{"source":"guard","text":"t"}`},
		"message":   {harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("q")}}, `{"role":"user","content":[{"type":"text","text":"q"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
		})
	}
}
