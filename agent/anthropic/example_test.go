package anthropic_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/anthropic"
	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
)

// A model on a Messages API endpoint (here the fake one): thinking and
// text stream as chunks, the thinking block ended by its signature, then
// the usage with the cache reads and writes apart.
func ExampleNew() {
	srv := anthropictest.NewServer(anthropictest.Reply{Message: &anthropictest.Message{
		Blocks: []anthropictest.Block{{Thinking: "A greeting.", Signature: "c2ln"}, {Text: "Hello, world"}},
		Usage:  anthropictest.Usage{InputTokens: 12, CacheReadInputTokens: 2048, CacheCreationInputTokens: 100, OutputTokens: 9},
	}})
	defer srv.Close()

	m, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "claude-sonnet-5-5"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &model.Request{System: "Be brief.", Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("hi")}}}}
	var text strings.Builder
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch c.Type {
		case model.ChunkText:
			text.WriteString(c.Text)
		case model.ChunkReasoning:
			if c.Signature != "" {
				fmt.Println("thinking signed:", c.Signature)
			}
		case model.ChunkUsage:
			fmt.Printf("input %d (cache read %d, written %d), output %d\n",
				c.Usage.InputTokens, c.Usage.CacheHitTokens, c.Usage.CacheWriteTokens, c.Usage.OutputTokens)
		}
	}
	fmt.Println(text.String())
	fmt.Println(srv.Requests()[0].Path, srv.Requests()[0].JSON()["model"])
	// Output:
	// thinking signed: c2ln
	// input 2160 (cache read 2048, written 100), output 9
	// Hello, world
	// /v1/messages claude-sonnet-5-5
}
