package anthropic_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
)

const testKey = "sk-ant-test-0123456789abcdef"

type (
	reply   = anthropictest.Reply
	message = anthropictest.Message
	block   = anthropictest.Block
)

// fake is the fake endpoint with the tests' helpers.
type fake struct {
	*anthropictest.Server
	t *testing.T
}

func newFake(t *testing.T, replies ...reply) *fake {
	t.Helper()
	srv := anthropictest.NewServer(replies...)
	t.Cleanup(srv.Close)
	return &fake{Server: srv, t: t}
}

// model returns claude-sonnet-5-5 on the fake endpoint, configured by
// cfg (at most one) with the base URL, key and model filled in.
func (f *fake) model(cfg ...anthropic.Config) model.Model {
	f.t.Helper()
	return f.modelNamed("claude-sonnet-5-5", cfg...)
}

func (f *fake) modelNamed(id string, cfg ...anthropic.Config) model.Model {
	f.t.Helper()
	var c anthropic.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.BaseURL, c.APIKey, c.Model = f.URL, testKey, id
	m, err := anthropic.New(c)
	require.NoError(f.t, err)
	f.t.Cleanup(m.(interface{ CloseIdleConnections() }).CloseIdleConnections)
	return m
}

// body returns request i's body decoded.
func (f *fake) body(i int) map[string]any {
	f.t.Helper()
	reqs := f.Requests()
	require.Greater(f.t, len(reqs), i)
	b := reqs[i].JSON()
	require.NotNil(f.t, b, "request %d is not a JSON object: %s", i, reqs[i].Body)
	return b
}

func ok(blocks ...block) reply {
	return reply{Message: &message{Blocks: blocks, Usage: anthropictest.Usage{InputTokens: 10, OutputTokens: 2}}}
}

func text(s string) block { return block{Text: s} }

func toolUse(id, name, input string) block {
	return block{ToolUse: &anthropictest.ToolUse{ID: id, Name: name, Input: input}}
}

// drain runs one Stream call and returns its chunks and error, failing
// the test if anything follows an error or the finish chunk.
func drain(t *testing.T, m model.Model, ctx context.Context, req *model.Request) ([]model.Chunk, error) {
	t.Helper()
	var out []model.Chunk
	var failed error
	for c, err := range m.Stream(ctx, req) {
		require.Nil(t, failed, "nothing may follow an error")
		if err != nil {
			failed = err
			continue
		}
		if len(out) > 0 {
			require.NotEqual(t, model.ChunkFinish, out[len(out)-1].Type, "the finish chunk is last")
		}
		out = append(out, c)
	}
	return out, failed
}

func join(chunks []model.Chunk) *model.Assembler {
	a := &model.Assembler{}
	for _, c := range chunks {
		a.Add(c)
	}
	return a
}

func userText(s string) harness.Message {
	return harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(s)}}
}

func simple() *model.Request { return &model.Request{Messages: []harness.Message{userText("hi")}} }

func call(id, name, args string) harness.Block {
	return harness.Block{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: name, Arguments: args}}
}

func result(id, name string, isErr bool, content ...harness.Block) harness.Message {
	return harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult,
		ToolResult: &harness.ToolResult{CallID: id, Name: name, IsError: isErr, Content: content}}}}
}

// modelErr requires err to be a model error and returns it with its
// provider detail.
func modelErr(t *testing.T, err error) (*harness.Error, *model.ProviderError) {
	t.Helper()
	require.Error(t, err)
	he, ok := err.(*harness.Error)
	require.True(t, ok, "want a *harness.Error, got %T: %v", err, err)
	var pe *model.ProviderError
	errors.As(err, &pe)
	return he, pe
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// memImages is an in-memory image store.
type memImages struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (s *memImages) put(b []byte) string {
	sum := sha256.Sum256(b)
	d := "sha256:" + hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		s.data = map[string][]byte{}
	}
	s.data[d] = b
	return d
}

func (s *memImages) Get(ctx context.Context, digest string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[digest]
	if !ok {
		return nil, fmt.Errorf("no image %s", digest)
	}
	return b, nil
}

var _ = time.Second
