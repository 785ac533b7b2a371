package images_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools/images"
)

func lastToolResult(req *model.Request) *harness.ToolResult {
	var out *harness.ToolResult
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				out = b.ToolResult
			}
		}
	}
	return out
}

// TestReadImageEndToEnd runs the tool through the loop: a JSONL store with
// its attachment directory, the OS file system, a scripted model that
// sees images, then a switch to a text-only model.
func TestReadImageEndToEnd(t *testing.T) {
	leakcheck.Check(t)
	work, logs := t.TempDir(), t.TempDir()
	data := jpegBytes(t, 3000, 200)
	require.NoError(t, os.WriteFile(filepath.Join(work, "chart.jpg"), data, 0o644))
	local, err := fslocal.New(work)
	require.NoError(t, err)
	store := session.NewJSONL(logs, session.StoreConfig{})
	att := attachments.NewFiles(filepath.Join(logs, "attachments"))

	seeing := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "read_image", map[string]string{"file_path": "chart.jpg"})),
		replay.Response{Text: "a chart"},
	).WithInfo(model.Info{Name: "seeing", Input: []harness.Modality{harness.ModalityImage}})
	loop, err := agent.New(
		agent.WithModel(seeing),
		agent.WithStores(agent.Stores{Files: local, Sessions: store, Attachments: att}),
		agent.WithTools(images.ReadImage(images.Config{})),
	)
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	for _, err := range s.Run(context.Background(), "what is in chart.jpg?") {
		require.NoError(t, err)
	}

	reqs := seeing.Requests()
	require.Len(t, reqs, 2)
	res := lastToolResult(reqs[1])
	require.NotNil(t, res)
	require.False(t, res.IsError, "%+v", res)
	require.Len(t, res.Content, 2)
	assert.Contains(t, res.Content[0].Text, "Downscaled from 3000x200 px")
	img := res.Content[1].Image
	require.NotNil(t, img)
	assert.Equal(t, [2]int{2048, 137}, [2]int{img.Width, img.Height})

	// The image is on disk, content-addressed beside the logs.
	p := filepath.Join(logs, "attachments", "sha256", strings.TrimPrefix(img.Digest, "sha256:"))
	onDisk, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, img.Digest, attdigest.Of(onDisk))
	assert.Equal(t, img.Size, int64(len(onDisk)))

	// The log holds the reference, never the bytes.
	logBytes, err := os.ReadFile(filepath.Join(logs, s.Header().ID+".jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(logBytes), img.Digest)
	assert.NotContains(t, string(logBytes), base64.StdEncoding.EncodeToString(onDisk[:48]))
	assert.Less(t, len(logBytes), len(onDisk), "no image bytes in the log")

	// A text-only model: the earlier image becomes a placeholder, and a
	// new read_image call is refused before any I/O.
	blind := replay.NewScripted(
		replay.Call(replay.ToolCall("c2", "read_image", map[string]string{"file_path": "chart.jpg"})),
		replay.Response{Text: "cannot see"},
	).WithInfo(model.Info{Name: "blind"})
	require.NoError(t, s.SetModel(blind))
	for _, err := range s.Run(context.Background(), "look again") {
		require.NoError(t, err)
	}
	breqs := blind.Requests()
	require.Len(t, breqs, 2)
	all, _ := json.Marshal(breqs[0].Messages)
	assert.Contains(t, string(all), "[image "+filepath.ToSlash(filepath.Join(local.Root(), "chart.jpg"))+" (image/jpeg")
	assert.Contains(t, string(all), "not shown: the current model does not accept image input]")
	refused := lastToolResult(breqs[1])
	assert.True(t, refused.IsError)
	assert.Equal(t, images.CodeImageInputUnsupported, refused.Code)

	// Resumed later, the history still refers to the image, and the bytes
	// still match.
	require.NoError(t, s.Close())
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	var found bool
	for _, m := range new(session.History).Add(tr.Events...).Messages() {
		for _, b := range m.Content {
			if b.Type == harness.BlockToolResult {
				for _, c := range b.ToolResult.Content {
					if c.Type == harness.BlockImage && c.Image.Digest == img.Digest {
						found = true
					}
				}
			}
		}
	}
	assert.True(t, found)
	back, err := att.Get(context.Background(), img.Digest)
	require.NoError(t, err)
	assert.Equal(t, onDisk, back)
}
