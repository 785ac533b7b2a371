package images_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools/images"
)

// TestReadImageOnTheWire runs read_image through the loop and the
// OpenAI-compatible adapter against a fake provider: the image the tool
// stored is sent, as a data URL of exactly the stored bytes, in the user
// message that follows the tool result.
func TestReadImageOnTheWire(t *testing.T) {
	leakcheck.Check(t)
	srv := openaitest.NewServer(
		openaitest.Reply{Chunks: []openaitest.Chunk{
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "call_1", Name: "read_image", Arguments: `{"file_path":"ui.png"}`}},
			{Finish: "tool_calls"},
		}},
		openaitest.Reply{Chunks: []openaitest.Chunk{{Text: "a login form"}, {Finish: "stop"}}},
	)
	defer srv.Close()
	model, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "deepseek-flash"})
	require.NoError(t, err)

	work := t.TempDir()
	data := pngBytes(t, 200, 100)
	require.NoError(t, os.WriteFile(filepath.Join(work, "ui.png"), data, 0o644))
	local, err := fslocal.New(work)
	require.NoError(t, err)
	att := attachments.NewMemory()
	loop, err := agent.New(agent.WithModel(model), agent.WithStores(agent.Stores{Files: local, Attachments: att}), agent.WithTools(images.ReadImage(images.Config{})))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	for _, err := range s.Run(context.Background(), "what is on ui.png?") {
		require.NoError(t, err)
	}

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages()
	require.Len(t, msgs, 4, "user, assistant, tool, then the user message carrying the image")
	assert.Equal(t, "tool", msgs[2]["role"])
	assert.Contains(t, msgs[2]["content"], "image/png, 200x100 px")
	follow := msgs[3]
	assert.Equal(t, "user", follow["role"])
	var url string
	for _, part := range follow["content"].([]any) {
		p := part.(map[string]any)
		if p["type"] == "image_url" {
			url = p["image_url"].(map[string]any)["url"].(string)
		}
	}
	require.True(t, strings.HasPrefix(url, "data:image/png;base64,"), "an image part in the follow-up user message")
	sent, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, "data:image/png;base64,"))
	require.NoError(t, err)
	assert.Equal(t, data, sent, "the file's bytes, passed through")
}
