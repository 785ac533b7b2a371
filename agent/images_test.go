package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
)

var imageInput = model.Info{Name: "seeing", Input: []harness.Modality{harness.ModalityImage}}

// snapTool stores a tiny "image" and returns it with a line of text.
func snapTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "snap", Description: "Take a picture.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in struct {
			Name string `json:"name"`
		}) (*harness.ToolResult, error) {
			d, err := call.Env.Attachments.Put(ctx, []byte("pixels of "+in.Name))
			if err != nil {
				return nil, err
			}
			return &harness.ToolResult{Content: []harness.Block{
				harness.TextBlock("took " + in.Name),
				harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: d, MediaType: "image/png", Width: 4, Height: 3, Size: 1000, Name: in.Name}},
			}}, nil
		})
}

// images lists the images of a request in order: name and whether it is
// an image (true) or a placeholder naming it (false).
func requestImages(req *model.Request) []string {
	var out []string
	note := func(c harness.Block) {
		switch {
		case c.Type == harness.BlockImage:
			out = append(out, "img:"+c.Image.Name)
		case strings.HasPrefix(c.Text, "[image ") && strings.Contains(c.Text, " not shown"):
			name, _, _ := strings.Cut(strings.TrimPrefix(c.Text, "[image "), " ")
			out = append(out, "placeholder:"+name)
		}
	}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case harness.BlockImage:
				note(harness.Block{Type: harness.BlockImage, Image: new(*b.Image)})
			case harness.BlockText:
				note(harness.TextBlock(b.Text))
			case harness.BlockToolResult:
				for _, c := range b.ToolResult.Content {
					note(c)
				}
			}
		}
	}
	return out
}

func runContent(t *testing.T, s *agent.Session, content ...harness.Block) *agent.TurnEnd {
	t.Helper()
	var end *agent.TurnEnd
	for ev, err := range s.RunContent(context.Background(), content) {
		if te, ok := ev.(*agent.TurnEnd); ok {
			require.NoError(t, err)
			end = te
		}
	}
	require.NotNil(t, end)
	return end
}

func TestImagesBecomePlaceholdersAfterModelSwitch(t *testing.T) {
	store := session.NewMemory(session.StoreConfig{})
	att := attachments.NewMemory()
	seeing := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "snap", map[string]string{"name": "shot.png"})),
		replay.Response{Text: "I see it"},
	).WithInfo(imageInput)
	_, s := newSession(t, agent.WithModel(seeing), agent.WithTools(snapTool()),
		agent.WithStores(agent.Stores{Attachments: att, Sessions: store}))

	userImg := harness.Image{Digest: attdigest.Of([]byte("u")), MediaType: "image/jpeg", Width: 640, Height: 480, Size: 5000, Name: "photo.jpg"}
	end := runContent(t, s, harness.TextBlock("look"), harness.Block{Type: harness.BlockImage, Image: new(userImg)})
	require.Equal(t, session.ReasonCompleted, end.Reason)
	reqs := seeing.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []string{"img:photo.jpg"}, requestImages(reqs[0]))
	assert.Equal(t, []string{"img:photo.jpg", "img:shot.png"}, requestImages(reqs[1]), "an image-capable model sees every image")

	blind := replay.NewScripted(replay.Response{Text: "I cannot see"}).WithInfo(model.Info{Name: "text-only"})
	require.NoError(t, s.SetModel(blind))
	_, end, err := collect(t, s, context.Background(), "and now?")
	require.NoError(t, err)
	require.Equal(t, session.ReasonCompleted, end.Reason)
	req := blind.Requests()[0]
	assert.Equal(t, []string{"placeholder:photo.jpg", "placeholder:shot.png"}, requestImages(req))
	all := mustJSON(req.Messages)
	assert.Contains(t, all, "[image photo.jpg (image/jpeg, 4.9 KiB, 640x480, sha256:"+userImg.Digest[7:19]+") not shown: the current model does not accept image input]")
	assert.Contains(t, all, "took shot.png", "the tool result's text is kept")

	// Nothing is lost: the history and the log keep the references.
	assert.Equal(t, []string{"img:photo.jpg", "img:shot.png"}, requestImages(&model.Request{Messages: s.Messages()}))
	tr, err := store.Load(context.Background(), s.Header().ID)
	require.NoError(t, err)
	logged, _ := json.Marshal(tr.Events)
	assert.Contains(t, string(logged), `"digest":"`+userImg.Digest+`"`)
	shot, _ := att.Put(context.Background(), []byte("pixels of shot.png"))
	assert.Contains(t, string(logged), `"digest":"`+shot+`"`)
	assert.NotContains(t, string(logged), "not shown")

	// Switching back shows the images again.
	seeing.Push(replay.Response{Text: "back"})
	require.NoError(t, s.SetModel(seeing))
	collect(t, s, context.Background(), "again")
	reqs = seeing.Requests()
	assert.Equal(t, []string{"img:photo.jpg", "img:shot.png"}, requestImages(reqs[len(reqs)-1]))
}

