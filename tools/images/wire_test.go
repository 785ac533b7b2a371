package images_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/images"
)

// sseChunk is one streamed Chat Completions chunk.
func sseChunk(delta any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "deepseek-flash", "choices": []any{choice}})
	return "data: " + string(b) + "\n\n"
}

// TestReadImageOnTheWire runs read_image through the loop and the
// OpenAI-compatible adapter against a fake provider: the image the tool
// stored is sent, as a data URL of exactly the stored bytes, in the user
// message that follows the tool result.
func TestReadImageOnTheWire(t *testing.T) {
	leakcheck.Check(t)
	var mu sync.Mutex
	var bodies [][]byte
	replies := []string{
		sseChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": "read_image", "arguments": `{"file_path":"ui.png"}`}}}}, "") +
			sseChunk(map[string]any{}, "tool_calls"),
		sseChunk(map[string]any{"content": "a login form"}, "") + sseChunk(map[string]any{}, "stop"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		if n >= len(replies) {
			http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, replies[n]+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	model, err := openai.New(srv.URL, "test-key", "deepseek-flash", openai.WithHTTPClient(srv.Client()))
	require.NoError(t, err)
	defer model.CloseIdleConnections()

	work := t.TempDir()
	data := pngBytes(t, 200, 100)
	require.NoError(t, os.WriteFile(filepath.Join(work, "ui.png"), data, 0o644))
	local, err := fslocal.New(work)
	require.NoError(t, err)
	att := session.NewMemoryAttachments()
	loop := agent.New(agent.WithModel(model), agent.WithFileSystem(local), agent.WithWorkingDir(local.Root()),
		agent.WithAttachments(att), agent.WithTools(images.ReadImage()))
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), agent.SessionOptions{})
	require.NoError(t, err)
	for _, err := range s.Run(context.Background(), "what is on ui.png?") {
		require.NoError(t, err)
	}

	require.Len(t, bodies, 2)
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(bodies[1], &req))
	require.Len(t, req.Messages, 4, "user, assistant, tool, then the user message carrying the image")
	assert.Equal(t, "tool", req.Messages[2]["role"])
	assert.Contains(t, req.Messages[2]["content"], "image/png, 200x100 px")
	follow := req.Messages[3]
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
