package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// randomMessage makes one message of a random kind.
func randomMessage(r *rand.Rand, i int) harness.Message {
	switch r.IntN(6) {
	case 0:
		return harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(fmt.Sprintf("user %d \"q\"", i))}}
	case 1:
		return harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: fmt.Sprintf("think %d", i)},
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read", Arguments: `{"p":1}`}},
		}}
	case 2:
		return harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "ls"}},
		}}
	case 3:
		return harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
			CallID: fmt.Sprintf("c%d", i), Name: "read", Content: []harness.Block{harness.TextBlock(fmt.Sprintf("out %d\n", i))}}}}}
	case 4:
		img := &harness.Image{Digest: "sha256:00", MediaType: "image/png", Size: 10, Name: fmt.Sprintf("i%d.png", i)}
		return harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
			CallID: fmt.Sprintf("c%d", i), Name: "shot", Content: []harness.Block{{Type: harness.BlockImage, Image: img}}}}}}
	default:
		return harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock(fmt.Sprintf("answer %d", i))}}
	}
}

// The cached encoding is always the one a fresh model makes: across
// appends, messages replaced by new content slices, changed tools and
// system prompts, with image messages (never cached) mixed in, and for
// every dialect.
func TestHistoryCacheMatchesAFreshEncoding(t *testing.T) {
	rounds := 40
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		rounds = 600
	}
	for _, d := range []Dialect{DialectDeepSeek, DialectOpenAI, DialectGeneric} {
		t.Run(string(d), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(d))))
			cached, err := newChat(Config{BaseURL: "http://127.0.0.1:1", Model: "deepseek-flash", Dialect: d, Input: []harness.Modality{harness.ModalityImage}})
			require.NoError(t, err)
			req := &model.Request{System: "sys", Tools: []model.Tool{{Name: "read", Parameters: []byte(`{"type":"object"}`)}}}
			for round := range rounds {
				switch op := r.IntN(10); {
				case op < 6 || len(req.Messages) == 0:
					for range 1 + r.IntN(3) {
						req.Messages = append(req.Messages, randomMessage(r, round))
					}
				case op < 8:
					// Change a message the way the loop does: a new
					// content slice.
					i := r.IntN(len(req.Messages))
					m := randomMessage(r, 10_000+round)
					req.Messages[i] = harness.Message{Role: req.Messages[i].Role, Content: m.Content}
				case op == 8:
					req.System = fmt.Sprintf("sys %d", round)
				default:
					req.Tools = []model.Tool{{Name: "read", Description: fmt.Sprint(round), Parameters: []byte(`{"type":"object"}`)}}
				}
				fresh, err := newChat(Config{BaseURL: "http://127.0.0.1:1", Model: "deepseek-flash", Dialect: d, Input: []harness.Modality{harness.ModalityImage}})
				require.NoError(t, err)
				want, n1, err := fresh.body(context.Background(), req)
				require.NoError(t, err)
				got, n2, err := cached.body(context.Background(), req)
				require.NoError(t, err)
				require.Equal(t, string(want.Bytes()), string(got.Bytes()), "round %d", round)
				require.Equal(t, int64(len(got.Bytes())), got.size)
				read, err := io.ReadAll(got.reader())
				require.NoError(t, err)
				require.Equal(t, string(want.Bytes()), string(read))
				require.True(t, json.Valid(read), "%s", read)
				require.Equal(t, n1, n2)
			}
		})
	}
}