func TestImagesWithoutAttachmentStore(t *testing.T) {
	m := replay.NewScripted(replay.Response{Text: "ok"}).WithInfo(imageInput)
	_, s := newSession(t, agent.WithModel(m))
	runContent(t, s, harness.TextBlock("look"), harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: attdigest.Of(nil), MediaType: "image/png", Name: "a.png"}})
	req := m.Requests()[0]
	assert.Equal(t, []string{"placeholder:a.png"}, requestImages(req))
	assert.Contains(t, mustJSON(req.Messages), "no attachment store is configured")
}

func TestImageBudgetDropsOldestFirst(t *testing.T) {
	var calls []replay.Response
	for i := range 5 {
		calls = append(calls, replay.Call(replay.ToolCall(fmt.Sprint("c", i), "snap", map[string]string{"name": fmt.Sprint("img", i)})))
	}
	calls = append(calls, replay.Response{Text: "done"})
	m := replay.NewScripted(calls...).WithInfo(imageInput)
	_, s := newSession(t, agent.WithModel(m), agent.WithTools(snapTool()),
		agent.WithStores(agent.Stores{Attachments: attachments.NewMemory()}), agent.WithContextPolicy(agent.ContextPolicy{MaxImages: 3}))
	runContent(t, s, harness.TextBlock("take five"))
	reqs := m.Requests()
	require.Len(t, reqs, 6)
	assert.Equal(t, []string{"img:img0", "img:img1", "img:img2"}, requestImages(reqs[3]))
	assert.Equal(t, []string{"placeholder:img0", "img:img1", "img:img2", "img:img3"}, requestImages(reqs[4]))
	assert.Equal(t, []string{"placeholder:img0", "placeholder:img1", "img:img2", "img:img3", "img:img4"}, requestImages(reqs[5]))
	assert.Contains(t, mustJSON(reqs[5].Messages), "one of the oldest images past what a request carries (3 images")

	// A byte budget: each image is 1000 bytes, so 2500 bytes keep two.
	m2 := replay.NewScripted(calls...).WithInfo(imageInput)
	_, s2 := newSession(t, agent.WithModel(m2), agent.WithTools(snapTool()),
		agent.WithStores(agent.Stores{Attachments: attachments.NewMemory()}), agent.WithContextPolicy(agent.ContextPolicy{MaxImageBytes: 2500}))
	runContent(t, s2, harness.TextBlock("take five"))
	last := m2.Requests()[5]
	assert.Equal(t, []string{"placeholder:img0", "placeholder:img1", "placeholder:img2", "img:img3", "img:img4"}, requestImages(last))

	// The history still holds all five.
	assert.Len(t, requestImages(&model.Request{Messages: s2.Messages()}), 5)
	for _, im := range requestImages(&model.Request{Messages: s2.Messages()}) {
		assert.True(t, strings.HasPrefix(im, "img:"), im)
	}
}
