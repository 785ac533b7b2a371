package openaitest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
)

// A scripted reply streams through the real adapter; the server records
// what the adapter sent.
func ExampleNewServer() {
	srv := openaitest.NewServer(openaitest.Reply{Chunks: []openaitest.Chunk{
		{Raw: `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`},
		{Reasoning: "The user greets. "},
		{Text: "Hello"},
		{Text: ", world"},
		{Finish: "stop"},
		{Usage: &harness.Usage{InputTokens: 12, OutputTokens: 3, CacheHitTokens: 8, CacheMissTokens: 4, ReasoningTokens: 2}},
	}})
	defer srv.Close()

	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "test-model"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("hi")}}}}
	var text strings.Builder
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if c.Type == model.ChunkText {
			text.WriteString(c.Text)
		}
	}
	fmt.Println(text.String())

	sent := srv.Requests()[0]
	fmt.Println(sent.Path, sent.Header.Get("Authorization"), sent.JSON()["model"], sent.Messages()[0]["content"])
	// Output:
	// Hello, world
	// /chat/completions Bearer test-key test-model hi
}

// A reply with an error status injects a provider failure; the adapter
// reports it with a code.
func ExampleReply_error() {
	srv := openaitest.NewServer(openaitest.Reply{
		Status: http.StatusUnauthorized,
		Body:   `{"error":{"message":"Authentication Fails, Your api key is invalid","type":"authentication_error"}}`,
	})
	defer srv.Close()

	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "wrong-key", Model: "test-model"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("hi")}}}}
	for _, err := range m.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(harness.CodeOf(err))
		}
	}
	// Output:
	// auth
}
