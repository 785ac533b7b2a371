package openaitest_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/pricing"
)

// A server behind a PrefixCache reports DeepSeek's cache hits and
// misses; the adapter reads them and a price table turns them into
// dollars. The second request repeats the first one's prompt and adds
// to it, so the first one's prompt is a hit.
func ExamplePrefixCache() {
	cache := &openaitest.PrefixCache{}
	answer := openaitest.Reply{Chunks: []openaitest.Chunk{{Text: "noted"}, {Finish: "stop"}}}
	srv := cache.Server(answer, answer)
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "deepseek-flash"})
	if err != nil {
		fmt.Println(err)
		return
	}
	user := func(s string) harness.Message {
		return harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(s)}}
	}
	history := []harness.Message{user(strings.Repeat("Here is the file. ", 500))}
	at := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC) // a weekday's peak hour
	for range 2 {
		var u harness.Usage
		for c, err := range m.Stream(context.Background(), &model.Request{Messages: history}) {
			if err != nil {
				fmt.Println(err)
				return
			}
			if c.Type == model.ChunkUsage {
				u = c.Usage
			}
		}
		cost, _ := pricing.DeepSeek().Cost("deepseek-flash", u, at)
		fmt.Printf("%d prompt tokens, %d cached: $%.6f\n", u.InputTokens, u.CacheHitTokens, cost)
		history = append(history, harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("noted")}}, user("And now?"))
	}
	// Output:
	// 2258 prompt tokens, 0 cached: $0.000680
	// 2277 prompt tokens, 2257 cached: $0.000022
}