// A conversation's cache is its own: two conversations through one
// model, interleaved, each get their own encoding, and so do two models
// of different dialects given the same history.
func TestHistoryCacheKeys(t *testing.T) {
	m, err := newChat(Config{BaseURL: "http://127.0.0.1:1", Model: "x", Dialect: DialectDeepSeek})
	require.NoError(t, err)
	a := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("a")}}}}
	b := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("b")}}}}
	for range 3 {
		ba, _, err := m.body(context.Background(), a)
		require.NoError(t, err)
		require.Contains(t, string(ba.Bytes()), `"content":"a"`)
		bb, _, err := m.body(context.Background(), b)
		require.NoError(t, err)
		require.Contains(t, string(bb.Bytes()), `"content":"b"`)
	}
	withCall := &model.Request{Messages: []harness.Message{{Role: harness.RoleAssistant, Content: []harness.Block{
		{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c", Name: "n", Arguments: "{}"}}}}}}
	body, _, err := m.body(context.Background(), withCall)
	require.NoError(t, err)
	require.Contains(t, string(body.Bytes()), `"reasoning_content":""`)
	// The same content slice, a different dialect: re-encoded.
	require.Zero(t, m.history.conversation(DialectGeneric, withCall.Messages).validPrefix(withCall.Messages))
	require.Equal(t, 1, m.history.conversation(DialectDeepSeek, withCall.Messages).validPrefix(withCall.Messages))
}

// ringLen walks h's ring of conversations, checking its links, and
// returns how many it holds.
func ringLen(t *testing.T, h *historyCache) int {
	t.Helper()
	if h.oldest == nil {
		return 0
	}
	n := 0
	for c := h.oldest; ; c = c.next {
		require.Same(t, c, c.next.prev, "the ring's links agree")
		require.Same(t, c, h.byKey[convKey{dialect: c.dialect, id: c.id}], "every conversation in the ring is in the map")
		n++
		if c.next == h.oldest {
			return n
		}
		require.Less(t, n, maxConversations+1)
	}
}

// TestHistoryCacheManyConversations: a model serving a thousand
// sessions keeps each one's encoding between its steps (it kept eight,
// so every step of a big fleet re-encoded its whole history), and
// drops the least recently used past its bounds.
func TestHistoryCacheManyConversations(t *testing.T) {
	m, err := newChat(Config{BaseURL: "http://127.0.0.1:1", Model: "x", Dialect: DialectDeepSeek})
	require.NoError(t, err)
	reqs := make([]*model.Request, 1000)
	for i := range reqs {
		reqs[i] = &model.Request{Messages: []harness.Message{
			{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(fmt.Sprintf("task %d", i))}},
			{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock(fmt.Sprintf("answer %d", i))}},
		}}
		_, _, err := m.body(context.Background(), reqs[i])
		require.NoError(t, err)
	}
	require.Equal(t, 1000, ringLen(t, &m.history))
	for i, req := range reqs {
		req.Messages = append(req.Messages, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("more")}})
		c := m.history.conversation(DialectDeepSeek, req.Messages)
		require.Equal(t, 2, c.validPrefix(req.Messages), "conversation %d kept its encoding", i)
		body, _, err := m.body(context.Background(), req)
		require.NoError(t, err)
		require.Contains(t, string(body.Bytes()), fmt.Sprintf(`"content":"answer %d"`, i))
		require.Positive(t, c.size.Load(), "its size is noted")
	}
	require.Equal(t, 1000, ringLen(t, &m.history))

	// Past the count, the least recently used goes first: conversation
	// 0 was used longest ago.
	first := keyOf(&reqs[0].Messages[0])
	for i := range maxConversations - 1000 + 1 {
		msgs := []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(fmt.Sprint("filler ", i))}}}
		require.NotNil(t, m.history.conversation(DialectDeepSeek, msgs))
	}
	require.Equal(t, maxConversations, ringLen(t, &m.history))
	require.Nil(t, m.history.byKey[convKey{dialect: DialectDeepSeek, id: first}], "the oldest was dropped")
	second := keyOf(&reqs[1].Messages[0])
	require.NotNil(t, m.history.byKey[convKey{dialect: DialectDeepSeek, id: second}], "the next oldest is kept")

	// Past the bytes, as many of the oldest go as it takes; a used one
	// becomes the newest and stays.
	m.history.conversation(DialectDeepSeek, reqs[1].Messages)
	m.history.byKey[convKey{dialect: DialectDeepSeek, id: keyOf(&reqs[2].Messages[0])}].size.Store(maxCachedBytes)
	m.history.byKey[convKey{dialect: DialectDeepSeek, id: keyOf(&reqs[3].Messages[0])}].size.Store(maxCachedBytes)
	m.history.conversation(DialectDeepSeek, []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("new")}}})
	require.Nil(t, m.history.byKey[convKey{dialect: DialectDeepSeek, id: keyOf(&reqs[2].Messages[0])}], "the big one went")
	require.Nil(t, m.history.byKey[convKey{dialect: DialectDeepSeek, id: keyOf(&reqs[3].Messages[0])}], "and the next, which alone is past the bound too")
	require.NotNil(t, m.history.byKey[convKey{dialect: DialectDeepSeek, id: keyOf(&reqs[1].Messages[0])}], "the one used since stays")
	require.NotNil(t, m.history.byKey[convKey{dialect: DialectDeepSeek, id: keyOf(&reqs[4].Messages[0])}], "and one younger than the big one")
	require.Equal(t, maxConversations-1, ringLen(t, &m.history))
}
